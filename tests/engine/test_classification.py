"""Whose fault a failure is: infrastructure only by type (agenteval's own timeout, the provider
SDKs' and HTTP clients' exception types, Python's `ConnectionError` and `TimeoutError`, and what
the user declares), never by an exception's name or attributes.

The SDK exceptions are the real classes, constructed as the SDKs construct them."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.agents.fakes_http import FakeAgentService, reply
from tests.judge.fakes import http_error

import agenteval
from agenteval import EvalCase, FailureCause, InfrastructureError
from agenteval.engine.failures import classify, retry_after_s
from agenteval.engine.trials import RetryPolicy, run_trial
from agenteval.errors import ConfigError

httpx2 = pytest.importorskip("httpx2")
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai_errors = pytest.importorskip("google.genai.errors")
requests = pytest.importorskip("requests")

FAST_RETRY = RetryPolicy(max_retries=2, initial_wait_s=0.01, max_wait_s=0.05)
NO_RETRY = RetryPolicy(max_retries=0)

AGENT = FailureCause.AGENT_ERROR
RATE = FailureCause.RATE_LIMITED
PROVIDER = FailureCause.PROVIDER_ERROR
CONNECTION = FailureCause.CONNECTION_ERROR
TIMEOUT = FailureCause.TIMEOUT

_REQUEST = httpx2.Request("POST", "https://api.example.com/v1/messages")


def _response(status: int, headers: dict[str, str] | None = None) -> Any:
    return httpx2.Response(status, request=_REQUEST, headers=headers or {}, json={"error": {}})


def _openai(cls: Any, status: int) -> BaseException:
    return cls(f"status {status}", response=_response(status), body=None)  # type: ignore[no-any-return]


def _requests_http_error(status: int) -> BaseException:
    response = requests.Response()
    response.status_code = status
    return requests.exceptions.HTTPError(f"{status}", response=response)  # type: ignore[no-any-return]


def _genai(cls: Any, code: int) -> BaseException:
    return cls(code, {"error": {"code": code, "message": "m", "status": "S"}})  # type: ignore[no-any-return]


# -- the user's own classes


class DatabaseConnectionError(Exception):
    """A name that says "Connection", and nothing more."""


class RateLimitError(Exception):
    """An SDK's class name, in the user's module."""


class GatewayTimeout(Exception):
    """An SDK-looking status attribute on a class of the user's own."""

    def __init__(self) -> None:
        super().__init__("upstream 503")
        self.status_code = 503
        self.code = 503
        self.status = 503


class PoolExhausted(ConnectionError):
    """A subclass of Python's own ConnectionError: a connection error by type."""


class MyTimeout(TimeoutError):
    pass


class Throttled(Exception):
    """A class the user declares as infrastructure."""


