"""Writing a set of cases as ADK's `EvalSet` JSON, which google-adk's models accept and the ADK
reader reads back as the same cases (agenteval's own data goes under the eval case's
`AGENTEVAL_KEY`, the one place ADK keeps extra keys)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agenteval.case import EvalCase, Invocation, Rubric
from agenteval.casefiles.adk_keys import (
    ADK_METADATA,
    AGENTEVAL_KEY,
    CASE_ONLY,
    FINAL_SESSION_STATE,
    SESSION_INPUT,
)
from agenteval.casefiles.adk_scenario import scenario_json, scenario_rest
from agenteval.casefiles.source import write_text
from agenteval.errors import DatasetError
from agenteval.trace import ToolCall

__all__ = ["NamedCases", "adk_json", "write_adk"]


class NamedCases(Protocol):
    """A set of cases with an id, a name and a description: an `EvalSet`, or an `AdkEvalSet`."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str | None: ...

    @property
    def description(self) -> str | None: ...

    @property
    def cases(self) -> list[EvalCase]: ...


def _content(text: str, role: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _rubric(rubric: Rubric) -> dict[str, Any]:
    # ADK's Rubric takes no weight: a weight other than 1 goes to the case's `agenteval` key.
    data: dict[str, Any] = {
        "rubric_id": rubric.rubric_id,
        "rubric_content": {"text_property": rubric.content},
    }
    if rubric.type is not None:
        data["type"] = rubric.type
    return data


def _weights(rubrics: Sequence[Rubric]) -> list[float] | None:
    """The rubrics' weights, when one is not 1 (ADK's Rubric has no weight)."""
    return [r.weight for r in rubrics] if any(r.weight != 1.0 for r in rubrics) else None


def _response(result: Any) -> dict[str, Any]:
    """A tool result as ADK's `FunctionResponse.response`, an object: a result that is not one
    is written `{"result": value}`, as ADK's own tools return it."""
    return result if isinstance(result, dict) else {"result": result}


def _session(session: Any) -> Any:
    """ADK's `SessionInput` requires `app_name` and `user_id`: one not given is written "", as
    ADK's own converter of legacy sessions does."""
    if not isinstance(session, dict):
        return session
    return {"app_name": "", "user_id": "", **session}


def _turns_of(case: EvalCase, file: str) -> list[Invocation]:
    if case.conversation:
        return case.conversation
    if isinstance(case.input, str):
        fields: dict[str, Any] = {"input": case.input}
        if case.expected_output is not None:
            fields["expected_final_response"] = case.expected_output
        if case.expected_trajectory is not None:
            fields["expected_tool_trajectory"] = [
                ToolCall(name=call.name, arguments=call.arguments)
                for call in case.expected_trajectory
            ]
        return [Invocation(**fields)]
    raise DatasetError(
        "this case cannot be written as an ADK eval case: it has no text input or conversation",
        file=file,
        case=case.id,
        hint="ADK eval cases are conversations of text turns",
    )


def _scenario(case: EvalCase, file: str) -> dict[str, Any] | None:
    """A case played by a simulated user alone, as ADK's `conversation_scenario` (None for a
    case with written turns: those are its conversation, its simulated user agenteval's)."""
    simulation = case.user_simulation
    if simulation is None or case.conversation or case.input is not None:
        return None
    scenario = scenario_json(simulation)
    if scenario is None:
        raise DatasetError(
            "this case cannot be written as an ADK eval case: its simulated user has no "
            "starting_prompt or no goal, which ADK's conversation_scenario needs",
            file=file,
            case=case.id,
            hint="give the user_simulation a starting_prompt and a goal",
        )
    return scenario


def _invocation(turn: Invocation, invocation_id: str, said: list[dict[str, str]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if invocation_id:
        data["invocation_id"] = invocation_id
    data["user_content"] = _content(turn.input or "", "user")
    if turn.expected_final_response is not None:
        data["final_response"] = _content(turn.expected_final_response, "model")
    steps: dict[str, Any] = {}
    if "expected_tool_trajectory" in turn.model_fields_set or turn.expected_tool_trajectory:
        steps["tool_uses"] = [
            {**({"id": call.id} if call.id else {}), "name": call.name, "args": call.arguments}
            for call in turn.expected_tool_trajectory
        ]
    responses = [
        {
            **({"id": call.id} if call.id else {}),
            "name": call.name,
            "response": _response(call.result),
        }
        for call in turn.expected_tool_trajectory
        if call.result is not None
    ]
    if responses:
        steps["tool_responses"] = responses
    if said:
        steps["intermediate_responses"] = [[r["author"], [{"text": r["text"]}]] for r in said]
    if steps:
        data["intermediate_data"] = steps
    if turn.rubrics:
        data["rubrics"] = [_rubric(r) for r in turn.rubrics]
    return data


def _turn_extension(turn: Invocation) -> dict[str, Any]:
    """What ADK's Invocation cannot hold (it refuses extra keys), for the case's `agenteval`
    key: the expected node order and the rubrics' weights."""
    extension: dict[str, Any] = {}
    if "expected_node_order" in turn.model_fields_set or turn.expected_node_order:
        extension["expected_node_order"] = list(turn.expected_node_order)
    weights = _weights(turn.rubrics)
    if weights is not None:
        extension["rubric_weights"] = weights
    return extension


def adk_json(eval_set: NamedCases, *, file: str = "<eval set>") -> dict[str, Any]:
    """The set as ADK's `EvalSet` JSON (see `EvalSet.to_adk`); `file` names it in messages."""
    cases: list[dict[str, Any]] = []
    for case in eval_set.cases:
        metadata = dict(case.metadata)
        session = metadata.pop(SESSION_INPUT, None)
        final = metadata.pop(FINAL_SESSION_STATE, None)
        adk = metadata.pop(ADK_METADATA, None) or {}
        scenario = _scenario(case, file)
        turns = [] if scenario is not None else _turns_of(case, file)
        ids: list[str] = list(adk.get("invocation_ids") or [])
        said: list[list[dict[str, str]]] = list(adk.get("intermediate_responses") or [])
        data: dict[str, Any] = {"eval_id": case.id}
        if scenario is not None:
            data["conversation_scenario"] = scenario
        else:
            data["conversation"] = [
                _invocation(
                    turn,
                    ids[i] if i < len(ids) else "",
                    said[i] if i < len(said) else [],
                )
                for i, turn in enumerate(turns)
            ]
        if session is not None:
            data["session_input"] = _session(session)
        if final:
            data["final_session_state"] = final
        if case.rubrics:
            data["rubrics"] = [_rubric(r) for r in case.rubrics]
        # ADK keeps an eval case's extra keys: agenteval's own data goes there.
        if case.tags:
            data["tags"] = list(case.tags)
        if metadata:
            data["metadata"] = metadata
        extension: dict[str, Any] = {}
        turn_extensions = [_turn_extension(turn) for turn in turns]
        if any(turn_extensions):
            extension["turns"] = turn_extensions
        weights = _weights(case.rubrics or [])
        if weights is not None:
            extension["rubric_weights"] = weights
        own = case.model_dump(
            mode="json", include=set(CASE_ONLY), exclude_none=True, exclude_defaults=True
        )
        if scenario is not None and case.user_simulation is not None:
            # The scenario holds the rest; what it cannot hold stays with agenteval's data.
            own.pop("user_simulation", None)
            rest = scenario_rest(case.user_simulation)
            if rest:
                own["user_simulation"] = rest
        if own:
            extension["case"] = own
        if extension:
            data[AGENTEVAL_KEY] = extension
        cases.append(data)
    result: dict[str, Any] = {"eval_set_id": eval_set.id}
    if eval_set.name is not None:
        result["name"] = eval_set.name
    if eval_set.description is not None:
        result["description"] = eval_set.description
    result["eval_cases"] = cases
    return result


def write_adk(eval_set: NamedCases, path: str | Path) -> Path:
    """Write the set as an ADK eval set JSON file and return its path."""
    target = Path(path)
    file = str(target)
    text = json.dumps(adk_json(eval_set, file=file), indent=2, ensure_ascii=False) + "\n"
    return write_text(target, text, file)
