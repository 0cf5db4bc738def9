"""The keys of Google ADK's eval files: those ADK's eval set models accept, level by level, with
the check that refuses the others, and the keys agenteval adds (`AGENTEVAL_KEY`, and the
`EvalCase.metadata` keys ADK's data lands under).

ADK's models (google-adk 2.13, `google.adk.evaluation` and `google.genai.types`) forbid extra
keys almost everywhere, so a misspelt key (`final_respons`, `intermediate_dat`, `arg`) is an
error in ADK. Read silently, it would drop an expectation and let a wrong agent pass, so the
reader refuses it too, naming the key and the one most likely meant.

Every key is accepted in snake_case and in ADK's camelCase alias (`final_response`,
`finalResponse`). Four levels take extra keys in ADK (the eval set ignores them, the eval case
and the session input keep them, an invocation event ignores them): there, a key is refused
only when it is a near miss of a known one (a misspelling), and any other key is accepted as
ADK accepts it. `tests/evalset/test_adk_keys.py` checks these tables against the installed
google-adk's models.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ADK_METADATA",
    "AGENTEVAL_KEY",
    "CASE_ONLY",
    "FINAL_SESSION_STATE",
    "LEVELS",
    "SESSION_INPUT",
    "Level",
    "UnknownKey",
    "camel",
    "unknown_key",
]

SESSION_INPUT = "session_input"
"""`EvalCase.metadata` key of ADK's `session_input`: `app_name`, `user_id`, `session_id`, and
the initial `state`."""

FINAL_SESSION_STATE = "final_session_state"
"""`EvalCase.metadata` key of the session state the case expects at the end of the conversation."""

AGENTEVAL_KEY = "agenteval"
"""The eval case key under which agenteval writes what ADK's schema has no place for (ADK keeps
an eval case's extra keys, and refuses them everywhere below): per turn (`turns`, one object a
turn) the `expected_node_order` and the `rubric_weights`; the case rubrics' `rubric_weights`;
and under `case` the `EvalCase` fields ADK has no field for (`CASE_ONLY`)."""

ADK_METADATA = "adk"
"""`EvalCase.metadata` key of ADK's other per-turn fields: `invocation_ids` and
`intermediate_responses` (per turn, a list of `{author, text}`)."""


def camel(name: str) -> str:
    """ADK's camelCase alias of a snake_case field name (`final_response` → `finalResponse`)."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class Level:
    """One kind of JSON object in an ADK file: what it is called in messages, the fields it
    takes, and whether ADK refuses other keys there (`strict`) or accepts them."""

    what: str
    fields: tuple[str, ...]
    strict: bool = True
    names: frozenset[str] = field(init=False, repr=False)
    """Every key taken: each field in snake_case and in camelCase."""

    def __post_init__(self) -> None:
        names = frozenset(n for f in self.fields for n in (f, camel(f)))
        object.__setattr__(self, "names", names)


# Fields of ADK's models, in ADK's order; the comments say which model.
_PART = (  # google.genai.types.Part
    "media_resolution",
    "code_execution_result",
    "executable_code",
    "file_data",
    "function_call",
    "function_response",
    "inline_data",
    "text",
    "thought",
    "thought_signature",
    "video_metadata",
    "tool_call",
    "tool_response",
    "part_metadata",
    "audio_transcription",
    "media_processing",
    "speech_metadata",
)

CASE_ONLY = (
    "expected_tools",
    "max_tool_calls",
    "relevant_docs",
    "must_not_contain",
    "keywords",
    "context",
    "agent_trace",
    "tool_mocks",
    "tool_mocks_only",
    "initial_state",
    "expected_state",
    "user_simulation",
)
"""The `EvalCase` fields ADK has no field for: written under the eval case's `agenteval` key."""

