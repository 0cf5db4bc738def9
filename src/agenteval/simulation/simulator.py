"""`UserSimulator`: a model that plays a case's user, one structured reply a turn.

It is an `agents.users.User` by shape (a `label`, an async `reply(request)`), asked by the
attempt's `UserSession` for each next message. Each reply is one ask of the judge's sampling
path (`judge.sampling.Sampler`): the same provider clients, limits, retries by reason and
content-addressed cache, the cache file shared with the judge under keys of its own. The key
holds the provider, model, parameters, the prompt template's id and version, the case's
simulation (goal, persona, starting prompt, extra), the conversation so far and the trial
index: a second run of a deterministic agent reads every reply from the cache, and each trial
of a case is its own sample.

Secrets: every text the simulator is given (the goal, the persona, the conversation, which
holds the agent's answers) is redacted before the key is made and the request built, so a
secret in an agent's answer never reaches the simulator's provider, its cache, or its record.
Every part written by others is fenced as the judge fences (`judge.templates.fence`).

Failures are never the agent's: a malformed reply is asked again once, then
`UserSimulatorError` (`user_simulator_error`) naming what was wrong, as is a refusal; a
provider that stays unreachable after the retries is `UserSimulatorError` with the failure's
cause (`rate_limited`, with the wait the provider asked for; `provider_error`;
`connection_error`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agenteval.errors import ConfigError, UserSimulatorError
from agenteval.judge.cache import cache_key
from agenteval.judge.judge import JudgeConfig, parse_spec
from agenteval.judge.provider import JudgeRequest
from agenteval.judge.sampling import Reading, Sampler
from agenteval.judge.templates import fence
from agenteval.pricing import PriceTable
from agenteval.retry import RetryPolicy
from agenteval.simulation.reply import REPLY_SCHEMA, SimulatorPrompt, SimulatorReply, load_prompt
from agenteval.trace import EndReason, FailureCause, ModelCall, Usage
from agenteval.user_simulation import UserReply, UserRequest

__all__ = ["UserSimulator", "UserSimulatorConfig", "plan_text"]

_KEY_PURPOSE = "agenteval.user_simulator"
"""Put in every simulator key's inputs: a judge's key never holds it, so the two never meet in
the cache file they share."""

_REFUSED = frozenset({"content_filter", "refusal", "SAFETY", "PROHIBITED_CONTENT"})
"""Finish reasons of the three providers that say the model refused (a content filter)."""

_PLAN_KEYS = ("conversation_plan", "plan")
_INSTRUCTION_KEYS = ("instructions", "custom_instructions")


@dataclass(frozen=True)
class UserSimulatorConfig(JudgeConfig):
    """How to simulate users: the model (`provider:model`), its parameters, limits, retries and
    cache, as a `JudgeConfig` says them for the judge."""

    def __post_init__(self) -> None:
        try:
            parse_spec(self.spec)
        except ConfigError as exc:
            raise ConfigError(
                f"{self.spec!r} is not a user simulator",
                field="user_simulator",
                hint=exc.hint,
            ) from None


def plan_text(extra: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The plan and the further instructions another format gave for the user (`extra`, as
    `UserSimulation.extra` keeps it): a `conversation_plan` / `plan` text, and every
    `instructions` / `custom_instructions` text, wherever in `extra` it sits, joined (each
    text once)."""
    plans: list[str] = []
    instructions: list[str] = []

    def visit(value: Any, depth: int) -> None:
        if depth > 8 or not isinstance(value, Mapping):
            return
        for key, item in value.items():
            if isinstance(item, str) and item.strip():
                # A text kept in two places (ADK's custom_instructions, also kept whole in
                # its user_simulator_config) is said once.
                found = plans if key in _PLAN_KEYS else instructions
                if key in _PLAN_KEYS + _INSTRUCTION_KEYS and item.strip() not in found:
                    found.append(item.strip())
            else:
                visit(item, depth + 1)

    visit(extra, 0)
    return ("\n\n".join(plans) or None, "\n\n".join(instructions) or None)