CASES: list[tuple[str, BaseException, FailureCause]] = [
    # Python's own, and the user's subclasses of it
    ("ConnectionResetError", ConnectionResetError("reset"), CONNECTION),
    ("BrokenPipeError", BrokenPipeError(), CONNECTION),
    ("PoolExhausted(ConnectionError)", PoolExhausted(), CONNECTION),
    ("TimeoutError", TimeoutError(), TIMEOUT),
    ("MyTimeout(TimeoutError)", MyTimeout(), TIMEOUT),
    # what is not infrastructure, whatever its name or attributes
    ("DatabaseConnectionError", DatabaseConnectionError("db"), AGENT),
    ("user RateLimitError", RateLimitError("no"), AGENT),
    ("status attributes", GatewayTimeout(), AGENT),
    ("sys.exit(503)", SystemExit(503), AGENT),
    ("ValueError", ValueError("x"), AGENT),
    ("OSError", OSError("disk"), AGENT),
    # openai
    ("openai.RateLimitError", _openai(openai.RateLimitError, 429), RATE),
    ("openai.InternalServerError", _openai(openai.InternalServerError, 500), PROVIDER),
    ("openai.InternalServerError 503", _openai(openai.InternalServerError, 503), PROVIDER),
    ("openai.APIConnectionError", openai.APIConnectionError(request=_REQUEST), CONNECTION),
    ("openai.APITimeoutError", openai.APITimeoutError(request=_REQUEST), TIMEOUT),
    ("openai.APIStatusError 408", _openai(openai.APIStatusError, 408), TIMEOUT),
    ("openai.ConflictError 409", _openai(openai.ConflictError, 409), PROVIDER),
    ("openai.APIStatusError 529", _openai(openai.APIStatusError, 529), PROVIDER),
    ("openai.BadRequestError", _openai(openai.BadRequestError, 400), AGENT),
    ("openai.AuthenticationError", _openai(openai.AuthenticationError, 401), AGENT),
    ("openai.NotFoundError", _openai(openai.NotFoundError, 404), AGENT),
    ("openai.UnprocessableEntityError", _openai(openai.UnprocessableEntityError, 422), AGENT),
    # anthropic
    ("anthropic.RateLimitError", _openai(anthropic.RateLimitError, 429), RATE),
    ("anthropic.OverloadedError", _openai(anthropic.OverloadedError, 529), PROVIDER),
    ("anthropic.InternalServerError", _openai(anthropic.InternalServerError, 500), PROVIDER),
    ("anthropic.APIConnectionError", anthropic.APIConnectionError(request=_REQUEST), CONNECTION),
    ("anthropic.APITimeoutError", anthropic.APITimeoutError(request=_REQUEST), TIMEOUT),
    ("anthropic.BadRequestError", _openai(anthropic.BadRequestError, 400), AGENT),
    ("anthropic.PermissionDeniedError", _openai(anthropic.PermissionDeniedError, 403), AGENT),
    # google-genai
    ("genai ServerError 503", _genai(genai_errors.ServerError, 503), PROVIDER),
    ("genai ClientError 429", _genai(genai_errors.ClientError, 429), RATE),
    ("genai ClientError 400", _genai(genai_errors.ClientError, 400), AGENT),
    ("genai ClientError 408", _genai(genai_errors.ClientError, 408), TIMEOUT),
    # httpx2, the HTTP client of the SDKs here
    ("httpx2.ConnectError", httpx2.ConnectError("refused", request=_REQUEST), CONNECTION),
    ("httpx2.ReadError", httpx2.ReadError("reset", request=_REQUEST), CONNECTION),
    ("httpx2.RemoteProtocolError", httpx2.RemoteProtocolError("eof", request=_REQUEST), CONNECTION),
    ("httpx2.ReadTimeout", httpx2.ReadTimeout("slow", request=_REQUEST), TIMEOUT),
    ("httpx2.PoolTimeout", httpx2.PoolTimeout("busy", request=_REQUEST), TIMEOUT),
    ("httpx2.UnsupportedProtocol", httpx2.UnsupportedProtocol("ftp", request=_REQUEST), AGENT),
    (
        "httpx2.HTTPStatusError 429",
        httpx2.HTTPStatusError("429", request=_REQUEST, response=_response(429)),
        RATE,
    ),
    (
        "httpx2.HTTPStatusError 503",
        httpx2.HTTPStatusError("503", request=_REQUEST, response=_response(503)),
        PROVIDER,
    ),
    (
        "httpx2.HTTPStatusError 504",
        httpx2.HTTPStatusError("504", request=_REQUEST, response=_response(504)),
        TIMEOUT,
    ),
    # A provider called with a plain client and `raise_for_status()`: any 5xx is the provider's
    # (a 500 from a provider is no bug of the agent's), any 4xx but 408 and 429 the agent's.
    *[
        (
            f"httpx2.HTTPStatusError {status}",
            httpx2.HTTPStatusError(str(status), request=_REQUEST, response=_response(status)),
            cause,
        )
        for status, cause in [
            (500, PROVIDER),
            (501, PROVIDER),
            (502, PROVIDER),
            (599, PROVIDER),
            (408, TIMEOUT),
            (400, AGENT),
            (401, AGENT),
            (404, AGENT),
            (409, AGENT),
            (422, AGENT),
        ]
    ],
    # requests
    ("requests ConnectionError", requests.exceptions.ConnectionError("refused"), CONNECTION),
    ("requests ProxyError", requests.exceptions.ProxyError("proxy"), CONNECTION),
    ("requests ReadTimeout", requests.exceptions.ReadTimeout("slow"), TIMEOUT),
    ("requests ConnectTimeout", requests.exceptions.ConnectTimeout("slow"), TIMEOUT),
    ("requests HTTPError 429", _requests_http_error(429), RATE),
    ("requests HTTPError 502", _requests_http_error(502), PROVIDER),
    ("requests HTTPError 500", _requests_http_error(500), PROVIDER),
    ("requests HTTPError 503", _requests_http_error(503), PROVIDER),
    ("requests HTTPError 504", _requests_http_error(504), TIMEOUT),
    ("requests HTTPError 408", _requests_http_error(408), TIMEOUT),
    ("requests HTTPError 400", _requests_http_error(400), AGENT),
    ("requests HTTPError 403", _requests_http_error(403), AGENT),
    ("requests HTTPError, no response", requests.exceptions.HTTPError("?"), AGENT),
    ("requests InvalidURL", requests.exceptions.InvalidURL("bad"), AGENT),
    # declared by the user
    ("InfrastructureError", InfrastructureError("db down"), PROVIDER),
    ("InfrastructureError rate", InfrastructureError("quota", cause="rate_limited"), RATE),
    (
        "InfrastructureError connection",
        InfrastructureError("gone", cause=FailureCause.CONNECTION_ERROR),
        CONNECTION,
    ),
]


