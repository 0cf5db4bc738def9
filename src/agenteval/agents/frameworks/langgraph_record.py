"""What a LangGraph run records, read into a trial (for `langgraph.GraphAgent`): the messages
a turn added, the model calls LangChain reports to callbacks, and the tools' schemas.

Model calls come from the callbacks (`on_llm_end`: every chat model call of the run, with the
`usage_metadata` and `response_metadata` of the message it made), so a model call whose message
a node keeps out of the state (a router's, a summarizer's) still counts, and an AI message a
node writes by hand is no model call. An AI message no callback reported (a node calling a
provider's client itself) counts as a model call when it carries usage or a model name.
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agenteval.agents.frameworks.base import TrialBuilder
from agenteval.agents.tools import error_text
from agenteval.jsonsafe import plain_copy
from agenteval.trace import ToolSpec, Usage

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["RunRecord", "TurnReader", "graph_tool_specs", "message_keys", "usage_of"]


class RunRecord:
    """One trial's record as LangChain's callbacks fill it: the model calls (and the ids of
    the messages they made, so reading the state does not count them again) and the tools the
    models were bound with. One per trial: concurrent trials share nothing."""

    def __init__(self, builder: TrialBuilder) -> None:
        self.builder = builder
        self.reported: set[str] = set()
        """The ids of the messages the callbacks reported as model calls."""
        self.reported_copies: set[str] = set()
        """What the messages the callbacks reported say (`_made`): a node that rebuilds the
        model's message without its id (or under a new one) keeps a copy of it in the state,
        which is the same model call, not one no callback reported."""
        self.bindings: set[frozenset[str]] = set()
        """The names of the tools each model call was offered together (`bound_tools`): a
        union `ToolStrategy`'s schemas are offered in one binding, so the members of the union
        a structured answer belongs to are the other names of its binding that no `ToolNode`
        runs and that never ran (`ran`)."""
        self.ran: set[str] = set()
        """The names of the tools that ran (`on_tool_start`), wherever: a node of the graph's
        own running a tool the model was offered beside a schema."""
        self.tool_errors: dict[str, str] = {}
        """What each tool that raised raised, by call id (`on_tool_error`): the run's
        ToolMessage says it when the graph handled the error; when it did not, the run
        raises and no ToolMessage comes, so `failed` gives the calls their errors."""

    def handler(self) -> Any:
        """The callback handler to run the trial with (`config["callbacks"]`)."""
        return _handler_class()(self)

    def model_call(self, message: Any) -> None:
        """The model call that made `message` (an AI message), priced by its model name."""
        metadata = getattr(message, "response_metadata", None) or {}
        model = metadata.get("model_name") or metadata.get("model") or "unknown"
        provider = metadata.get("model_provider")
        reported = getattr(message, "usage_metadata", None)
        self.builder.model_call(
            str(model),
            usage_of(reported),
            provider=str(provider) if provider else None,
            unrecorded=None if reported else _NO_USAGE,
        )

    def failed(self) -> None:
        """The run raised: each tool that raised, and that no ToolMessage answered, keeps
        its error."""
        for call_id, error in self.tool_errors.items():
            self.builder.result(call_id, error=error)
        self.tool_errors.clear()

    def bound_tools(self, tools: Any) -> None:
        """The tools a chat model was offered (`bind_tools`), declared to the trial."""
        names: set[str] = set()
        for tool in tools if isinstance(tools, list | tuple) else ():
            spec = spec_of(tool)
            if spec is not None:
                self.builder.declare(spec)
                names.add(spec.name)
        if names:
            self.bindings.add(frozenset(names))

    def offered_with(self, names: set[str]) -> set[str]:
        """Every name offered to a model in one binding with any of `names`, less the tools
        that ran (`names` too)."""
        found: set[str] = set()
        for binding in self.bindings:
            if binding & names:
                found |= binding
        return (found - self.ran) | names


@functools.cache
def _handler_class() -> type[Any]:
    """The callback handler class, made once on first use: it subclasses LangChain's, which
    importing agenteval must not import."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Recording(BaseCallbackHandler):
        """Reports each chat model call, and the tools it was bound with, to a `RunRecord`."""

        run_inline = True  # a few appends: no executor thread for them

        def __init__(self, record: RunRecord) -> None:
            self.record = record

        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            params = kwargs.get("invocation_params")
            if isinstance(params, Mapping):
                self.record.bound_tools(params.get("tools"))

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            for generations in getattr(response, "generations", None) or ():
                for generation in generations:
                    message = getattr(generation, "message", None)
                    if message is None:  # a completion model's text: no chat message
                        continue
                    if message.id:
                        self.record.reported.add(message.id)
                    self.record.reported_copies.add(_made(message))
                    self.record.model_call(message)

        def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
            name = serialized.get("name") if isinstance(serialized, Mapping) else None
            self.record.ran.add(str(name or kwargs.get("name") or ""))

        def on_tool_error(self, error: BaseException, **kwargs: Any) -> None:
            call_id = kwargs.get("tool_call_id")
            if call_id:
                self.record.tool_errors[str(call_id)] = error_text(error)

    return Recording


