"""Tool calls rebuilt from model-call messages, for traces whose instrumentation writes no tool
spans (openai-v2, OpenInference's and OpenLLMetry's openai instrumentations: one span per model
call, nothing for the tool the application ran in between).

**Tool spans win when both exist, never counted twice.** When a trial's spans hold any tool
span, the tool spans are the record of its tool calls: the messages add no call, they only fill
a tool span's missing id, arguments or result, matched by call id (a tool span without an id
takes the id of the first requested call of the same name no other tool span claimed). Only
when the spans hold no tool span at all are the calls rebuilt from the messages:

- a call is one `tool_call` part (or its family's equivalent) of a model's *response*, in the
  order of the requesting model call's start, then of its position in the message;
- the same call id seen twice counts once (a call without an id is told apart by position),
  unless a request already carried that id's result back: then the model asked again, a new
  call, whose result is the last of that id in the next request (the official google-genai
  instrumentation names Gemini's id-less calls `{name}_{position}`, the same in every round);
- its result is the `tool_call_response` with its id in any later request (each request
  repeats every earlier result: the first one read is kept), None when none carries it (the
  calls of the final response, or a trace cut short);
- when no id matches, a response's calls take the results the next request brought, in order,
  if it brought as many as there were calls and none of them answers a known call id: so
  OpenLLMetry 0.62's Responses API spans, which name a call by its item id (`fc_...`) and its
  result by its call id (`call_...`), still pair each call with its result (and the call takes
  the call id, the one the API and the other families use);
- it starts when the requesting model call ended; its duration is unknown (None): the next
  model call's start also counts the agent's own work, so it would overstate the tool's time;
- the OpenAI chat API has no error channel for a tool result, so a failure shows only in its
  result text, kept as it is; Anthropic's has one (`tool_result` with `is_error: true`): a
  result flagged so (`Messages.failed`) is also the call's error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from agenteval.trace import ToolCall

from .messages import Messages, merge_messages, read_messages
from .spans import SpanRecord
from .values import json_or_value

__all__ = [
    "ModelTurn",
    "fill_from_messages",
    "one_per_response",
    "rebuild_tool_calls",
    "results_by_id",
]


@dataclass(frozen=True)
class ModelTurn:
    """One model call: its spans, innermost first (instrumentations nested around one call:
    pydantic-ai's span around openai-v2's)."""

    spans: tuple[SpanRecord, ...]

    @property
    def span(self) -> SpanRecord:
        """The innermost span: the call's timing and status."""
        return self.spans[0]

    @cached_property
    def messages(self) -> Messages:
        """What the spans' messages say together, read on first use: a trial whose tool spans
        are complete needs only its last model call's (for the answer)."""
        return merge_messages([read_messages(span) for span in self.spans])


RESPONSE_ID = "gen_ai.response.id"


def _response_id(span: SpanRecord) -> str | None:
    """The provider's id of the response a model span records: `gen_ai.response.id`, else the
    `id` of OpenInference's raw response (`output.value`, the response's JSON)."""
    value = span.attributes.get(RESPONSE_ID)
    if isinstance(value, str) and value:
        return value
    raw = span.attributes.get("output.value")
    if isinstance(raw, str) and raw.startswith("{"):
        parsed = json_or_value(raw)
        if isinstance(parsed, dict) and isinstance(parsed.get("id"), str) and parsed["id"]:
            return str(parsed["id"])
    return None


def one_per_response(turns: Sequence[ModelTurn]) -> list[ModelTurn]:
    """The turns (by start), those whose innermost spans overlap in time and name the same
    response (`_response_id`) as one, the later-started span (the one nearer the wire) first.

    The anthropic SDK (2.x) traces its own API calls: a span per call with the tokens and the
    stop reason, whatever instrumentation also runs. OpenLLMetry's Anthropic instrumentation,
    and OpenInference's on a streamed call (`messages.stream`), do not make their span
    current, so the SDK's span is their sibling, not their child: two innermost model spans
    for one call, which counted the call, its tokens and its cost twice. A response id is the
    provider's, one per response: two spans naming it, one starting before the other ended,
    record one call (not two that do not overlap: a scripted server may repeat an id). The
    SDK's span goes first: OpenLLMetry adds a stream's `message_start` output tokens to its
    `message_delta` total, one token too many; the SDK's span has the response's own count.
    """
    latest_end = 0
    for turn in turns:
        if turn.span.start_ns < latest_end:
            break
        latest_end = max(latest_end, turn.span.end_ns)
    else:  # no two calls overlap (the usual trace): no id is read
        return list(turns)
    groups: dict[object, tuple[list[SpanRecord], int]] = {}
    for index, turn in enumerate(turns):
        response = _response_id(turn.span)
        group = groups.get(response) if response is not None else None
        if group is not None and turn.span.start_ns < group[1]:
            spans, end = group
            groups[response] = ([*turn.spans, *spans], max(end, turn.span.end_ns))
        else:
            key: object = response if response is not None and group is None else index
            groups[key] = (list(turn.spans), turn.span.end_ns)
    if len(groups) == len(turns):
        return list(turns)
    return [ModelTurn(tuple(spans)) for spans, _ in groups.values()]


