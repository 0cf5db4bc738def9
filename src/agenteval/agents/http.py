"""HTTP agents: an agent that is a service, called over HTTP.

`agent: {url: http://…}` in agenteval.yaml. For each case (and each user turn of a
conversation) the agent POSTs ``{"input": INPUT}`` as JSON to the URL, where INPUT is the case
input: a string, or the conversation so far as ``[{"role": ..., "content": ...}, ...]``.

The service answers with JSON:

- a string: the final answer;
- an object in agenteval's trial format: ``output`` (the final answer), and optionally
  ``steps`` (``thought``, ``tool_calls``, ``output``), ``tool_calls`` (``name``, ``arguments``,
  ``result``, ``error``, ``duration_s``, ...), ``node_visits``, ``retrieved_docs``,
  ``metadata``, and ``model_calls`` (``model``, ``usage``: ``input_tokens``, ``output_tokens``,
  ...) whose tokens count as the agent's.

A ``text/plain`` answer is taken as the final answer as it is.

While OpenTelemetry captures the run (the SDK installed), each request carries the trial's W3C
trace context (``traceparent``, and ``tracestate`` when set), so the spans the service exports
join the trial's trace: in the user's tracing backend, under the trial's span, and with
`agenteval run --otlp-receiver PORT`, in the trial's record. A header of the same name in
``headers`` wins.

What goes wrong maps to agenteval's failure causes, so the engine retries what a retry may fix
(up to the run's `retries`, honouring ``Retry-After``) and counts each retry by reason:

==============================================  ====================  =========
what happened                                   cause                 retried
==============================================  ====================  =========
429                                             ``rate_limited``      yes
502, 503                                        ``provider_error``    yes
408, 504, or no answer within ``timeout``       ``timeout``           yes
connection refused, reset or dropped            ``connection_error``  yes
500, 501, any other 4xx                         ``agent_error``       no
a 2xx body that is not JSON or lacks ``output``  ``invalid_output``    no
==============================================  ====================  =========

A 500 is the service's own failure on that input, so it is the agent's error, judged like any
other: a service whose failure is transient says so with 503 (and ``Retry-After``). A redirect
that keeps the POST (307, 308) on the same origin is followed (a framework adding its route's
trailing slash); any other 3xx is the agent's error, naming where it pointed.
The agent itself never retries: one request is the whole trial, so retrying the trial is
retrying the request.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agenteval.agents.calling import InvalidOutputError, read_agent_output
from agenteval.agents.propagation import outgoing_trace
from agenteval.errors import ConfigError, InfrastructureError
from agenteval.trace import FailureCause, ModelCall, Trial, Usage

__all__ = [
    "HttpAgent",
    "HttpAgentConfig",
    "HttpAgentConnectionError",
    "HttpAgentError",
    "HttpAgentTimeout",
    "HttpAgentUnavailable",
    "http_agent",
]

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RETRYABLE = frozenset({429, 502, 503})
_TIMEOUTS = frozenset({408, 504})
_BODY_SHOWN = 300
_REDIRECTS = 5
"""Redirects of one POST followed at most (a service redirecting in a loop is its error)."""


class HttpAgentConfig(BaseModel):
    """`agent:` in agenteval.yaml for an HTTP agent (recognised by its `url:`)."""

    model_config = ConfigDict(extra="forbid")

    url: str
    """Where to POST each case input."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request. `${NAME}` in a value is replaced by the environment variable
    NAME, so a token need not be written in the config: `Authorization: Bearer ${AGENT_TOKEN}`."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds to wait for one answer."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value


class HttpAgentError(Exception):
    """The service failed on this input (500, 501, another 4xx): the agent's own error."""

    def __init__(self, message: str, *, reply_status: int | None = None) -> None:
        super().__init__(message)
        # Not `status_code`: the engine must not read this as a provider's transient failure.
        self.reply_status = reply_status


class HttpAgentUnavailable(InfrastructureError):
    """The service refused for now (429, 502, 503); the engine retries, honouring
    `Retry-After`."""

    def __init__(self, message: str, *, status_code: int, headers: Mapping[str, str]) -> None:
        cause = FailureCause.RATE_LIMITED if status_code == 429 else FailureCause.PROVIDER_ERROR
        super().__init__(message, cause=cause)
        self.status_code = status_code
        self.headers = dict(headers)