class TurnReader:
    """The messages one turn added, read into the builder once each as they appear: an AI
    message's tool calls (and its model call, when no callback reported it), a tool message's
    result or error, and the turn's answer (the last AI message of the graph's own state).

    The states of the agents the graph runs inside its nodes (a subgraph, a worker agent a
    node invokes) are read too, for their calls only: a node that keeps only the worker's last
    message in the graph's state still made the worker's calls. A message is read once
    wherever it shows (by id), so a subgraph sharing the graph's state counts nothing twice."""

    def __init__(self, record: RunRecord, known: set[object]) -> None:
        self._record = record
        self._builder = record.builder
        self._known = known
        self._answered = set(known)
        """The graph's own messages looked at for the answer (a worker's last message is
        read in the worker's state first, and is the answer once the graph keeps it)."""
        self.answer: str | None = None
        self._last: dict[tuple[str, ...], _Read] = {}
        """What each state (by namespace) held when last read."""

    def read(
        self, messages: Sequence[BaseMessage], namespace: tuple[str, ...] = ()
    ) -> list[BaseMessage]:
        """Read the messages of `messages` not read (nor sent) before; returns them.
        `namespace`: whose state they are, the graph's own (empty) or a nested agent's
        (LangGraph's stream namespace), which gives no answer."""
        from langchain_core.messages import AIMessage

        # A state streams whole at every step: the messages it held when last read, still its
        # first ones (the same objects), were read then. Only the rest is keyed, counting on
        # from those (`message_keys`): each message is written for its key once, not once a
        # step (a graph of 800 id-less messages spent 10 of its 13.6 s writing them).
        last = self._last.get(namespace)
        start, counts = 0, {}
        if (
            last is not None
            and len(last.messages) <= len(messages)
            and all(map(operator.is_, last.messages, messages))
        ):
            start, counts = len(last.messages), last.counts
        self._last[namespace] = _Read(list(messages), counts)
        rest = messages[start:]
        added = []
        for message, key in zip(rest, message_keys(rest, namespace, counts), strict=True):
            if not namespace and key not in self._answered:
                self._answered.add(key)
                if isinstance(message, AIMessage):
                    self.answer = message.text or None
            if key in self._known:
                continue
            self._known.add(key)
            added.append(message)
            self._one(message)
        return added

    def _one(self, message: BaseMessage) -> None:
        from langchain_core.messages import AIMessage, ToolMessage

        if isinstance(message, AIMessage):
            self._ai(message)
        elif isinstance(message, ToolMessage):
            if message.status == "error":
                self._builder.result(message.tool_call_id, error=message.text or "error")
            else:
                content, _ = plain_copy(message.content)
                self._builder.result(message.tool_call_id, content)

    def _ai(self, message: Any) -> None:
        metadata = message.response_metadata or {}
        if (
            (message.usage_metadata or metadata.get("model_name") or metadata.get("model"))
            and message.id not in self._record.reported
            and _made(message) not in self._record.reported_copies
        ):
            self._record.model_call(message)
        for call in message.tool_calls:
            self._builder.call(str(call["name"]), call.get("args"), call.get("id"))
        for invalid in message.invalid_tool_calls:
            # Arguments the model wrote that are not JSON: the call is kept (the arguments as
            # written), and no tool runs it.
            recorded = self._builder.call(
                str(invalid.get("name") or ""), invalid.get("args"), invalid.get("id")
            )
            self._builder.result(recorded.id, error=str(invalid.get("error") or "invalid call"))


