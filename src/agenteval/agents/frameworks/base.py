"""What every framework adapter shares: the `FrameworkAgent` seam the engine calls, the turns a
case plays, and `TrialBuilder`, which turns what a framework's run objects record into a trial
shaped as agenteval's own callable agents make it (one step per user turn)."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from agenteval.agents.recorder import current_recorder
from agenteval.agents.users import UserSession, WrittenTurns
from agenteval.case import EvalCase, Message
from agenteval.jsonsafe import plain_copy
from agenteval.trace import AgentStep, ModelCall, ToolCall, ToolSpec, Trial, Usage, utc_now

__all__ = [
    "Conversation",
    "FrameworkAgent",
    "TrialBuilder",
    "answer_text",
    "conversation",
    "tool_arguments",
]


class FrameworkAgent(ABC):
    """An agent built on a framework, as the engine runs it: one whole case per call of
    `run_case`, in a session of its own (so concurrent trials never share state).

    Subclasses (one per framework, in this package) wrap the user's object; `of` builds one and
    refuses, with an `AgentLoadError` naming what to pass instead, an object of the framework
    that is not a runnable agent. `run_case` raises what the framework raises (the engine
    records it as the trial's failure, and retries infrastructure failures).
    """

    framework: ClassVar[str]
    """The framework's name as agenteval's docs and extras spell it (`adk`, `langgraph`, ...)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    @classmethod
    def of(cls, agent: Any) -> Self:
        """The adapter of `agent` (checked here: the engine calls it before any trial)."""
        return cls(agent)

    @property
    @abstractmethod
    def name(self) -> str:
        """The agent's own name (its `name`, or its class's), for the run's target."""

    @abstractmethod
    def tool_specs(self) -> dict[str, ToolSpec]:
        """The tools the framework declares for the agent, by name, with their JSON schemas
        (so `tool_arguments_valid` applies); sub-agents' tools included."""

    def unreachable_tools(self) -> dict[str, str]:
        """Tools the framework runs where agenteval cannot answer for them (a tool of an agent
        called as a tool), by name, with whose they are: a mock of one is refused before the
        run, as it would never answer (the real tool would run)."""
        return {}

    def tools_complete(self) -> bool:
        """Whether `tool_specs()` names every tool a call can name. False when the framework
        adds tools only while the agent runs (MCP servers, toolsets, tools the agent makes),
        so that a mock of a tool not listed is not refused before the run."""
        return True

    @abstractmethod
    async def run_case(self, case: EvalCase) -> Trial:
        """Run every user turn of `case` in one fresh session and return what the framework
        recorded (not yet timed: the engine stamps the trial)."""

    async def __call__(self, prompt: Any) -> Trial:
        """The agent as a plain agenteval agent: one prompt (text, or a list of messages) run
        as a one-turn case in a fresh session."""
        return await self.run_case(EvalCase(input=prompt))

    @property
    def reference(self) -> str:
        """How a run names the agent: the framework and the agent's name (`adk:root_agent`)."""
        return f"{self.framework}:{self.name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reference})"


@dataclass(frozen=True)
class Conversation:
    """What a case asks a framework agent to play: the messages before the first turn (a case
    whose input is a list of messages: all but the last user message), and the user turns, one
    run of the framework each, in one session.

    Adapters iterate `play(builder)`, not `turns`: with a simulated user (`session`) the next
    turn is known only once the agent answered the one before."""

    history: tuple[Message, ...]
    turns: tuple[str, ...]
    multi_turn: bool
    """A case with a `conversation`: the trial records each turn's answer
    (`metadata["turn_outputs"]`), as for a callable agent."""
    session: UserSession | None = None
    """The attempt's simulated user, when the case has one (its written turns come first)."""

    def play(self, builder: TrialBuilder) -> AsyncIterator[str]:
        """The user's messages, one per turn, each starting a turn of `builder`; the next one
        asked of a simulated user with the answer `builder` recorded for the last."""
        if self.session is not None:
            return _Turns(aiter(self.session.play(builder.last_answer)), builder)
        return _Turns(WrittenTurns(self.turns), builder)


class _Turns:
    """Turns that each start a step of the trial being built."""

    def __init__(self, turns: AsyncIterator[str], builder: TrialBuilder) -> None:
        self._turns = turns
        self._builder = builder

    def __aiter__(self) -> _Turns:
        return self

    async def __anext__(self) -> str:
        turn = await anext(self._turns)
        self._builder.start_turn()
        return turn


def conversation(case: EvalCase) -> Conversation:
    """The turns `case` plays; raises ValueError for a case with nothing to send."""
    recorder = current_recorder()
    # Only the trial's own case plays its simulated user: a framework agent the user's
    # callable calls with one prompt (`FrameworkAgent.__call__`, a case of its own) runs
    # that prompt, inside the conversation the callable is being played.
    session = recorder.user_session if recorder is not None else None
    if session is not None and case.user_simulation is not None:
        history = tuple(Message.model_validate(message) for message in session.history)
        return Conversation(history, (), True, session)
    before, turns = case.written_opening()
    if not turns:
        raise ValueError(
            f"case {case.id!r} has no user message to send the agent: give it an input, "
            "or end its list of messages with a user message"
        )
    return Conversation(tuple(before), tuple(turns), bool(case.conversation))


def answer_text(output: Any) -> str | None:
    """A run's final output as the trial's answer: text as it is, a structured output (a
    pydantic model, a dataclass, a mapping, ...) as its JSON."""
    if output is None or isinstance(output, str):
        return output
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        output = dump(mode="json")
    copied, _ = plain_copy(output)
    return json.dumps(copied, ensure_ascii=False)


def tool_arguments(value: Any) -> dict[str, Any]:
    """A tool call's arguments as a mapping: JSON text parsed (OpenAI's wire form), a mapping
    copied as plain data, anything else kept under `input`."""
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value) if value else {}
        except (ValueError, RecursionError):
            return {"input": value if isinstance(value, str) else value.decode(errors="replace")}
    if value is None:
        return {}
    copied, _ = plain_copy(value)
    if isinstance(copied, dict):
        return {str(key): item for key, item in copied.items()}
    return {"input": copied}


