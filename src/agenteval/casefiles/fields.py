"""A case's fields as a case file names them: every name a field is given by (its name and
aliases), the model a mapping at a path inside a case is, what other tools call the fields
(`MEANINGS`, for suggestions), and how a message shows a value."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, get_args

from pydantic import AliasChoices, BaseModel

from agenteval.case import EvalCase
from agenteval.casefiles.positions import Loc
from agenteval.suggestions import normalised
from agenteval.validation import describe

__all__ = [
    "CSV_USER_COLUMNS",
    "INPUT_FIELDS",
    "MEANINGS",
    "SCRIPT_PATH",
    "accepted_names",
    "describe",
    "meanings_of",
    "model_at",
    "models_under",
    "noun",
    "other_names",
    "written_as",
]


# The fields that name what the agent is given; a case needs one of them.
INPUT_FIELDS = ("input", "conversation", "user_simulation", "agent_trace")


SCRIPT_PATH: Loc = ("user_simulation", "script")
"""Where a case names its scripted user."""

CSV_USER_COLUMNS = {
    "user_goal": "goal",
    "user_persona": "persona",
    "user_starting_prompt": "starting_prompt",
    "user_max_turns": "max_turns",
    "user_script": "script",
}
"""A CSV file's columns for a case's `user_simulation`, to the field each fills."""

_CSV_COLUMN_OF = {field: column for column, field in CSV_USER_COLUMNS.items()}


def written_as(path: Loc, fmt: str) -> str:
    """How a case file names the field at `path` (dotted): in a CSV file, a `user_simulation`
    field is its own column (`user_max_turns`; the block as a whole, `user_goal`)."""
    if fmt == "csv" and path[:1] == ("user_simulation",):
        if len(path) == 1:
            return "user_goal"
        column = _CSV_COLUMN_OF.get(str(path[1]))
        if column is not None:
            return column
    return ".".join(map(str, path))


def other_names(name: str, alias: Any) -> list[str]:
    """The other names (aliases) a field called `name` is given by."""
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str) and choice != name]
    if isinstance(alias, str) and alias != name:
        return [alias]
    return []


def accepted_names(model: type[BaseModel]) -> dict[str, str]:
    """Every name a field of `model` may be given by (its name and aliases), to the field."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        names[name] = name
        for other in other_names(name, info.validation_alias):
            names[other] = name
    return names


def _model_in(annotation: Any) -> type[BaseModel] | None:
    return next(_walk_annotation(annotation), None)


def model_at(path: Loc) -> type[BaseModel] | None:
    """The model that describes the mapping at `path` inside a case."""
    model: type[BaseModel] | None = EvalCase
    for step in path:
        if isinstance(step, int):
            continue
        if model is None:
            return None
        name = accepted_names(model).get(step)
        if name is None:
            return None
        model = _model_in(model.model_fields[name].annotation)
    return model


def models_under(model: type[BaseModel]) -> list[type[BaseModel]]:
    """`model` and every model its fields hold, each once."""
    found: list[type[BaseModel]] = [model]
    for current in found:
        for info in current.model_fields.values():
            for argument in _walk_annotation(info.annotation):
                if argument not in found:
                    found.append(argument)
    return found