class UserSimulator:
    """The run's simulated user: a model asked for one structured reply a turn."""

    limits_itself = True
    """Each call has its timeout and its retries (`UserSession.reply_limit_s`): a wait the
    provider asks for (a 429's Retry-After) may outlast the agent's time limit."""

    def __init__(self, sampler: Sampler, prompt: SimulatorPrompt | None = None) -> None:
        self.sampler = sampler
        self.prompt = prompt or load_prompt()

    @classmethod
    def open(
        cls,
        config: JudgeConfig,
        *,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
    ) -> UserSimulator:
        """The simulator `config` describes. Raises `ProviderUnavailable` (naming the fix) when
        the provider's SDK or API key is missing."""
        return cls(Sampler.open(config, prices=prices, retry=retry))

    @property
    def config(self) -> JudgeConfig:
        """The simulator's model and settings."""
        return self.sampler.config

    @property
    def label(self) -> str:
        """The simulator's `provider:model`, as the trial names its user."""
        return self.sampler.config.spec

    async def aclose(self) -> None:
        """Close the provider's connections and the cache."""
        await self.sampler.aclose()

    def _inputs(self, request: UserRequest) -> dict[str, Any]:
        """What the reply depends on, redacted: the case's simulation and the conversation."""
        redact = self.sampler.redact_block
        simulation = request.simulation
        return {
            "purpose": _KEY_PURPOSE,
            "simulation": {
                "goal": redact(simulation.goal or ""),
                "persona": None if simulation.persona is None else redact(simulation.persona),
                "starting_prompt": (
                    None
                    if simulation.starting_prompt is None
                    else redact(simulation.starting_prompt)
                ),
                "extra": _redacted(simulation.extra, redact),
            },
            "conversation": [
                {"role": str(m.get("role", "")), "content": redact(str(m.get("content", "")))}
                for m in request.messages
            ],
        }

    def _request(self, inputs: Mapping[str, Any]) -> JudgeRequest:
        simulation: dict[str, Any] = inputs["simulation"]
        blocks: dict[str, str] = {"goal": fence("goal", simulation["goal"])}
        if simulation["persona"]:
            blocks["persona"] = fence("persona", simulation["persona"])
        plan, instructions = plan_text(simulation["extra"])
        if plan:
            blocks["plan"] = fence("plan", plan)
        if instructions:
            blocks["instructions"] = fence("instructions", instructions)
        if inputs["conversation"]:
            blocks["conversation"] = fence("conversation", _transcript(inputs["conversation"]))
        redact = self.sampler.redact
        config = self.sampler.config
        return JudgeRequest(
            model=config.model,
            system=redact(self.prompt.system),
            user=redact(self.prompt.render(blocks)),
            schema_name="user_reply",
            verdict_schema=REPLY_SCHEMA,
            params=dict(config.params),
            timeout_s=config.timeout_s,
        )

    async def reply(self, request: UserRequest) -> UserReply:
        """The user's next message, or its stop; raises `UserSimulatorError` when the model
        cannot say (see the module's docs)."""
        config = self.sampler.config
        inputs = self._inputs(request)
        key = cache_key(
            provider=config.provider,
            model=config.model,
            params=config.params,
            template_id=self.prompt.id,
            template_version=self.prompt.version,
            inputs=inputs,
            sample_index=request.trial,
        )
        reading: Reading[SimulatorReply] = Reading(
            read=SimulatorReply.model_validate,
            keep=lambda reply: reply.model_dump(),
            invalid="invalid_reply",
            root="reply",
            refused=_REFUSED,
            missing="no structured reply (finish_reason {finish_reason}; the model said: {raw})",
        )
        asked = await self.sampler.ask(key, lambda: self._request(inputs), reading)
        # What the provider answered is spent, read or not (an unreadable reply asked twice
        # gave usage too); a provider that answered nothing (429s, 5xx) spent nothing.
        spent = not asked.cached and (
            asked.value is not None or asked.cause is None or asked.usage != Usage()
        )
        calls = (
            [
                ModelCall(
                    model=asked.model or config.model,
                    provider=config.provider,
                    usage=asked.usage,
                    usage_recorded=asked.usage_recorded,
                )
            ]
            if spent
            else []
        )
        # An answer without token usage cost something unknown: no cost, never $0.
        metered = spent and asked.usage_recorded
        cost = self.sampler.prices.cost(config.model, asked.usage) if metered else None
        if asked.value is None:
            where = f"the user simulator {self.label} (case {request.case_id!r})"
            if asked.cause is not None:
                # A cause that is not infrastructure (the provider refused the request itself:
                # a 400, 401, 404) is still the simulator's failure, never the agent's.
                raise UserSimulatorError(
                    f"{where}: {asked.error}",
                    cause=(
                        asked.cause
                        if asked.cause.is_infrastructure
                        else FailureCause.USER_SIMULATOR_ERROR
                    ),
                    retry_after_s=asked.retry_after_s,
                    model_calls=calls,
                    cost_usd=cost,
                )
            raise UserSimulatorError(
                f"{where} gave no usable reply, twice: {asked.error}",
                model_calls=calls,
                cost_usd=cost,
            )
        value = asked.value
        detail = self.sampler.redact(value.reasoning) or None
        if value.action == "message":
            return UserReply(
                message=self.sampler.redact(value.message),
                detail=detail,
                model_calls=calls,
                cached=asked.cached,
                cost_usd=cost,
            )
        return UserReply(
            stop=EndReason(value.action),
            detail=detail,
            model_calls=calls,
            cached=asked.cached,
            cost_usd=cost,
        )


def _transcript(messages: list[dict[str, str]]) -> str:
    """The conversation as the simulator reads it: `USER:` / `AGENT:` lines, oldest first."""
    names = {"user": "USER", "assistant": "AGENT"}
    return "\n\n".join(
        f"{names.get(m['role'], m['role'].upper() or 'OTHER')}: {m['content']}" for m in messages
    )


def _redacted(value: Any, redact: Any, depth: int = 0) -> Any:
    """`extra` with every text in it redacted (kept as given otherwise)."""
    if isinstance(value, str):
        return redact(value)
    if depth > 32:
        return redact(json.dumps(value, default=str))
    if isinstance(value, Mapping):
        return {str(k): _redacted(v, redact, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v, redact, depth + 1) for v in value]
    return value