@pytest.mark.parametrize(
    ("error", "cause"), [(e, c) for _, e, c in CASES], ids=[name for name, _, _ in CASES]
)
def test_a_failure_is_classified_by_its_type(error: BaseException, cause: FailureCause) -> None:
    kind = classify(error)
    assert kind.cause is cause
    assert kind.retryable is cause.is_infrastructure


def test_declared_classes_are_infrastructure_and_their_subclasses_too() -> None:
    class Sub(Throttled):
        pass

    assert classify(Throttled()).cause is AGENT
    assert classify(Throttled(), declared=(Throttled,)).cause is PROVIDER
    assert classify(Sub(), declared=(Throttled,)).cause is PROVIDER
    # A declared class that is also a known kind keeps that kind.
    assert classify(MyTimeout(), declared=(MyTimeout,)).cause is TIMEOUT


def test_an_exception_group_is_infrastructure_only_when_all_of_it_is() -> None:
    limited = _openai(openai.RateLimitError, 429)
    all_infra = ExceptionGroup("tools", [limited, ConnectionResetError()])
    assert classify(all_infra).cause is RATE
    mixed = ExceptionGroup("tools", [limited, ValueError("bug")])
    assert classify(mixed).cause is AGENT
    nested = BaseExceptionGroup("outer", [ExceptionGroup("inner", [TimeoutError()])])
    assert classify(nested).cause is TIMEOUT


def test_infrastructure_error_takes_only_an_infrastructure_cause() -> None:
    with pytest.raises(ValueError, match="agent_error"):
        InfrastructureError("x", cause="agent_error")
    assert not issubclass(InfrastructureError, agenteval.AgentEvalError)


def test_retry_after_in_seconds_milliseconds_or_a_date_and_from_infrastructure_error() -> None:
    seconds = openai.RateLimitError("x", response=_response(429, {"retry-after": "2"}), body=None)
    assert retry_after_s(seconds) == 2.0
    millis = openai.RateLimitError(
        "x", response=_response(429, {"retry-after-ms": "250", "retry-after": "1"}), body=None
    )
    assert retry_after_s(millis) == pytest.approx(0.25)
    dated = openai.RateLimitError(
        "x", response=_response(429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}), body=None
    )
    assert retry_after_s(dated) == 0.0  # a date in the past: no wait
    declared = InfrastructureError("quota", cause="rate_limited", retry_after_s=1.5)
    assert retry_after_s(declared) == 1.5
    assert retry_after_s(ValueError("x")) is None


def test_classifying_imports_no_sdk() -> None:
    import subprocess

    code = (
        "import sys, agenteval\n"
        "from agenteval.engine.failures import classify\n"
        "classify(ValueError()); classify(ConnectionError())\n"
        "loaded = [m for m in ('openai', 'anthropic', 'google.genai', 'httpx', 'httpx2',"
        " 'aiohttp', 'requests') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# -- in a trial: retried or not, counted as what


async def _run(agent: Any, **kw: Any) -> agenteval.Trial:
    kw.setdefault("timeout_s", None)
    kw.setdefault("retry", FAST_RETRY)
    return await run_trial(agent, EvalCase(input="hi"), 0, **kw)


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (_openai(openai.RateLimitError, 429), RATE),
        (_openai(anthropic.InternalServerError, 503), PROVIDER),
        (httpx2.ConnectError("refused", request=_REQUEST), CONNECTION),
        (InfrastructureError("db down", cause="connection_error"), CONNECTION),
    ],
    ids=["openai-429", "anthropic-503", "httpx2-connect", "declared"],
)
async def test_an_infrastructure_failure_is_retried_and_counted_by_reason(
    error: BaseException, cause: FailureCause
) -> None:
    attempts = 0

    def agent(text: str) -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise error
        return "finally"

    trial = await _run(agent)
    assert trial.output == "finally" and trial.failure is None
    assert trial.retries == {cause.value: 2}


