"""Reading ADK's legacy formats: the test file (a list of turns `{query, expected_tool_use,
reference}`, one case named after the file, its session from ADK's session file) and the eval
set (a list of `{name, data: [turns...], initial_session}`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.case import EvalCase, Invocation
from agenteval.casefiles.adk_keys import ADK_METADATA, SESSION_INPUT
from agenteval.casefiles.adk_walk import AdkWalker, adk_metadata
from agenteval.casefiles.positions import Loc
from agenteval.trace import ToolCall

__all__ = ["LegacyReader"]


class LegacyReader(AdkWalker):
    """Reads a legacy test file or eval set: a list, as ADK wrote them before `EvalSet`."""

    def cases(self, data: list[Any], session: Mapping[str, Any] | None) -> list[EvalCase]:
        """The cases of a legacy eval set (each with `data`), or the one of a test file."""
        if not (data and all(isinstance(item, dict) and self.key(item, "data") for item in data)):
            return [self.turns(data, (), self.stem, session)]
        cases: list[EvalCase] = []
        first: dict[str, int] = {}
        for index, item in enumerate(data):
            case = self.legacy_case(item, (index,), session)
            if case.id in first:
                name_key = self.key(item, "name")
                raise self.error(
                    f"the name {case.id!r} is also used by case {first[case.id]}"
                    if name_key is not None
                    else f"the same turns as case {first[case.id]}, so the same id {case.id!r}",
                    (index,) if name_key is None else (index, name_key),
                    case=case.id if name_key is not None else index + 1,
                    hint="give each eval case its own name",
                )
            first[case.id] = index + 1
            cases.append(case)
        return cases

    def legacy_case(
        self, data: dict[str, Any], loc: Loc, session: Mapping[str, Any] | None
    ) -> EvalCase:
        name, name_key = self.get(data, "name")
        label: str | int = loc[-1] + 1 if isinstance(loc[-1], int) else self.stem
        case_id = self.text(name, (*loc, name_key), "name", label) if name is not None else None
        self.known(data, loc, "a legacy eval case", case_id or label)
        own, own_key = self.get(data, "initial_session")
        turns, turns_key = self.get(data, "data")
        own_session = (
            self.mapping(
                own,
                (*loc, own_key),
                "initial_session",
                case_id or label,
                'write {"state": {...}, "app_name": ..., "user_id": ...}',
            )
            if own
            else session
        )
        return self.turns(turns, (*loc, turns_key), case_id, own_session)

    def turns(
        self,
        data: Any,
        loc: Loc,
        case_id: str | None,
        session: Mapping[str, Any] | None,
    ) -> EvalCase:
        label: str | int = case_id or self.stem
        turns = self.items(data, loc, "the turns", label)
        if not turns:
            raise self.error(
                "no turns: a legacy test file is a list of {query, expected_tool_use, reference}",
                loc,
                case=label,
                hint='add a turn: [{"query": "...", "expected_tool_use": [], "reference": "..."}]',
            )
        invocations: list[Invocation] = []
        intermediate: list[list[dict[str, str]]] = []
        for index, turn in enumerate(turns):
            invocation, responses = self.legacy_turn(turn, (*loc, index), label, index + 1)
            invocations.append(invocation)
            intermediate.append(responses)
        metadata: dict[str, Any] = {}
        if session:
            metadata[SESSION_INPUT] = self.session_input(dict(session), (), label)
        adk = adk_metadata([], intermediate)
        if adk:
            metadata[ADK_METADATA] = adk
        fields: dict[str, Any] = {"conversation": invocations, "metadata": metadata}
        if case_id is not None:
            fields["id"] = case_id
        return self.validated(fields, loc, label)

    def legacy_turn(
        self, data: Any, loc: Loc, label: str | int, number: int
    ) -> tuple[Invocation, list[dict[str, str]]]:
        turn = self.checked(
            data,
            loc,
            f"turn {number}",
            "a legacy turn",
            label,
            'write each turn as {"query": "...", "expected_tool_use": [...], "reference": "..."}',
        )
        if "query" not in turn:
            raise self.error(
                f"turn {number} has no query",
                loc,
                case=label,
                hint='add "query": "<what the user says>"',
            )
        query = self.text(turn["query"], (*loc, "query"), "query", label)
        reference = turn.get("reference")
        calls: list[ToolCall] = []
        for where, item in self.entries(
            turn,
            loc,
            "expected_tool_use",
            "an expected tool use",
            "a legacy tool use",
            label,
            'write {"tool_name": "...", "tool_input": {...}}',
        ):
            if "tool_name" not in item:
                raise self.error(
                    "the expected tool use has no tool_name",
                    where,
                    case=label,
                    hint='add "tool_name": "<the tool\'s name>"',
                )
            inputs = item.get("tool_input")
            calls.append(
                ToolCall(
                    name=self.text(item["tool_name"], (*where, "tool_name"), "tool_name", label),
                    arguments=self.mapping(
                        inputs,
                        (*where, "tool_input"),
                        "tool_input",
                        label,
                        "write the arguments as a JSON object",
                    )
                    if inputs is not None
                    else {},
                    result=item.get("mock_tool_output"),
                )
            )
        responses: list[dict[str, str]] = []
        for where, entry in self.entries(
            turn,
            loc,
            "expected_intermediate_agent_responses",
            "an intermediate response",
            "a legacy intermediate response",
            label,
            'write {"author": "...", "text": "..."}',
        ):
            responses.append(
                {
                    "author": str(entry.get("author", "")),
                    "text": self.text(entry.get("text"), (*where, "text"), "text", label),
                }
            )
        fields: dict[str, Any] = {"input": query}
        answer = (
            self.text(reference, (*loc, "reference"), "reference", label) if reference else None
        )
        if answer:
            fields["expected_final_response"] = answer
        if "expected_tool_use" in turn:
            fields["expected_tool_trajectory"] = calls
        return Invocation(**fields), responses
