"""An OpenAI Agents SDK (`openai-agents`, imported as `agents`) `Agent` as an agenteval agent.

Each trial plays its case with `Runner.run`, one run per user turn: the next turn's input is the
previous run's items (`result.to_input_list()`) and the new user message, sent to the agent that
answered last (`result.last_agent`, as the SDK's own multi-turn examples continue after a
handoff). Every trial has its own run context, hooks and run config: concurrent trials share
nothing but the user's `Agent`, which the SDK allows.

What is read, and from where (`openai_agents_read.py`): tool calls and outputs from the run
items, paired by call id; a tool's error from the run config's `tool_error_formatter` (the SDK
hands it the exception, then sends the model its default message); the agents that ran and the
model calls with their usage from run hooks (`on_agent_start`, `on_llm_end`), live, so a run
that raises keeps them (and the function tools it started: `on_tool_start`); the final output
as text (structured output as JSON). A guardrail's tripwire ends the trial as a recorded outcome,
not a crash (`guardrail_trip`); running out of turns is the trial's failure (`TurnLimitError`).

Tool mocks, injected failures, replayed answers and `agenteval.state()`: a trial with an
environment (`agents/environment.py`) runs a copy of the agent graph whose function tools ask
the environment before running (`openai_agents_mock.py`); the user's agent is never changed,
and a trial without one runs it as it is, unless a tool of it answers the model its errors by a
handler of its own (`failure_error_function`, a timeout): the formatter never sees those, the
copy's handlers note them.

Tracing: the SDK exports traces to OpenAI's servers by default. agenteval never sends anything
anywhere, so every run it makes has `tracing_disabled=True` in its own `RunConfig` (per run, not
the SDK's global switch: the user's own runs elsewhere in the process keep their setting).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, ClassVar, Self

from agenteval.agents.frameworks.base import FrameworkAgent, TrialBuilder, conversation
from agenteval.agents.frameworks.openai_agents_mock import (
    AnsweringGraph,
    notes_handled_errors,
    recording_errors,
)
from agenteval.agents.frameworks.openai_agents_read import (
    RunReader,
    guardrail_trip,
    input_items,
    tool_specs_of,
    tools_complete_of,
)
from agenteval.agents.trial_state import current_environment
from agenteval.case import EvalCase
from agenteval.errors import AgentLoadError
from agenteval.trace import Failure, FailureCause, ToolSpec, Trial

if TYPE_CHECKING:
    from agents import RunConfig

__all__ = ["OpenAIAgentsAgent", "TurnLimitError"]

DEFAULT_MAX_TURNS = 10
"""The SDK's own default for `Runner.run(max_turns=...)`."""


