"""LangGraph graphs and LangChain runnables as agents: a compiled graph (`create_react_agent`'s,
or a `StateGraph` of the user's own) or any runnable taking `{"messages": [...]}`.

Each trial runs in a fresh thread (`configurable.thread_id`), every user turn of the case in
it. A graph with a checkpointer keeps the conversation itself, so a turn sends only the new user
message; without one, a turn sends the whole conversation so far (what a checkpointer would have
kept). The record is read from the messages the trial's turns added to the graph's state (an AI
message's `tool_calls`, a `ToolMessage`'s content and `status`, the last AI message's text) and
from the model calls LangChain reports to callbacks (each with its message's `usage_metadata`),
not from a trace: it is what the graph itself keeps, exactly (`langgraph_record.py`).

A graph runs through `astream(stream_mode=["updates", "values"])`: the updates name the nodes
each step ran (the trial's node visits, in order), and the values are the state after each step,
whose new messages are read as they appear, so a run that raises midway keeps what it did before.
That costs nothing the graph does not do anyway (no checkpoint is read back, and a graph without
a checkpointer has none to read). Any other runnable is awaited once per turn (`ainvoke`).
LangChain runs a sync-only runnable, node or tool in an executor thread, off the event loop.

The tools' schemas come from the graph's `ToolNode`s (before any trial), and from what the run's
chat models were bound with (a callback on each model call), so `tool_arguments_valid` applies.

A trial with a tool environment (mocks, replay, state) runs the graph's answering copy, made
once, and a guard on the tools run outside its `ToolNode`s (`langgraph_mocks.py`); any other
trial runs the user's graph itself.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Self

from agenteval.agents.frameworks.base import (
    Conversation,
    FrameworkAgent,
    TrialBuilder,
    answer_text,
    conversation,
)
from agenteval.agents.frameworks.langgraph_mocks import ToolGuard, answering_graph
from agenteval.agents.frameworks.langgraph_record import (
    RunRecord,
    TurnReader,
    graph_tool_specs,
    message_keys,
)
from agenteval.agents.trial_state import current_environment
from agenteval.case import EvalCase, Message
from agenteval.errors import AgentLoadError
from agenteval.jsonsafe import plain_copy
from agenteval.trace import ToolSpec, Trial

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["GraphAgent"]

_MESSAGES = "messages"
_STRUCTURED = "structured_response"
"""The state key under which LangChain's agents keep a structured answer (`response_format`)."""
_INTERRUPT = "__interrupt__"
"""The key under which a graph's updates report an `interrupt()` (human in the loop)."""
_UNSET: Any = object()
"""No `structured_response` seen yet this turn (None is a value the state may hold)."""


class GraphAgent(FrameworkAgent):
    """A LangGraph graph, or a LangChain runnable over `{"messages": [...]}`, as agenteval runs
    it: one fresh thread per trial, the case's turns in it, the record read from the messages
    the turns added (see the module's docstring)."""

    framework = "langgraph"

    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        self._graph = _is_graph(agent)
        self._specs: dict[str, ToolSpec] | None = None
        self._answering: Any = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, agent: Any) -> Self:
        """The adapter of `agent`; refuses a runnable that cannot be an agent (a tool, a chat
        model, a graph whose state has no messages), naming what to pass instead."""
        _refuse_non_agents(agent)
        return cls(agent)

    @property
    def name(self) -> str:
        """The graph's `name` (`create_react_agent(name=...)`; LangGraph's default is
        `LangGraph`), or the runnable's own name."""
        return _name_of(self.agent)

    @property
    def is_graph(self) -> bool:
        """Whether the agent is a LangGraph graph (streamed step by step), not another
        runnable (awaited whole)."""
        return self._graph

    @property
    def checkpointed(self) -> bool:
        """Whether the graph keeps its threads itself (compiled with a checkpointer)."""
        if not self._graph:
            return False
        from langgraph.checkpoint.base import BaseCheckpointSaver

        return isinstance(getattr(self.agent, "checkpointer", None), BaseCheckpointSaver)

    def answering(self) -> Any:
        """The agent whose `ToolNode`s ask the running trial's environment before running a
        tool (`langgraph_mocks.answering_graph`), made on first use and shared by every trial
        with an environment; the agent itself when it is no graph."""
        with self._lock:  # one copy, even for trials started in several threads
            if self._answering is None:
                self._answering = answering_graph(self.agent) if self._graph else self.agent
            return self._answering

    def tool_specs(self) -> dict[str, ToolSpec]:
        """The tools of every `ToolNode` in the graph and its subgraphs (`create_react_agent`'s
        `tools` node included), as the model sees them (`convert_to_openai_tool`: the tool's
        `tool_call_schema`, injected arguments left out). A runnable that is no graph, or a
        graph calling tools from nodes of its own, declares none here; every trial also
        records the tools its chat models were bound with (`RunRecord`)."""
        if self._specs is None:
            self._specs = graph_tool_specs(self.agent) if self._graph else {}
        return dict(self._specs)

    def tools_complete(self) -> bool:
        # With no ToolNode read, the graph's tools (if any) are called from its own nodes.
        return bool(self.tool_specs())

    async def run_case(self, case: EvalCase) -> Trial:
        """Every user turn of `case` in a fresh thread of the graph."""
        talk = conversation(case)
        builder = TrialBuilder(talk, self.tool_specs())
        thread_id = f"agenteval-{uuid.uuid4().hex}"
        builder.metadata("thread_id", thread_id)
        with builder.kept_on_failure():
            await _Thread(self, builder, thread_id).play(talk)
        return builder.build()