_NO_USAGE = (
    "the chat model reported no usage_metadata for a call, so what it cost is unknown: a "
    "streaming ChatOpenAI reports it only with stream_usage=True"
)


def usage_of(metadata: Mapping[str, Any] | None) -> Usage:
    """LangChain's `usage_metadata` as agenteval's usage: its input tokens count the cached
    ones too (`input_token_details.cache_read`), as agenteval's do."""
    if not metadata:
        return Usage()
    inputs = metadata.get("input_token_details") or {}
    outputs = metadata.get("output_token_details") or {}
    return Usage(
        input_tokens=_count(metadata.get("input_tokens")),
        output_tokens=_count(metadata.get("output_tokens")),
        cached_tokens=_count(inputs.get("cache_read")),
        reasoning_tokens=_count(outputs.get("reasoning")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class _Read:
    """A state as `TurnReader.read` last read it: its messages (a copy: a reducer may change
    the list in place) and how many of them say each thing (`message_keys`' `counts`)."""

    messages: list[BaseMessage]
    counts: dict[str, int]


def message_keys(
    messages: Sequence[BaseMessage],
    namespace: tuple[str, ...] = (),
    counts: dict[str, int] | None = None,
) -> list[object]:
    """What tells each message of a state (`messages`, the state of `namespace`: the graph's
    own, or a nested agent's) from the others, and from those of earlier turns: its id
    (LangGraph's `add_messages` gives every message one); else, for a message in a plain list
    (`operator.add`) or rebuilt by a node without its id, what it says (`_said`) and how many
    messages before it in the list say the same. Not its place: a conversation sent again
    (a graph without a checkpointer), a worker's memory streaming its earlier turns, a node
    trimming the list, all move places; while a message made again (the same call asked in two
    turns, with the same call id) is the next of its kind, and is read as a new one.
    `counts`: how many messages before `messages` in the list say each thing (updated)."""
    keys: list[object] = []
    counts = {} if counts is None else counts
    for message in messages:
        if message.id:
            keys.append(message.id)
            continue
        said = _said(message)
        seen = counts.get(said, 0)
        counts[said] = seen + 1
        keys.append(("said", namespace, said, seen))
    return keys


def _said(message: BaseMessage) -> str:
    """All a message without an id says (kind, name, content, calls asked, call answered), as
    JSON text."""
    parts = [
        message.type,
        message.name,
        message.content,
        getattr(message, "tool_calls", None),
        getattr(message, "invalid_tool_calls", None),
        getattr(message, "tool_call_id", None),
        getattr(message, "status", None),
    ]
    return json.dumps(parts, sort_keys=True, default=repr)


def _made(message: Any) -> str:
    """What a model call's message says, its usage included (`RunRecord.reported_copies`)."""
    parts = [message.content, message.tool_calls, message.usage_metadata]
    return json.dumps(parts, sort_keys=True, default=repr)


def spec_of(tool: Any) -> ToolSpec | None:
    """A tool (a LangChain tool, or a provider's tool declaration) as the model sees it, by
    `convert_to_openai_tool`; None for what is no function (a provider's built-in tool)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        function = convert_to_openai_tool(tool).get("function")
    except Exception:  # a built-in tool of the provider's (web search, say): no schema
        return None
    if not isinstance(function, Mapping) or not function.get("name"):
        return None
    return ToolSpec(
        name=str(function["name"]),
        description=str(function.get("description") or ""),
        parameters=dict(function.get("parameters") or {}),
    )


def graph_tool_specs(graph: Any) -> dict[str, ToolSpec]:
    """The tools of every `ToolNode` in `graph` and its subgraphs (`graph.nodes`, each node's
    `bound` runnable; `ToolNode.tools_by_name`), as the model sees them."""
    try:
        from langgraph.prebuilt import ToolNode
    except ImportError:  # langgraph without its prebuilt package: no ToolNode to read
        return {}
    graphs = [graph, *(sub for _, sub in graph.get_subgraphs(recurse=True))]
    specs: dict[str, ToolSpec] = {}
    for each in graphs:
        for node in (getattr(each, "nodes", None) or {}).values():
            bound = getattr(node, "bound", None)
            if not isinstance(bound, ToolNode):
                continue
            for tool in bound.tools_by_name.values():
                spec = spec_of(tool)
                if spec is not None:
                    specs[spec.name] = spec
    return specs