def _walk_annotation(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for argument in get_args(annotation):
        yield from _walk_annotation(argument)


def noun(model: type[BaseModel] | None) -> str:
    """What messages call a mapping described by `model` ("case", "expected call")."""
    if model is None:
        return "mapping"
    if model is EvalCase:
        return "case"
    return re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()


# What other tools (and people) call a case's fields: a suggestion by meaning comes before one
# by spelling (`question` is not `conversation`). A tuple where a name means different fields in
# different places (a case's answer, a conversation turn's answer); only a field of the mapping
# the key is in, that would accept the value, is suggested.
MEANINGS: dict[str, str | tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "question",
            "query",
            "user_input",
            "user_query",
            "instruction",
            "request",
            "messages",
            "user_content",
        ),
        "input",
    ),
    "text": ("input", "content"),
    # A simulated user's fields (`user_simulation:`), some of them the input's names elsewhere.
    **dict.fromkeys(("prompt", "user_message", "user_prompt"), ("input", "starting_prompt")),
    "task": ("input", "goal"),
    **dict.fromkeys(
        (
            "simulated_user",
            "user_sim",
            "simulation",
            "user",
            "user_simulator",
            "simulator",
            "conversation_scenario",
            "scenario",
        ),
        ("user_simulation", "goal"),
    ),
    **dict.fromkeys(
        ("conversation_plan", "plan", "objective", "intent", "user_goal", "mission", "aim"),
        "goal",
    ),
    **dict.fromkeys(
        ("user_persona", "character", "profile", "personality", "user_profile", "behavior"),
        "persona",
    ),
    **dict.fromkeys(
        (
            "first_message",
            "opening_message",
            "initial_message",
            "starting_message",
            "first_prompt",
            "initial_prompt",
            "opening",
            "opener",
            "user_starting_prompt",
        ),
        "starting_prompt",
    ),
    **dict.fromkeys(
        (
            "turns_max",
            "max_user_turns",
            "num_turns",
            "turn_limit",
            "max_rounds",
            "max_messages",
            "max_conversation_turns",
            "max_allowed_invocations",
            "user_max_turns",
        ),
        "max_turns",
    ),
    **dict.fromkeys(
        ("user_script", "script_path", "scripted_user", "user_function", "user_fn", "callable"),
        "script",
    ),
    **dict.fromkeys(
        (
            "expected",
            "answer",
            "expected_answer",
            "ground_truth",
            "groundtruth",
            "reference",
            "reference_answer",
            "expected_response",
            "expected_result",
            "golden_answer",
            "gold",
            "ideal",
            "ideal_answer",
            "target",
            "output",
            "response",
            "final_response",
        ),
        ("expected_output", "expected_final_response"),
    ),
    **dict.fromkeys(
        ("tools", "expected_tool", "tool_calls", "expected_calls", "required_tools"),
        ("expected_tools", "expected_tool_trajectory"),
    ),
    "tool": ("expected_tools", "expected_tool_trajectory", "name"),  # `name` in a call
    **dict.fromkeys(
        ("trajectory", "expected_tool_sequence", "tool_sequence"), "expected_trajectory"
    ),
    **dict.fromkeys(("name", "case_id", "case_name", "key", "uid", "identifier"), "id"),
    **dict.fromkeys(("documents", "docs", "relevant_documents"), "relevant_docs"),
    **dict.fromkeys(
        ("forbidden", "must_not_include", "banned", "forbidden_text"), "must_not_contain"
    ),
    **dict.fromkeys(("must_contain", "required_keywords", "must_include"), "keywords"),
    **dict.fromkeys(("max_calls", "tool_call_budget", "max_tools"), "max_tool_calls"),
    **dict.fromkeys(("dialogue", "dialog"), "conversation"),
    "turns": ("conversation", "max_turns"),
    **dict.fromkeys(("rubric", "criteria"), "rubrics"),
    **dict.fromkeys(("meta", "info", "extra"), "metadata"),
    **dict.fromkeys(("tool_name", "function_name"), "name"),
    "function": ("name", "script"),
    **dict.fromkeys(("params", "parameters", "input_args", "kwargs"), "arguments"),
    **dict.fromkeys(("criterion", "description"), "content"),
    **dict.fromkeys(("mocks", "tool_mock", "mock_tools", "tool_stubs", "stubs"), "tool_mocks"),
    **dict.fromkeys(("mocks_only", "only_mocks", "mocked_only", "strict_mocks"), "tool_mocks_only"),
    **dict.fromkeys(("state", "start_state", "init_state", "session_state"), "initial_state"),
    **dict.fromkeys(("final_state", "end_state", "expected_final_state"), "expected_state"),
}


def meanings_of(key: str) -> tuple[str, ...]:
    """The fields `key` means, by `MEANINGS` (none when it is no known synonym)."""
    meaning = MEANINGS.get(normalised(key), ())
    return (meaning,) if isinstance(meaning, str) else meaning