class _Thread:
    """One trial's thread: the turns sent, and the messages read back into the builder."""

    def __init__(self, agent: GraphAgent, builder: TrialBuilder, thread_id: str) -> None:
        self._agent = agent
        self._builder = builder
        self._record = RunRecord(builder)
        self._config: dict[str, Any] = {
            "configurable": {"thread_id": thread_id},
            # The model calls, and the tools the models were bound with (`RunRecord`).
            "callbacks": [self._record.handler()],
        }
        self._runnable = agent.agent
        environment = current_environment()
        if environment is not None:
            # Mocks, replay: the graph whose ToolNodes ask the environment, and the guard on
            # the tools run anywhere else (`langgraph_mocks.py`).
            self._runnable = agent.answering()
            self._config["callbacks"].append(ToolGuard(environment).handler())
        self._seen: set[object] = set()
        """The keys (`message_keys`) of the messages sent or read in the trial's earlier
        turns."""
        self._structured: Any = None
        """The `structured_response` of the graph's state after the turn's last step."""
        self._state: list[BaseMessage] = []
        """The conversation as the graph last left it (sent again without a checkpointer)."""
        self._interrupts: list[Any] = []

    async def play(self, talk: Conversation) -> None:
        from langchain_core.messages import HumanMessage

        history = [_lc_message(message) for message in talk.history]
        index = 0
        async for turn in talk.play(self._builder):
            user = HumanMessage(content=turn, id=_new_id())
            sent: list[BaseMessage]
            if self._agent.checkpointed:
                sent = [*history, user] if index == 0 else [user]
            else:
                sent = [*(history if index == 0 else self._state), user]
            # What the graph holds as the turn starts is known (`message_keys`: the state it
            # kept and the new message, or, with no checkpointer, what is sent: the whole
            # conversation); and so is every message read in an earlier turn: a nested agent
            # with a memory of its own (`checkpointer=True`) streams its earlier turns again.
            held = [*self._state, *sent] if self._agent.checkpointed else sent
            known = set(message_keys(held))
            known.update(self._seen)
            reader = TurnReader(self._record, known)
            try:
                if self._agent.is_graph:
                    await self._stream(sent, reader)
                else:
                    await self._invoke(sent, reader)
            except BaseException:
                self._record.failed()  # a tool's exception the graph let out: its call's
                raise
            self._builder.answer(self._answer(reader))
            # A runnable's messages get ids in the conversation it is sent next (`_invoke`),
            # and it may return only its new ones: what they say is known by this turn only.
            self._seen.update(known if self._agent.is_graph else _ids(known))
            index += 1

    async def _stream(self, sent: list[BaseMessage], reader: TurnReader) -> None:
        # `subgraphs`: the states of the agents run inside the graph's nodes stream too, so a
        # worker whose messages the graph does not keep still gives the trial its calls.
        stream = self._runnable.astream(
            {_MESSAGES: sent}, self._config, stream_mode=["updates", "values"], subgraphs=True
        )
        before: Any = _UNSET  # the structured response the state held as the turn began
        async for namespace, mode, chunk in stream:
            if namespace:
                if mode == "values" and isinstance(chunk, Mapping):
                    reader.read(_message_list(chunk.get(_MESSAGES)), tuple(namespace))
                continue
            if mode == "updates" and isinstance(chunk, Mapping):
                for node, update in chunk.items():
                    if node == _INTERRUPT:
                        self._interrupts.extend(_interrupt_values(update))
                        self._builder.metadata("interrupts", self._interrupts)
                    else:
                        self._builder.visit(str(node))
            elif mode == "values" and isinstance(chunk, Mapping):
                self._state = _message_list(chunk.get(_MESSAGES))
                structured = chunk.get(_STRUCTURED)
                if before is _UNSET:
                    before = structured
                # Only a response this turn set: a checkpointer keeps an earlier turn's.
                self._structured = None if structured is before else structured
                reader.read(self._state)

    def _answer(self, reader: TurnReader) -> str | None:
        """The turn's answer: its last AI message's text; with none, the structured response
        the graph set (LangChain's `create_agent` with a `ToolStrategy` answers by a tool call
        its model node answers itself), as JSON, that call withdrawn from the agent's calls.

        So are the turn's earlier carrying calls the model node refused and asked again (an
        answer failing the schema, several answers at once: `ToolStrategy`'s `handle_errors`):
        each call of the turn that is no tool of the graph and is named as a carrying call, or
        as another schema offered with it (a union's member: `RunRecord.offered_with`), or was
        asked beside one (the several-answers refusal names them all)."""
        structured, self._structured = self._structured, None
        if reader.answer is not None or structured is None:
            return reader.answer
        tools = self._agent.tool_specs()
        carrying: set[str] = set()
        for call_id in _answered_last(self._state):
            call = _call_named(self._state, call_id)
            if call is not None and call not in tools:
                self._builder.withdraw(call_id)
                carrying.add(call)
        # A union's other members: a refused `Forecast` before the `Weather` that answered.
        carrying = {name for name in self._record.offered_with(carrying) if name not in tools}
        for asked in _turn_calls(self._state):
            names = {str(c["name"]) for c in asked}
            if not names & carrying:
                continue
            for call in asked:
                if str(call["name"]) not in tools and call.get("id"):
                    self._builder.withdraw(str(call["id"]))
        return answer_text(structured)

    async def _invoke(self, sent: list[BaseMessage], reader: TurnReader) -> None:
        from langchain_core.messages import AIMessage, BaseMessage

        output = await self._runnable.ainvoke({_MESSAGES: sent}, self._config)
        if isinstance(output, Mapping) and _MESSAGES in output:
            messages = _message_list(output[_MESSAGES])
        elif isinstance(output, BaseMessage):
            messages = [*sent, output]
        elif isinstance(output, str):
            messages = [*sent, AIMessage(content=output)]
        elif isinstance(output, list) and all(isinstance(m, BaseMessage) for m in output):
            messages = list(output)
        else:
            raise TypeError(
                f"the runnable returned {type(output).__name__}, which agenteval cannot read "
                "as an agent's messages: return the state ({'messages': [...]}), a message "
                "or a list of messages"
            )
        # The conversation goes on from what was sent and what came back: a runnable that
        # returned only its new messages still gets the whole conversation next turn.
        added = reader.read(messages)
        kept = messages if len(added) < len(messages) else [*sent, *messages]
        self._state = [m if m.id else m.model_copy(update={"id": _new_id()}) for m in kept]