class HttpAgentTimeout(TimeoutError):
    """No answer in time (the client's timeout, 408 or 504); the engine retries."""

    def __init__(self, message: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.headers = dict(headers or {})


class HttpAgentConnectionError(ConnectionError):
    """The service could not be reached, or dropped the connection; the engine retries."""


def _expand(value: str, name: str) -> str:
    def replace(match: re.Match[str]) -> str:
        variable = match.group(1)
        found = os.environ.get(variable)
        if found is None:
            raise ConfigError(
                f"header {name!r} uses ${{{variable}}}, which is not set",
                field=f"agent.headers.{name}",
                hint=f"export {variable}=...",
            )
        return found

    return _ENV_REFERENCE.sub(replace, value)


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _BODY_SHOWN else text[:_BODY_SHOWN] + "…"


class HttpAgent:
    """An agent behind a URL: an async callable of the case input (see the module)."""

    def __init__(self, config: HttpAgentConfig) -> None:
        self.config = config
        # Resolved once, up front: a missing variable is a config error before the run starts.
        self._headers = {
            "Accept": "application/json",
            **{name: _expand(value, name) for name, value in config.headers.items()},
        }

    @property
    def reference(self) -> str:
        """How a run names this agent: the URL without credentials or query."""
        from agenteval.redaction import public_url

        return f"http:{public_url(self.config.url)}"

    def __repr__(self) -> str:
        return f"HttpAgent({self.reference!r})"

    async def __call__(self, prompt: Any) -> Trial:
        """POST the input; read the answer as a `Trial`, or raise what `classify` reads."""
        import httpx2

        url = self.config.url
        where = self.reference.removeprefix("http:")
        trace_headers, answered = outgoing_trace()
        headers = self._headers
        if trace_headers:
            given = {name.lower() for name in headers}
            headers = {
                **{k: v for k, v in trace_headers.items() if k.lower() not in given},
                **headers,
            }
        try:
            async with httpx2.AsyncClient(timeout=self.config.timeout) as client:
                response = await client.post(url, json={"input": prompt}, headers=headers)
                for _ in range(_REDIRECTS):
                    target = _followed(response)
                    if target is None:
                        break
                    response = await client.post(target, json={"input": prompt}, headers=headers)
                else:
                    if _followed(response) is not None:
                        raise HttpAgentError(
                            f"the agent at {where} redirected more than {_REDIRECTS} times "
                            f"(last to {response.headers['location']})",
                            reply_status=response.status_code,
                        )
        except httpx2.TimeoutException as exc:
            raise HttpAgentTimeout(
                f"no answer from the agent at {where} within {self.config.timeout:g} s"
            ) from exc
        except httpx2.TransportError as exc:
            raise HttpAgentConnectionError(
                f"cannot reach the agent at {where}: {exc or type(exc).__name__}"
            ) from exc
        answered()  # the service got the request: its spans are on their way
        status = response.status_code
        if status >= 300:
            said = f"the agent at {where} answered {status} {response.reason_phrase}".rstrip()
            body = _shown(response.text)
            message = f"{said}: {body}" if body else said
            if status in _RETRYABLE:
                raise HttpAgentUnavailable(message, status_code=status, headers=response.headers)
            if status in _TIMEOUTS:
                raise HttpAgentTimeout(message, headers=response.headers)
            location = response.headers.get("location") if 300 <= status < 400 else None
            if location:
                message += (
                    f" (redirected to {response.url.join(location)}: a redirect that keeps the "
                    "POST (307, 308) on the same origin is followed; give that URL as "
                    "agent.url)"
                )
            raise HttpAgentError(message, reply_status=status)
        return _read(response.headers.get("content-type", ""), response.content, where)


def _followed(response: Any) -> Any:
    """Where a redirect of the POST leads when it is to be followed: a 307 or 308 (which keep
    the method and the body) to the same origin (the configured headers, a token among them,
    go nowhere else); None otherwise. A web framework adding its route's trailing slash
    (`/agent` -> `/agent/`) redirects so."""
    location = response.headers.get("location")
    if response.status_code not in (307, 308) or not location:
        return None
    target = response.url.join(location)
    here = response.url
    if (target.scheme, target.host, target.port) != (here.scheme, here.host, here.port):
        return None
    return target


def _read(content_type: str, body: bytes, where: str) -> Trial:
    """The service's answer as a Trial."""
    text = body.decode("utf-8", "replace")
    if content_type.startswith("text/plain"):
        return Trial(output=text)
    try:
        value = json.loads(text)
    except ValueError:
        raise InvalidOutputError(
            f"the agent at {where} answered with a body that is not JSON: {_shown(text)!r}"
        ) from None
    # Past what Python's parser reads: ~1,000 levels on 3.11, ~10,000 on 3.13.
    except RecursionError:
        raise InvalidOutputError(
            f"the agent at {where} answered with JSON nested too deeply to read: {_shown(text)!r}"
        ) from None
    if not isinstance(value, dict):
        return read_agent_output(value)
    answer = dict(value)
    calls = answer.pop("model_calls", None) or []
    trial = read_agent_output(answer)
    if not calls:
        return trial
    try:
        model_calls = [ModelCall.model_validate(call) for call in calls]
    except ValidationError as exc:
        raise InvalidOutputError(f"the agent's model_calls are not valid: {exc}") from exc
    usage = Usage()
    for call in model_calls:
        usage = usage + call.usage
    return trial.model_copy(update={"model_calls": model_calls, "usage": usage})


def http_agent(spec: HttpAgentConfig | Mapping[str, Any]) -> HttpAgent:
    """The HTTP agent a config mapping (or `HttpAgentConfig`) describes."""
    config = spec if isinstance(spec, HttpAgentConfig) else HttpAgentConfig.model_validate(spec)
    return HttpAgent(config)