class OpenAIAgentsAgent(FrameworkAgent):
    """An OpenAI Agents SDK `Agent`, run with `Runner.run` once per user turn of a case.

    `context`: a function making the run context (`Runner.run(context=...)`) for each trial,
    for agents whose tools or instructions read one; called once per trial (every turn of the
    trial shares it), never shared between trials. `run_config`: the SDK's `RunConfig` to run
    with (its `tracing_disabled` is forced on, and its `tool_error_formatter` still applies).
    `max_turns`: the SDK's limit of model turns per run (exceeding it fails the trial).
    """

    framework: ClassVar[str] = "openai-agents"

    def __init__(
        self,
        agent: Any,
        *,
        context: Callable[[], Any] | None = None,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        super().__init__(agent)
        self.context = context
        self.run_config = run_config
        self.max_turns = max_turns
        self._answering: AnsweringGraph | None = None
        self._handled_errors: bool | None = None

    @classmethod
    def of(cls, agent: Any) -> Self:
        """The adapter of an SDK `Agent`; any other SDK object (a `RealtimeAgent`, which
        `Runner.run` cannot run, a tool, a handoff) is refused, naming what to pass."""
        from agents import Agent

        if isinstance(agent, cls):
            return agent
        if not isinstance(agent, Agent):
            raise AgentLoadError(
                f"{type(agent).__name__} {getattr(agent, 'name', '')!r} is an OpenAI Agents SDK "
                "object that Runner.run cannot run",
                hint="pass an agents.Agent (a RealtimeAgent runs only in a realtime session)",
            )
        return cls(agent)

    @property
    def name(self) -> str:
        return str(getattr(self.agent, "name", "") or type(self.agent).__name__)

    def tool_specs(self) -> dict[str, ToolSpec]:
        """The function tools of the agent and of every agent it can hand off to (handoffs
        given as agents; a `handoff(...)` object's target adds its tools when it runs)."""
        return tool_specs_of(self.agent)

    def tools_complete(self) -> bool:
        return tools_complete_of(self.agent)

    def _run_config(self, reader: RunReader) -> RunConfig:
        """This trial's run config: the user's (or the SDK's default), with tracing off and
        tool errors reported to `reader` before the user's own formatter (if any) runs."""
        from agents import RunConfig

        base = self.run_config if self.run_config is not None else RunConfig()
        return dataclasses.replace(
            base,
            tracing_disabled=True,
            tool_error_formatter=reader.tool_error_formatter(base.tool_error_formatter),
        )

    async def run_case(self, case: EvalCase) -> Trial:
        from agents import Runner

        talk = conversation(case)
        builder = TrialBuilder(talk, self.tool_specs())
        reader = RunReader(builder)
        config = self._run_config(reader)
        context = self.context() if self.context is not None else None
        # A trial with tool mocks, a replay or a state runs the copy whose tools ask its
        # environment (`openai_agents_mock.py`), and so does every trial of an agent with a
        # tool whose errors the SDK answers by a handler of the tool's own, or whose output
        # guardrails may reject its result, which the copy notes; any other runs the user's
        # agent itself.
        copied = current_environment() is not None or self._notes_handled_errors()
        graph = self._answering_graph() if copied else None
        hooks = reader.hooks(config, graph.guard if graph is not None else None)
        agent = self.agent if graph is None else graph.agent(self.agent)
        errors: AbstractContextManager[None] = (
            recording_errors(reader) if graph is not None else nullcontext()
        )
        items: list[Any] = input_items(talk.history)
        with builder.kept_on_failure(), errors:
            async for turn in talk.play(builder):
                items.append({"role": "user", "content": turn})
                try:
                    result = await Runner.run(
                        agent,
                        items if len(items) > 1 else turn,
                        context=context,
                        max_turns=self.max_turns,
                        hooks=hooks,
                        run_config=config,
                    )
                except BaseException as exc:
                    trip = self._stopped(exc, reader)
                    if trip is None:
                        raise
                    return trip
                reader.read_items(result.new_items)
                builder.answer(reader.final_text(result.final_output))
                items = result.to_input_list()
                agent = result.last_agent
        return builder.build()

    def _notes_handled_errors(self) -> bool:
        if self._handled_errors is None:
            self._handled_errors = notes_handled_errors(self.agent)
        return self._handled_errors

    def _answering_graph(self) -> AnsweringGraph:
        """The copy of the agent graph that answers tools from the trial's environment, made
        on the first trial that has one and shared by the next (the environment is read per
        call, from the trial's own context)."""
        if self._answering is None:
            self._answering = AnsweringGraph()
        return self._answering

    def _stopped(self, exc: BaseException, reader: RunReader) -> Trial | None:
        """What a run that raised leaves: its calls read into the trial, and the trial itself
        when a guardrail tripped (a recorded outcome, not a crash); None when `exc` is to
        propagate as the trial's failure (`MaxTurnsExceeded` reworded as `TurnLimitError`)."""
        from agents import AgentsException, MaxTurnsExceeded

        run_data = exc.run_data if isinstance(exc, AgentsException) else None
        if run_data is not None:
            reader.read_items(run_data.new_items)
        reader.read_started(exc)
        if isinstance(exc, MaxTurnsExceeded):
            raise TurnLimitError(
                f"the agent used all {self.max_turns} turns of its run without a final answer "
                f"(the SDK's MaxTurnsExceeded: {exc}); if the case needs more, run "
                f"OpenAIAgentsAgent(agent, max_turns=...)"
            ) from exc
        trip = guardrail_trip(exc)
        if trip is None:
            return None
        # A tripwire is the agent refusing by design: the trial ends here, with no answer,
        # and says which guardrail stopped it (see `guardrail_trip`).
        reader.builder.metadata("guardrail", trip.record)
        trial = reader.builder.build()
        trial.failure = Failure(
            cause=FailureCause.AGENT_ERROR, message=trip.message, error_type=type(exc).__name__
        )
        return trial


class TurnLimitError(Exception):
    """A run used all its `max_turns` model turns without a final answer (the SDK's
    `MaxTurnsExceeded`, with the limit and how to raise it): the agent's failure."""