def _answered_last(state: list[BaseMessage]) -> list[str]:
    """The call ids the tool messages ending `state` answer (those after its last AI message)."""
    from langchain_core.messages import ToolMessage

    ids: list[str] = []
    for message in reversed(state):
        if not isinstance(message, ToolMessage):
            break
        ids.append(message.tool_call_id)
    return ids


def _turn_calls(state: list[BaseMessage]) -> list[list[Any]]:
    """The tool calls each AI message of the turn ending `state` asked for (the messages after
    its last human message)."""
    from langchain_core.messages import AIMessage, HumanMessage

    asked: list[list[Any]] = []
    for message in reversed(state):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage) and message.tool_calls:
            asked.append(list(message.tool_calls))
    return asked


def _call_named(state: list[BaseMessage], call_id: str) -> str | None:
    """The tool name of the call `call_id` in the last AI message of `state` asking for it."""
    from langchain_core.messages import AIMessage

    for message in reversed(state):
        if isinstance(message, AIMessage):
            return next(
                (str(c["name"]) for c in message.tool_calls if c.get("id") == call_id), None
            )
    return None


def _ids(keys: set[object]) -> Iterable[object]:
    return (key for key in keys if isinstance(key, str))


def _new_id() -> str:
    return f"agenteval-{uuid.uuid4().hex}"