class TrialBuilder:
    """A trial, collected turn by turn as an adapter reads a framework's run objects.

    Tool calls pair with their results by the framework's call id (so parallel calls pair up);
    a result without an id goes to the earliest unanswered call of that tool. A call never
    answered keeps result None. Results and arguments are copied as plain data when recorded.
    """

    def __init__(self, conversation: Conversation, tool_specs: Mapping[str, ToolSpec]) -> None:
        self._conversation = conversation
        self._tool_specs = dict(tool_specs)
        self._steps: list[AgentStep] = []
        self._open: dict[str, ToolCall] = {}
        self._model_calls: list[ModelCall] = []
        self._usage_gap: str | None = None  # why some model calls' tokens are unknown
        self._node_visits: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._anonymous = 0

    # --- turns

    def start_turn(self) -> None:
        """Begin the next user turn (its tool calls and answer belong to it)."""
        self._steps.append(AgentStep())

    @property
    def _step(self) -> AgentStep:
        if not self._steps:
            self.start_turn()
        return self._steps[-1]

    def answer(self, text: str | None) -> None:
        """The current turn's answer (a later answer in the same turn replaces it)."""
        self._step.output = text

    def last_answer(self) -> str | None:
        """The answer recorded for the current turn (None: none yet)."""
        return self._steps[-1].output if self._steps else None

    # --- tool calls

    def call(self, name: str, arguments: Any, call_id: str | None = None) -> ToolCall:
        """A tool call the model asked for, in the order asked."""
        if call_id is None:
            self._anonymous += 1
            call_id = f"agenteval-call-{self._anonymous}"
        # When it was asked, and (`result`) how long until its answer came, on one clock: calls
        # asked together (parallel calls, answered after all were asked) overlap, and a call
        # asked after another's answer does not, which is how a replay in order tells the calls
        # it may take in any order among themselves (`ReplayBook`).
        call = ToolCall(
            name=name, arguments=tool_arguments(arguments), id=call_id, started_at=utc_now()
        )
        self._step.tool_calls.append(call)
        self._open[call_id] = call
        return call

    def result(
        self,
        call_id: str | None,
        result: Any = None,
        *,
        error: str | None = None,
        name: str | None = None,
    ) -> ToolCall | None:
        """What the tool returned (or the error it raised) for the call `call_id`; with no id,
        for the earliest unanswered call named `name`. Returns the call, or None when no call
        matches (a result the model never asked for: not recorded)."""
        call = self._open.pop(call_id, None) if call_id is not None else None
        if call is None and name is not None:
            for key, candidate in self._open.items():
                if candidate.name == name:
                    call = self._open.pop(key)
                    break
        if call is None:
            return None
        if call.started_at is not None:
            call.duration_s = max(0.0, (utc_now() - call.started_at).total_seconds())
        if error is not None:
            call.error = error
        else:
            call.result, _ = plain_copy(result)
        return call

    def withdraw(self, call_id: str) -> None:
        """Take back the current turn's call `call_id`: it was how the framework carried the
        agent's structured answer, not a tool the agent called."""
        self._open.pop(call_id, None)
        step = self._step
        step.tool_calls = [call for call in step.tool_calls if call.id != call_id]

    def declare(self, spec: ToolSpec) -> None:
        """A tool the framework offered the model during the run, known only then (a toolset's,
        the tools a chat model was bound with): added to the trial's tool specs, a schema
        already known under its name kept."""
        self._tool_specs.setdefault(spec.name, spec)

    # --- the rest of the record

    def model_call(
        self,
        model: str,
        usage: Usage,
        *,
        provider: str | None = None,
        unrecorded: str | None = None,
    ) -> None:
        """One model call with what it used (priced by `model`); `unrecorded` says why the
        framework reported no usage for it: its cost is then unknown (`not_recorded["usage"]`),
        never free."""
        self._model_calls.append(
            ModelCall(model=model, provider=provider, usage=usage, usage_recorded=not unrecorded)
        )
        if unrecorded and self._usage_gap is None:
            self._usage_gap = unrecorded

    def visit(self, node: str) -> None:
        """A node the run passed through (a sub-agent transferred to, a graph node, a
        handoff), in order; a node visited twice in a row counts once."""
        if not self._node_visits or self._node_visits[-1] != node:
            self._node_visits.append(node)

    def metadata(self, key: str, value: Any) -> None:
        """Something the trial records besides the answer and the calls (the final session
        state under `session_state`, a guardrail that tripped, ...)."""
        self._metadata[key] = value

    @contextmanager
    def kept_on_failure(self) -> Iterator[TrialBuilder]:
        """Run the framework inside this: when it raises (a tool's exception it does not
        catch, a cancellation, a timeout), what was recorded before is handed to the running
        trial's recorder, so the failed trial keeps the calls made up to then."""
        try:
            yield self
        except BaseException:
            recorder = current_recorder()
            if recorder is not None:
                trial = self.build()
                recorder.tool_calls.extend(trial.tool_calls)
                recorder.model_calls.extend(trial.model_calls)
                recorder.node_visits.extend(trial.node_visits)
                recorder.tool_specs.update(trial.tool_specs)
                for kind, why in trial.not_recorded.items():
                    recorder.not_recorded.setdefault(kind, why)
            raise

    def build(self) -> Trial:
        """The trial as recorded so far."""
        steps = [step.model_copy() for step in self._steps]
        outputs = [step.output for step in steps]
        metadata = dict(self._metadata)
        if self._conversation.multi_turn:
            metadata["turn_outputs"] = outputs
        return Trial(
            steps=steps,
            output=outputs[-1] if outputs else None,
            model_calls=list(self._model_calls),
            node_visits=list(self._node_visits),
            metadata=metadata,
            tool_specs=dict(self._tool_specs),
            not_recorded={} if self._usage_gap is None else {"usage": self._usage_gap},
        )