def results_by_id(turns: Iterable[ModelTurn]) -> dict[str, Any]:
    """Every tool result the requests carried, by call id, the first one read winning."""
    results: dict[str, Any] = {}
    for turn in turns:
        for call_id, result in turn.messages.results.items():
            results.setdefault(call_id, result)
    return results


def _error(call_id: str | None, result: Any, failed: frozenset[str]) -> str | None:
    """The call's error when the request flagged its result as one: the result's text."""
    if call_id is None or call_id not in failed:
        return None
    return result if isinstance(result, str) else json.dumps(result, default=str)


def _answered_before(call_id: str | None, turns: Sequence[ModelTurn]) -> bool:
    """Whether a request up to the last of `turns` already carried a result for `call_id`: a
    response asking for that id again asks for a new call."""
    return call_id is not None and any(call_id in turn.messages.results for turn in turns)


def rebuild_tool_calls(turns: Sequence[ModelTurn]) -> list[ToolCall]:
    """The tool calls the models asked for, with the results later requests carried back."""
    results = results_by_id(turns)
    failed = frozenset().union(*(turn.messages.failed for turn in turns))
    in_order = _paired_in_order(turns, results)
    calls: dict[object, ToolCall] = {}
    for index, turn in enumerate(turns):
        ended = datetime.fromtimestamp(turn.span.end_ns / 1e9, UTC)
        for position, requested in enumerate(turn.messages.requested):
            key: object = requested.id if requested.id is not None else (index, position)
            call_id, result = requested.id, None
            if key in calls and not _answered_before(requested.id, turns[: index + 1]):
                continue  # the same call read again
            if key in calls:  # an id reused by a later round (see the module's docs)
                key = (index, position)
                if index + 1 < len(turns):
                    result = turns[index + 1].messages.latest_results.get(str(call_id))
            elif requested.id is not None and requested.id in results:
                result = results[requested.id]
            elif (index, position) in in_order:
                call_id, result = in_order[index, position]
            calls[key] = ToolCall(
                name=requested.name,
                arguments=dict(requested.arguments or {}),
                result=result,
                error=_error(call_id, result, failed),
                id=call_id,
                started_at=ended,
                duration_s=None,
            )
    return list(calls.values())


def _paired_in_order(
    turns: Sequence[ModelTurn], results: Mapping[str, Any]
) -> dict[tuple[int, int], tuple[str, Any]]:
    """(turn, position) -> (call id, result) for the calls of a response whose ids no result
    answers, when the next request brought exactly as many results answering no call id: the
    k-th of those answers the k-th call (see the module's docs)."""
    asked = {r.id for turn in turns for r in turn.messages.requested if r.id is not None}
    orphans = [call_id for call_id in results if call_id not in asked]
    if not orphans:
        return {}  # every result answers a known call: the usual trace
    paired: dict[tuple[int, int], tuple[str, Any]] = {}
    seen: set[str] = set()
    for index, turn in enumerate(turns[:-1]):
        unanswered = [
            position
            for position, r in enumerate(turn.messages.requested)
            if r.id is None or r.id not in results
        ]
        brought = [
            call_id
            for call_id in turns[index + 1].messages.results
            if call_id not in asked and call_id not in seen
        ]
        seen.update(brought)
        if unanswered and len(brought) == len(unanswered):
            for position, call_id in zip(unanswered, brought, strict=True):
                paired[index, position] = (call_id, results[call_id])
    return paired


def fill_from_messages(calls: Sequence[ToolCall], turns: Sequence[ModelTurn]) -> list[ToolCall]:
    """Tool spans' calls with their missing id, arguments or result taken from the messages."""
    if all(call.id is not None and call.arguments and call.result is not None for call in calls):
        return list(calls)  # nothing to fill: the messages are not read
    if not any(turn.messages.requested or turn.messages.results for turn in turns):
        return list(calls)
    requested = [r for turn in turns for r in turn.messages.requested if r.id is not None]
    by_id = {r.id: r for r in reversed(requested)}  # the first request of an id wins
    claimed = {call.id for call in calls if call.id is not None}
    results = results_by_id(turns)
    filled: list[ToolCall] = []
    for call in calls:
        updates: dict[str, Any] = {}
        call_id = call.id
        if call_id is None:
            match = next(
                (r for r in requested if r.name == call.name and r.id not in claimed), None
            )
            if match is not None and match.id is not None:
                call_id = match.id
                claimed.add(call_id)
                updates["id"] = call_id
        source = by_id.get(call_id) if call_id is not None else None
        if not call.arguments and source is not None and source.arguments:
            updates["arguments"] = dict(source.arguments)
        if call.result is None and call_id is not None and call_id in results:
            updates["result"] = results[call_id]
        filled.append(call.model_copy(update=updates) if updates else call)
    return filled
