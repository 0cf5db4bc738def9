"""Reading the turns of ADK's eval cases: an `Invocation` (the user's content, the final
response, the intermediate data or invocation events with their tool uses and responses, the
rubrics), for `adk_evalset`."""

from __future__ import annotations

from typing import Any

from agenteval.case import Invocation, Rubric
from agenteval.casefiles.adk_walk import AdkWalker, describe_json
from agenteval.casefiles.positions import Loc
from agenteval.trace import ToolCall

__all__ = ["TurnReader"]


class TurnReader(AdkWalker):
    """Reads ADK's `Invocation`s and what they hold."""

    # --- ADK's Invocation

    def invocation(
        self, data: Any, loc: Loc, label: str | int
    ) -> tuple[Invocation, str, list[dict[str, str]]]:
        turn = self.checked(
            data,
            loc,
            "an invocation",
            "an invocation",
            label,
            'write {"user_content": {"parts": [{"text": "..."}]}, ...}',
        )
        user, user_key = self.get(turn, "user_content")
        if user is None:
            raise self.error(
                "the invocation has no user_content",
                loc,
                case=label,
                hint='add "user_content": {"role": "user", "parts": [{"text": "..."}]}',
            )
        question = self.content_text(user, (*loc, user_key), "user_content", label)
        if question is None:
            raise self.error(
                "user_content has no text part: agenteval sends the agent text turns",
                (*loc, user_key),
                case=label,
                hint='give the user turn a {"text": "..."} part',
            )
        final, final_key = self.get(turn, "final_response")
        answer = (
            self.content_text(final, (*loc, final_key), "final_response", label)
            if final is not None
            else None
        )
        calls: list[ToolCall] | None = None
        responses: list[dict[str, str]] = []
        steps, steps_key = self.get(turn, "intermediate_data")
        if steps is not None:
            calls, responses = self.intermediate_data(steps, (*loc, steps_key), label)
        invocation_id, id_key = self.get(turn, "invocation_id")
        rubrics, rubrics_key = self.get(turn, "rubrics")
        nodes, nodes_key = self.get(turn, "expected_node_order")
        # Only what the file states is set: a turn without tool uses expects nothing of the
        # tools (the criteria tell "not stated" from "stated empty").
        fields: dict[str, Any] = {"input": question}
        if answer is not None:
            fields["expected_final_response"] = answer
        if calls is not None:
            fields["expected_tool_trajectory"] = calls
        if nodes is not None:
            fields["expected_node_order"] = [
                self.text(node, (*loc, nodes_key, i), "a node name", label)
                for i, node in enumerate(self.items(nodes, (*loc, nodes_key), "nodes", label))
            ]
        if rubrics is not None:
            fields["rubrics"] = self.rubrics(rubrics, (*loc, rubrics_key), label)
        invocation = Invocation(**fields)
        return (
            invocation,
            self.text(invocation_id, (*loc, id_key), "invocation_id", label)
            if invocation_id is not None
            else "",
            responses,
        )

    def content_text(self, data: Any, loc: Loc, what: str, label: str | int) -> str | None:
        """The text of a genai `Content`: its text parts (thoughts left out), one per line."""
        if isinstance(data, str):
            return data or None
        content = self.checked(
            data,
            loc,
            what,
            "a content",
            label,
            f'write {what} as {{"role": ..., "parts": [{{"text": "..."}}]}}',
        )
        parts, parts_key = self.get(content, "parts")
        texts: list[str] = []
        for index, part in enumerate(self.items(parts, (*loc, parts_key), "parts", label)):
            piece = self.checked(
                part,
                (*loc, parts_key, index),
                "a part",
                "a part",
                label,
                'write each part as {"text": "..."}',
            )
            if piece.get("thought") is True:
                continue
            text = piece.get("text")
            if text is not None:
                texts.append(self.text(text, (*loc, parts_key, index, "text"), "text", label))
        joined = "\n".join(t for t in texts if t)
        return joined or None

    def intermediate_data(
        self, data: Any, loc: Loc, label: str | int
    ) -> tuple[list[ToolCall] | None, list[dict[str, str]]]:
        """The expected tool calls (None when the data states none) and intermediate texts."""
        steps = self.checked(
            data,
            loc,
            "intermediate_data",
            "intermediate_data",
            label,
            'write {"tool_uses": [...], "intermediate_responses": [...]}',
        )
        events, events_key = self.get(steps, "invocation_events")
        if events is not None:
            return self.invocation_events(events, (*loc, events_key), label)
        uses, uses_key = self.get(steps, "tool_uses")
        calls = (
            [
                self.function_call(use, (*loc, uses_key, i), label)
                for i, use in enumerate(self.items(uses, (*loc, uses_key), "tool_uses", label))
            ]
            if uses_key in steps
            else None
        )
        results, results_key = self.get(steps, "tool_responses")
        for i, result in enumerate(
            self.items(results, (*loc, results_key), "tool_responses", label)
        ):
            self.attach_response(calls or [], result, (*loc, results_key, i), label)
        said, said_key = self.get(steps, "intermediate_responses")
        responses: list[dict[str, str]] = []
        for i, entry in enumerate(
            self.items(said, (*loc, said_key), "intermediate_responses", label)
        ):
            where = (*loc, said_key, i)
            if not (isinstance(entry, list) and len(entry) == 2):
                raise self.error(
                    f"an intermediate response should be a pair [author, parts], got "
                    f"{describe_json(entry)}",
                    where,
                    case=label,
                    hint='write ["sub_agent_name", [{"text": "..."}]]',
                )
            author = self.text(entry[0], (*where, 0), "the author", label)
            text = self.content_text({"parts": entry[1]}, (*where, 1), "parts", label)
            if text:
                responses.append({"author": author, "text": text})
        return calls, responses

    def invocation_events(
        self, data: Any, loc: Loc, label: str | int
    ) -> tuple[list[ToolCall], list[dict[str, str]]]:
        calls: list[ToolCall] = []
        responses: list[dict[str, str]] = []
        for i, event in enumerate(self.items(data, loc, "invocation_events", label)):
            where = (*loc, i)
            entry = self.checked(
                event,
                where,
                "an invocation event",
                "an invocation event",
                label,
                'write {"author": ..., "content": {"parts": [...]}}',
            )
            author = entry.get("author")
            content, content_key = self.get(entry, "content")
            if content is None:
                continue
            body = self.checked(
                content,
                (*where, content_key),
                "content",
                "a content",
                label,
                'write {"parts": [...]}',
            )
            parts, parts_key = self.get(body, "parts")
            for j, part in enumerate(
                self.items(parts, (*where, content_key, parts_key), "parts", label)
            ):
                at = (*where, content_key, parts_key, j)
                piece = self.checked(part, at, "a part", "a part", label, 'write {"text": "..."}')
                call, call_key = self.get(piece, "function_call")
                result, result_key = self.get(piece, "function_response")
                if call is not None:
                    calls.append(self.function_call(call, (*at, call_key), label))
                elif result is not None:
                    self.attach_response(calls, result, (*at, result_key), label)
                elif (
                    isinstance(piece.get("text"), str)
                    and piece["text"]
                    and not piece.get("thought")
                ):
                    responses.append({"author": str(author or ""), "text": piece["text"]})
        return calls, responses

    def function_call(self, data: Any, loc: Loc, label: str | int) -> ToolCall:
        use = self.checked(
            data,
            loc,
            "a tool use",
            "a tool use",
            label,
            'write {"name": "tool_name", "args": {...}}',
        )
        name, name_key = self.get(use, "name")
        if name is None:
            raise self.error(
                "the tool use has no name", loc, case=label, hint='add "name": "<the tool\'s name>"'
            )
        args, args_key = self.get(use, "args")
        call_id, _ = self.get(use, "id")
        return ToolCall(
            name=self.text(name, (*loc, name_key), "the tool name", label),
            arguments=self.mapping(
                args, (*loc, args_key), "args", label, "write the arguments as a JSON object"
            )
            if args is not None
            else {},
            id=call_id if isinstance(call_id, str) and call_id else None,
        )

    def attach_response(self, calls: list[ToolCall], data: Any, loc: Loc, label: str | int) -> None:
        """Set the result of the call a tool response answers: by id, else the first call of
        that name still without a result."""
        response = self.checked(
            data,
            loc,
            "a tool response",
            "a tool response",
            label,
            'write {"id": ..., "name": ..., "response": {...}}',
        )
        call_id, name, result = response.get("id"), response.get("name"), response.get("response")
        target = next((c for c in calls if call_id and c.id == call_id), None)
        if target is None:
            target = next((c for c in calls if c.name == name and c.result is None), None)
        if target is not None:
            target.result = result

    def rubrics(self, data: Any, loc: Loc, label: str | int) -> list[Rubric]:
        rubrics: list[Rubric] = []
        for i, entry in enumerate(self.items(data, loc, "rubrics", label)):
            where = (*loc, i)
            if isinstance(entry, str):
                rubrics.append(Rubric(content=entry))
                continue
            rubric = self.checked(
                entry,
                where,
                "a rubric",
                "a rubric",
                label,
                'write {"rubric_id": ..., "rubric_content": {"text_property": "..."}}',
            )
            content, content_key = self.get(rubric, "rubric_content")
            text: Any = None
            if isinstance(content, dict):
                self.known(content, (*where, content_key), "rubric_content", label)
                text, _ = self.get(content, "text_property")
            elif isinstance(content, str):
                text = content
            if not isinstance(text, str) or not text.strip():
                raise self.error(
                    "the rubric has no rubric_content.text_property",
                    (*where, content_key),
                    case=label,
                    hint='write "rubric_content": {"text_property": "<what the answer must do>"}',
                )
            rubric_id, id_key = self.get(rubric, "rubric_id")
            weight = rubric.get("weight", 1.0)
            kind, kind_key = self.get(rubric, "type")
            rubrics.append(
                Rubric(
                    rubric_id=self.text(rubric_id, (*where, id_key), "rubric_id", label)
                    if rubric_id is not None
                    else "",
                    content=text,
                    weight=float(weight) if isinstance(weight, int | float) else 1.0,
                    type=self.text(kind, (*where, kind_key), "type", label) if kind else None,
                )
            )
        return rubrics
