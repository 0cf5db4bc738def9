"""Reading ADK's `EvalSet` (`eval_set_id`, `name`, `description`, `eval_cases`) and its
`EvalCase`s (`eval_id`, `conversation` or a simulated user's `conversation_scenario`
(`adk_scenario`), `session_input`, `final_session_state`, `rubrics`, and what agenteval wrote
under `AGENTEVAL_KEY`); a list of legacy cases or turns goes to `adk_legacy`."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from agenteval.case import EvalCase, Invocation, Rubric
from agenteval.casefiles.adk_keys import (
    ADK_METADATA,
    AGENTEVAL_KEY,
    FINAL_SESSION_STATE,
    SESSION_INPUT,
)
from agenteval.casefiles.adk_legacy import LegacyReader
from agenteval.casefiles.adk_scenario import merged, read_scenario
from agenteval.casefiles.adk_turns import TurnReader
from agenteval.casefiles.adk_walk import AdkEvalSet, adk_metadata, describe_json
from agenteval.casefiles.positions import Loc
from agenteval.user_simulation import UserSimulation

__all__ = ["EvalSetReader"]


class EvalSetReader(TurnReader):
    """Reads an ADK file's data: the current format here, the legacy ones with `LegacyReader`."""

    # --- the whole file

    def eval_set(self, data: Any, session: Mapping[str, Any] | None) -> AdkEvalSet:
        if isinstance(data, list):
            legacy = LegacyReader(self.file, self.line_of, self.stem)
            return AdkEvalSet(self.stem, cases=legacy.cases(data, session))
        if not isinstance(data, dict):
            raise self.error(
                f"expected an ADK eval set (a JSON object), got {describe_json(data)}",
                (),
                hint='an eval set is {"eval_set_id": ..., "eval_cases": [...]}',
            )
        cases_value, cases_key = self.get(data, "eval_cases")
        if cases_value is None and cases_key not in data:
            if self.key(data, "conversation") or self.key(data, "eval_id"):
                raise self.error(
                    "this is a single eval case, not an eval set",
                    (),
                    hint='wrap it: {"eval_set_id": "...", "eval_cases": [ <the case> ]}',
                )
            close = difflib.get_close_matches("eval_cases", [str(k) for k in data], n=1)
            raise self.error(
                'an ADK eval set needs "eval_cases"',
                (close[0],) if close else (),
                hint=f"rename {close[0]!r} to 'eval_cases'"
                if close
                else 'list the cases under "eval_cases"',
            )
        self.known(data, (), "an eval set", None)
        set_id, id_key = self.get(data, "eval_set_id")
        name, name_key = self.get(data, "name")
        description, description_key = self.get(data, "description")
        if session is not None:
            raise self.error(
                "an initial session file only applies to legacy test files",
                (),
                hint="put the session in each case's session_input",
            )
        cases: list[EvalCase] = []
        first: dict[str, int] = {}
        for index, item in enumerate(self.items(cases_value, (cases_key,), "eval_cases", None)):
            case = self.eval_case(item, (cases_key, index), index + 1)
            if case.id in first:
                raise self.error(
                    f"the eval_id {case.id!r} is also used by case {first[case.id]}",
                    (cases_key, index),
                    case=case.id,
                    hint="give each eval case its own eval_id",
                )
            first[case.id] = index + 1
            cases.append(case)
        return AdkEvalSet(
            self.text(set_id, (id_key,), "eval_set_id", None) if set_id is not None else self.stem,
            self.text(name, (name_key,), "name", None) if name is not None else None,
            self.text(description, (description_key,), "description", None)
            if description is not None
            else None,
            cases,
        )

    # --- ADK's EvalCase

    def eval_case(self, data: Any, loc: Loc, number: int) -> EvalCase:
        item = self.mapping(
            data,
            loc,
            "an eval case",
            number,
            'write each case as {"eval_id": ..., "conversation": [...]}',
        )
        eval_id, id_key = self.get(item, "eval_id")
        label: str | int = number
        if eval_id is not None:
            label = self.text(eval_id, (*loc, id_key), "eval_id", number)
        self.known(item, loc, "an eval case", label)
        conversation, conversation_key = self.get(item, "conversation")
        scenario, scenario_key = self.get(item, "conversation_scenario")
        simulation: UserSimulation | None = None
        invocations: list[Invocation] = []
        ids: list[str] = []
        intermediate: list[list[dict[str, str]]] = []
        if scenario is not None:
            if conversation is not None:
                raise self.error(
                    "an eval case has a conversation or a conversation_scenario, not both",
                    (*loc, scenario_key),
                    case=label,
                    hint="keep the written conversation, or the scenario a simulated user plays",
                )
            simulation = read_scenario(self, scenario, (*loc, scenario_key), label)
        elif conversation is None:
            raise self.error(
                "the eval case has no conversation",
                loc,
                case=label,
                hint='add "conversation": [{"user_content": {"parts": [{"text": "..."}]}}] '
                '(or a "conversation_scenario" for a simulated user)',
            )
        else:
            turns = self.items(conversation, (*loc, conversation_key), "conversation", label)
            if not turns:
                raise self.error(
                    "the conversation has no invocations",
                    (*loc, conversation_key),
                    case=label,
                    hint="add at least one invocation with a user_content",
                )
            for index, turn in enumerate(turns):
                invocation, invocation_id, responses = self.invocation(
                    turn, (*loc, conversation_key, index), label
                )
                invocations.append(invocation)
                ids.append(invocation_id)
                intermediate.append(responses)
        metadata: dict[str, Any] = {}
        extra, extra_key = self.get(item, "metadata")
        if extra is not None:
            metadata.update(
                self.mapping(
                    extra, (*loc, extra_key), "metadata", label, "write metadata as a JSON object"
                )
            )
        session, session_key = self.get(item, "session_input")
        if session is not None:
            metadata[SESSION_INPUT] = self.session_input(session, (*loc, session_key), label)
        final, final_key = self.get(item, "final_session_state")
        if final is not None:
            state = self.mapping(
                final,
                (*loc, final_key),
                "final_session_state",
                label,
                "write the expected state as a JSON object",
            )
            if state:  # ADK's default is {}: nothing expected
                metadata[FINAL_SESSION_STATE] = state
        adk = adk_metadata(ids, intermediate)
        if adk:
            metadata[ADK_METADATA] = adk
        rubrics, rubrics_key = self.get(item, "rubrics")
        tags, tags_key = self.get(item, "tags")
        case_rubrics = self.rubrics(rubrics, (*loc, rubrics_key), label) if rubrics else None
        own = item.get(AGENTEVAL_KEY)
        case_only: dict[str, Any] = {}
        if own is not None:
            invocations, case_rubrics, case_only = self.agenteval_key(
                own, (*loc, AGENTEVAL_KEY), label, invocations, case_rubrics
            )
        fields: dict[str, Any] = {
            **case_only,
            "conversation": invocations,
            "metadata": metadata,
            "rubrics": case_rubrics,
        }
        if simulation is not None:
            rest = case_only.pop("user_simulation", None)
            fields["user_simulation"] = (
                merged(simulation, rest) if isinstance(rest, dict) else simulation
            )
        if eval_id is not None:
            fields["id"] = eval_id
        if tags is not None:
            fields["tags"] = [
                self.text(tag, (*loc, tags_key, i), "a tag", label)
                for i, tag in enumerate(self.items(tags, (*loc, tags_key), "tags", label))
            ]
        return self.validated(fields, loc, label)

    def agenteval_key(
        self,
        data: Any,
        loc: Loc,
        label: str | int,
        turns: list[Invocation],
        rubrics: list[Rubric] | None,
    ) -> tuple[list[Invocation], list[Rubric] | None, dict[str, Any]]:
        """The turns and case rubrics with what agenteval wrote under the case's `agenteval`
        key (`AGENTEVAL_KEY`): each turn's node order and rubric weights, the case rubrics'
        weights; and the case's own fields (`CASE_ONLY`)."""
        own = self.checked(
            data, loc, AGENTEVAL_KEY, "the agenteval key", label, 'write {"turns": [{...}, ...]}'
        )
        extensions = self.items(own.get("turns"), (*loc, "turns"), "turns", label)
        if len(extensions) not in (0, len(turns)):
            raise self.error(
                f"{len(extensions)} entries under turns for {len(turns)} invocations",
                (*loc, "turns"),
                case=label,
                hint="give one object per invocation of the conversation ({} for none)",
            )
        updated: list[Invocation] = []
        for index, (turn, extension) in enumerate(zip(turns, extensions, strict=False)):
            where = (*loc, "turns", index)
            entry = self.checked(
                extension, where, "a turn", "an agenteval turn", label, "write {} or an object"
            )
            change: dict[str, Any] = {}
            if "expected_node_order" in entry:
                at = (*where, "expected_node_order")
                nodes = self.items(entry["expected_node_order"], at, "nodes", label)
                change["expected_node_order"] = [
                    self.text(node, (*at, i), "a node name", label) for i, node in enumerate(nodes)
                ]
            if "rubric_weights" in entry:
                change["rubrics"] = self.weighted(
                    turn.rubrics, entry["rubric_weights"], (*where, "rubric_weights"), label
                )
            updated.append(turn.model_copy(update=change) if change else turn)
        if "rubric_weights" in own:
            rubrics = self.weighted(
                rubrics or [], own["rubric_weights"], (*loc, "rubric_weights"), label
            )
        case_only: dict[str, Any] = {}
        if "case" in own:
            case_only = self.checked(
                own["case"],
                (*loc, "case"),
                "case",
                "an agenteval case",
                label,
                "write the case's fields as an object",
            )
        return updated or turns, rubrics, case_only

    def weighted(
        self, rubrics: list[Rubric], data: Any, loc: Loc, label: str | int
    ) -> list[Rubric]:
        weights = self.items(data, loc, "rubric_weights", label)
        if len(weights) != len(rubrics) or not all(
            isinstance(w, int | float) and not isinstance(w, bool) for w in weights
        ):
            raise self.error(
                f"rubric_weights should be {len(rubrics)} numbers, one per rubric",
                loc,
                case=label,
                hint="give each rubric its weight, in the rubrics' order",
            )
        return [
            r.model_copy(update={"weight": float(w)}) for r, w in zip(rubrics, weights, strict=True)
        ]