LEVELS: dict[str, Level] = {
    level.what: level
    for level in (
        # eval_set.EvalSet: a plain pydantic model, extra keys ignored.
        Level(
            "an eval set",
            ("eval_set_id", "name", "description", "eval_cases", "creation_timestamp"),
            strict=False,
        ),
        # eval_case.EvalCase (extra keys kept); `tags`, `metadata` and `agenteval` are
        # agenteval's own data, written there because ADK keeps them.
        Level(
            "an eval case",
            (
                "eval_id",
                "conversation",
                "conversation_scenario",
                "session_input",
                "creation_timestamp",
                "rubrics",
                "final_session_state",
                "tags",
                "metadata",
                "agenteval",
            ),
            strict=False,
        ),
        # eval_case.Invocation; `expected_node_order` is where earlier agenteval versions wrote
        # a turn's node order (ADK refuses it), read back so those files still load.
        Level(
            "an invocation",
            (
                "invocation_id",
                "user_content",
                "final_response",
                "intermediate_data",
                "creation_timestamp",
                "duration",
                "model_duration",
                "tool_duration",
                "rubrics",
                "app_details",
                "expected_node_order",
            ),
        ),
        # eval_case.IntermediateData or eval_case.InvocationEvents (a union in ADK).
        Level(
            "intermediate_data",
            ("tool_uses", "tool_responses", "intermediate_responses", "invocation_events"),
        ),
        # eval_case.InvocationEvent: extra keys ignored (ADK's web editor adds some).
        Level(
            "an invocation event",
            ("author", "content", "grounding_metadata", "usage_metadata", "model_version"),
            strict=False,
        ),
        Level("a content", ("parts", "role")),  # genai Content
        Level("a part", _PART),  # genai Part
        # genai FunctionCall (a tool use)
        Level("a tool use", ("id", "args", "name", "partial_args", "will_continue")),
        # genai FunctionResponse
        Level(
            "a tool response",
            ("will_continue", "scheduling", "parts", "id", "name", "response"),
        ),
        # eval_case.SessionInput: extra keys kept.
        Level("session_input", ("app_name", "user_id", "session_id", "state"), strict=False),
        # conversation_scenarios.ConversationScenario (an EvalBaseModel: extra keys refused).
        Level(
            "a conversation scenario",
            ("starting_prompt", "conversation_plan", "user_persona"),
        ),
        # user_simulator_personas.UserPersona and UserBehavior: plain pydantic models, extra
        # keys ignored.
        Level("a user persona", ("id", "description", "behaviors"), strict=False),
        Level(
            "a user behavior",
            ("name", "description", "behavior_instructions", "violation_rubrics"),
            strict=False,
        ),
        # simulation.llm_backed_user_simulator.LlmBackedUserSimulatorConfig, in an eval config
        # (`test_config.json`): extra keys allowed by ADK's base config.
        Level(
            "user_simulator_config",
            (
                "type",
                "model",
                "model_configuration",
                "max_allowed_invocations",
                "custom_instructions",
                "include_function_calls",
            ),
            strict=False,
        ),
        # eval_rubrics.Rubric; `weight` as earlier agenteval versions wrote it, read back.
        Level("a rubric", ("rubric_id", "rubric_content", "description", "type", "weight")),
        Level("rubric_content", ("text_property",)),  # eval_rubrics.RubricContent
        # The legacy formats ADK converts (agent_evaluator.py, evaluation_constants.py).
        Level(
            "a legacy turn",
            ("query", "expected_tool_use", "reference", "expected_intermediate_agent_responses"),
        ),
        Level("a legacy tool use", ("tool_name", "tool_input", "mock_tool_output")),
        Level("a legacy eval case", ("name", "data", "initial_session")),
        Level("a legacy intermediate response", ("author", "text")),
        # agenteval's own key in an eval case (`adk.AGENTEVAL_KEY`) and its turns.
        Level("the agenteval key", ("turns", "rubric_weights", "case")),
        Level("an agenteval case", CASE_ONLY),
        Level("an agenteval turn", ("expected_node_order", "rubric_weights")),
    )
}

# A near miss: close enough to a known key to be a misspelling of it (difflib's ratio; `arg` for
# `args` is 0.86, `final_respons` for `final_response` 0.96, `notes` for `name` 0.44).
_NEAR = 0.75


@dataclass(frozen=True)
class UnknownKey:
    """A key a level does not take, the key most likely meant (None when none is close), and
    the keys the level takes (for the message)."""

    key: str
    meant: str | None
    known: tuple[str, ...]


def unknown_key(mapping: Mapping[str, Any], what: str) -> UnknownKey | None:
    """The first key of `mapping` that ADK's `what` does not take, or None when all are taken.

    At a level that accepts extra keys (`Level.strict` false), only a near miss of a known key
    counts as unknown."""
    level = LEVELS[what]
    for key in mapping:
        name = str(key)
        if name in level.names:
            continue
        meant = _closest(name, level.fields, 0.6 if level.strict else _NEAR)
        if level.strict or meant is not None:
            return UnknownKey(name, meant, level.fields)
    return None


def _closest(key: str, fields: Iterable[str], cutoff: float) -> str | None:
    """The field `key` most likely means, in the style `key` is written in (camelCase when the
    key has capitals)."""
    written = {camel(f) if any(c.isupper() for c in key) else f: f for f in fields}
    matches = difflib.get_close_matches(key, list(written), n=1, cutoff=cutoff)
    if not matches:  # `final_respons` vs `finalResponse`: compare case-folded too
        folded = {k.replace("_", "").lower(): k for k in written}
        near = difflib.get_close_matches(
            key.replace("_", "").lower(), list(folded), n=1, cutoff=cutoff
        )
        matches = [folded[near[0]]] if near else []
    return matches[0] if matches else None