def _plain_client_agent(url: str) -> Any:
    """An agent calling its provider with a plain HTTP client, as many do."""

    async def agent(text: str) -> str:
        async with httpx2.AsyncClient() as client:
            response = await client.post(url, json={"input": text})
            response.raise_for_status()
            return str(response.json()["output"])

    return agent


async def test_a_providers_5xx_through_a_plain_http_client_is_retried_not_the_agents() -> None:
    """A real server on 127.0.0.1 answers 500, then 503, then the answer."""
    with FakeAgentService() as provider:
        provider.push(http_error(500), http_error(503), reply({"output": "fine"}))
        trial = await _run(_plain_client_agent(provider.agent_url))
        assert provider.request_count == 3
    assert trial.output == "fine" and trial.failure is None
    assert trial.retries == {"provider_error": 2}


async def test_a_4xx_through_a_plain_http_client_is_the_agents_own_request() -> None:
    with FakeAgentService() as provider:
        provider.push(http_error(400))
        trial = await _run(_plain_client_agent(provider.agent_url))
        assert provider.request_count == 1
    assert trial.failure is not None and trial.failure.cause is AGENT
    assert trial.failure.error_type == "HTTPStatusError" and trial.retries == {}


@pytest.mark.parametrize(
    "error",
    [SystemExit(503), DatabaseConnectionError("db"), GatewayTimeout(), RateLimitError("x")],
    ids=["sys.exit(503)", "DatabaseConnectionError", "status-attributes", "named-RateLimitError"],
)
async def test_an_agents_own_error_is_not_retried_and_is_scored_as_a_failure(
    error: BaseException,
) -> None:
    attempts = 0

    def agent(text: str) -> str:
        nonlocal attempts
        attempts += 1
        raise error

    trial = await _run(agent)
    assert attempts == 1 and trial.retries == {}
    assert trial.failure is not None and trial.failure.cause is AGENT
    assert trial.failure.error_type == type(error).__name__
    assert trial.responded  # scored: the agent's own failure


async def test_declared_infrastructure_errors_reach_the_trial_through_evaluate(
    tmp_path: Path,
) -> None:
    def agent(text: str) -> str:
        raise Throttled("the vector store is busy")

    run = await agenteval.evaluate_async(
        agent,
        [EvalCase(id="a", input="x", expected_output="y")],
        store=tmp_path / "runs.db",
        retries=0,
        infrastructure_errors=[Throttled, f"{__name__}:PoolExhausted"],
    )
    failure = run.results[0].trial.failure
    assert failure is not None and failure.cause is PROVIDER
    assert run.results[0].scores["exact_match"].value is None  # not the agent's: not scored


def test_a_declared_reference_that_does_not_load_is_a_config_error(tmp_path: Path) -> None:
    for refs, message in (
        (["no_such_module_xyz:Thing"], "no_such_module_xyz"),
        ([f"{__name__}:NotThere"], "NotThere"),
        ([f"{__name__}:CASES"], "not an exception class"),
    ):
        with pytest.raises(ConfigError, match=message):
            agenteval.evaluate(
                lambda text: "x",
                [EvalCase(input="x")],
                store=tmp_path / "runs.db",
                infrastructure_errors=refs,
            )


# -- agenteval.yaml


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "agenteval.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_infrastructure_errors_in_the_config_load_as_classes(tmp_path: Path) -> None:
    from agenteval.config import find_target, load_infrastructure_errors

    (tmp_path / "myerrors.py").write_text("class Busy(Exception):\n    pass\n", encoding="utf-8")
    path = _config(
        tmp_path,
        "dataset: cases.yaml\n"
        "infrastructure_errors:\n"
        "  - myerrors.py:Busy\n"
        "  - builtins.OSError\n"
        "  - asyncio:InvalidStateError\n",
    )
    target = find_target(path)
    loaded = load_infrastructure_errors(target)
    assert [cls.__name__ for cls in loaded] == ["Busy", "OSError", "InvalidStateError"]
    assert loaded[2] is asyncio.InvalidStateError