def _message_list(value: Any) -> list[BaseMessage]:
    from langchain_core.messages import BaseMessage

    if not isinstance(value, list | tuple):
        return []
    return [message for message in value if isinstance(message, BaseMessage)]


def _lc_message(message: Message) -> BaseMessage:
    """A case's message as LangChain's (`system`, `user`, `assistant`), with an id of its own."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds: dict[str, type[BaseMessage]] = {
        "system": SystemMessage,
        "user": HumanMessage,
        "assistant": AIMessage,
    }
    kind = kinds.get(message.role)
    if kind is None:
        raise ValueError(
            f"a case message has role {message.role!r}: a LangGraph agent is given "
            "'system', 'user' and 'assistant' messages"
        )
    return kind(content=message.content, id=_new_id())


def _interrupt_values(update: Any) -> Iterable[Any]:
    """The values an `__interrupt__` update carries (`Interrupt.value`), as plain data."""
    items = update if isinstance(update, list | tuple) else [update]
    for item in items:
        value, _ = plain_copy(getattr(item, "value", item))
        yield value


def _name_of(agent: Any) -> str:
    """A graph's `name`, else the runnable's `get_name()`, else its class's name."""
    name = getattr(agent, "name", None)
    if isinstance(name, str) and name:
        return name
    get_name = getattr(agent, "get_name", None)
    return str(get_name()) if callable(get_name) else type(agent).__name__


def _is_graph(agent: Any) -> bool:
    """A LangGraph `Pregel` (every compiled graph is one), told by its class hierarchy so a
    LangChain runnable needs no langgraph installed."""
    return any(
        cls.__name__ == "Pregel" and cls.__module__.split(".")[0] == "langgraph"
        for cls in type(agent).__mro__
    )


def _refuse_non_agents(agent: Any) -> None:
    """Raise `AgentLoadError` for a runnable that cannot play a case: a tool, a chat model
    (itself or behind a binding), or one whose input has no `messages`."""
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.runnables import RunnableBinding
    from langchain_core.tools import BaseTool

    inner = agent
    while isinstance(inner, RunnableBinding):  # `model.bind_tools(...)`, `.with_config(...)`
        inner = inner.bound
    what = type(inner).__name__
    if isinstance(inner, BaseTool):
        raise AgentLoadError(
            f"{what} {inner.name!r} is a LangChain tool, not an agent",
            hint="pass the graph that calls it, e.g. create_react_agent(model, [tool])",
        )
    if isinstance(inner, BaseLanguageModel):
        raise AgentLoadError(
            f"{what} is a LangChain chat model, not an agent: it takes messages, not "
            "{'messages': [...]}",
            hint="pass a graph over it, e.g. create_react_agent(model, tools)",
        )
    properties = _input_properties(agent)
    if properties is None and _is_graph(agent):
        # No input schema LangChain can build (a TypedDict state on Python < 3.12, say): the
        # graph's state keys say what it takes. A functional-API graph has none (any input).
        channels = getattr(agent, "channels", None) or {}
        properties = {str(k) for k in channels if not str(k).startswith(("__", "branch:"))}
        properties = properties or None
    if properties is not None and _MESSAGES not in properties:
        kind = "graph" if _is_graph(agent) else "runnable"
        raise AgentLoadError(
            f"the {kind} {_name_of(agent)!r} takes {sorted(properties)}, not 'messages': "
            "agenteval sends each user turn as {'messages': [...]}",
            hint="give it a messages state (MessagesState, or a 'messages' key with "
            "add_messages), or pass a runnable over {'messages': [...]} (a prompt with "
            "MessagesPlaceholder('messages'))",
        )


def _input_properties(agent: Any) -> set[str] | None:
    """The keys the runnable's input schema names, or None when it names none (any input)."""
    try:
        schema = agent.get_input_jsonschema()
    except Exception:  # a schema LangChain cannot build: the run itself will say
        return None
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return {str(key) for key in properties} if isinstance(properties, Mapping) else None
