"""Which judge an LLM criterion asks: `judge_spec` (from `config.judge_model`), `API_STYLES`,
and `criterion_judge`, which opens it (or lends the run's) for one evaluation.

The judge is, in this order: the one `config.judge_model` names when it was set explicitly;
else the run's judge when the criterion runs inside `agenteval.evaluate(..., judge=...)`; else
`AGENTEVAL_JUDGE`; else the criterion API's default, `gemini-2.5-flash` (`google:gemini-2.5-flash`).
When none can be opened (no SDK, no key) there is no judge, and the reason says how to fix it:
the criterion then gives no score, never a made-up one.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agenteval.criteria.config import CriterionConfig
from agenteval.errors import ConfigError
from agenteval.judge.choice import choose_judge
from agenteval.judge.judge import PROVIDERS, Judge, parse_spec

if TYPE_CHECKING:
    from agenteval.scorers.context import ScoringContext

__all__ = ["API_STYLES", "NO_PROVIDER", "JudgeLease", "criterion_judge", "judge_spec"]

API_STYLES = ("responses", "chat", "chat_completions")
"""The `api_style` values accepted. agenteval's openai judge asks every one of them through chat
completions with a strict JSON-schema verdict (what OpenAI and every OpenAI-compatible server
speak); the anthropic and google judges have one API each and ignore the setting."""

NO_PROVIDER = "No LLM provider available"
"""How a reason starts when no judge could be reached (the criterion API's words for it)."""

# Bare model names, by how they start, and the provider serving them.
_PREFIXES = (
    ("gemini", "google"),
    ("models/gemini", "google"),
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("chatgpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
)
# `provider/model` names as LiteLLM and others write them.
_SLASHED = {
    "gemini": "google",
    "google": "google",
    "vertex_ai": "google",
    "anthropic": "anthropic",
    "openai": "openai",
}


def judge_spec(judge_model: str) -> str:
    """`judge_model` as a `provider:model` judge: kept when it names a provider (`openai:...`),
    read from `provider/model` (`gemini/gemini-2.5-flash`), or told by the model's name:
    `gemini-*` → google, `claude-*` → anthropic, `gpt-*`, `o1`, `o3`, `o4` → openai; any other
    name → openai (an OpenAI-compatible server, `OPENAI_BASE_URL`, serves it).

    Raises `ConfigError` for an empty name or an unknown `provider:`.
    """
    name = judge_model.strip()
    if not name:
        raise ConfigError("judge_model is empty", field="judge_model")
    head, sep, tail = name.partition(":")
    if sep and head in PROVIDERS:
        parse_spec(name)
        return name
    head, sep, tail = name.partition("/")
    if sep and head in _SLASHED and tail:
        return f"{_SLASHED[head]}:{tail}"
    lowered = name.lower()
    for prefix, provider in _PREFIXES:
        if lowered.startswith(prefix):
            return f"{provider}:{name.removeprefix('models/')}"
    return f"openai:{name}"


def _explicit(config: CriterionConfig) -> bool:
    return "judge_model" in config.model_fields_set


@dataclass(frozen=True)
class JudgeLease:
    """The judge for one evaluation, or why there is none."""

    judge: Judge | None
    problem: str | None = None


def _vertex_note(spec: str) -> str:
    if spec.startswith("google:") and os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in (
        "1",
        "true",
        "yes",
    ):
        return (
            " (GOOGLE_GENAI_USE_VERTEXAI is set, but agenteval's google judge talks to the "
            "Gemini API with an API key, not to Vertex AI)"
        )
    return ""


@asynccontextmanager
async def criterion_judge(
    config: CriterionConfig, context: ScoringContext | None
) -> AsyncIterator[JudgeLease]:
    """The judge a criterion with `config` asks (see the module docs), for the time of the
    `async with`: the run's judge is lent, any other is opened here and closed after."""
    explicit = _explicit(config)
    spec = judge_spec(config.judge_model)
    if context is not None:
        run_judge = context.judge
        if run_judge is not None and (not explicit or run_judge.label == spec):
            yield JudgeLease(run_judge)
            return
        if not explicit and context.judge_problem is not None:
            yield JudgeLease(None, f"{NO_PROVIDER}: {context.judge_problem}")
            return
    if not explicit:
        spec = os.environ.get("AGENTEVAL_JUDGE") or spec
    try:
        choice = choose_judge(spec)
    except ConfigError as exc:
        yield JudgeLease(None, f"{NO_PROVIDER}: {exc.message}")
        return
    try:
        if choice.judge is None:
            problem = choice.problem or f"judge {spec} could not be opened"
            yield JudgeLease(None, f"{NO_PROVIDER}: {problem}{_vertex_note(spec)}")
        else:
            yield JudgeLease(choice.judge)
    finally:
        await choice.aclose()