@pytest.mark.parametrize(
    ("entry", "line", "message"),
    [
        ("  - nowhere_module_q:Busy", 4, "nowhere_module_q"),
        ("  - builtins:NoSuchThing", 4, "NoSuchThing"),
        ("  - builtins:len", 4, "not an exception class"),
        ("  - justaname", 4, "module:Class"),
    ],
)
def test_a_declared_class_that_does_not_load_names_the_file_and_line(
    tmp_path: Path, entry: str, line: int, message: str
) -> None:
    from agenteval.config import find_target, load_infrastructure_errors

    path = _config(
        tmp_path, f"dataset: cases.yaml\ninfrastructure_errors:\n  - builtins.OSError\n{entry}\n"
    )
    with pytest.raises(ConfigError, match=message) as raised:
        load_infrastructure_errors(find_target(path))
    assert raised.value.file == str(path)
    assert raised.value.line == line
    assert raised.value.field == "infrastructure_errors[1]"


def test_an_unknown_key_near_infrastructure_errors_is_a_config_error(tmp_path: Path) -> None:
    from agenteval.config import find_target

    path = _config(tmp_path, "dataset: cases.yaml\ninfrastructure_error:\n  - builtins.OSError\n")
    with pytest.raises(ConfigError, match="infrastructure_errors") as raised:
        find_target(path)
    assert raised.value.line == 2


def test_every_known_type_of_an_installed_sdk_names_a_real_class() -> None:
    import importlib

    from agenteval.failures import _KNOWN

    checked = 0
    for module_name, qualname in _KNOWN:
        package = "google.genai" if module_name.startswith("google.genai") else module_name
        package = package.split(".")[0] if package != "google.genai" else package
        try:
            importlib.import_module(package)
        except ImportError:
            continue  # not installed here (httpx, aiohttp): checked against their source
        module = importlib.import_module(module_name)
        cls = getattr(module, qualname)
        assert isinstance(cls, type) and issubclass(cls, BaseException)
        assert (cls.__module__, cls.__qualname__) == (module_name, qualname)
        checked += 1
    assert checked >= 20


def _cli(cwd: Path, *args: str) -> Any:
    import os
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "160", "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
    )


def test_the_cli_runs_with_the_configs_infrastructure_errors(tmp_path: Path) -> None:
    (tmp_path / "busy.py").write_text(
        "class Busy(Exception):\n    pass\n\n"
        "class Bug(Exception):\n    pass\n\n"
        "def agent(text):\n"
        "    raise (Busy if text == 'busy' else Bug)(text)\n",
        encoding="utf-8",
    )
    (tmp_path / "cases.yaml").write_text(
        "- {id: busy, input: busy, expected_output: x}\n"
        "- {id: bug, input: bug, expected_output: x}\n",
        encoding="utf-8",
    )
    _config(
        tmp_path,
        "dataset: cases.yaml\nagent: busy.py:agent\nretries: 0\n"
        "infrastructure_errors:\n  - busy.py:Busy\n",
    )
    done = _cli(tmp_path, "run", ".", "--json", "run.json")
    assert done.returncode == 0, done.stderr
    import json

    report = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    causes = {r["case_id"]: r["failure"]["cause"] for r in report["results"]}
    assert causes == {"busy": "provider_error", "bug": "agent_error"}


def test_the_cli_names_the_file_and_line_of_a_declared_class_that_does_not_load(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.py").write_text("def agent(text):\n    return 'x'\n", encoding="utf-8")
    (tmp_path / "cases.yaml").write_text("- {id: a, input: a}\n", encoding="utf-8")
    path = _config(
        tmp_path,
        "dataset: cases.yaml\nagent: agent.py:agent\n"
        "infrastructure_errors:\n  - builtins.OSError\n  - nowhere_module_q:Busy\n",
    )
    done = _cli(tmp_path, "run", ".")
    assert done.returncode == 2
    assert f"{path.name}:5" in done.stderr and "nowhere_module_q" in done.stderr
    assert "Traceback" not in done.stderr
