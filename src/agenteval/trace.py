"""What an agent did in one trial: its answer, steps, tool calls, model calls, time and failures."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AgentStep",
    "EndReason",
    "Failure",
    "FailureCause",
    "ModelCall",
    "SimulatedConversation",
    "ToolCall",
    "ToolSpec",
    "Trial",
    "Usage",
    "UserTurn",
    "utc_now",
]


def utc_now() -> datetime:
    """The current time in UTC, as every record carries it."""
    return datetime.now(UTC)


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid", validate_assignment=False)


class ToolCall(_Model):
    """One call of a tool: its name, arguments, and what it returned or the error it raised.

    `args` is an alias of `arguments`, the criterion API's name for it: `ToolCall(name=, args=)`
    sets `arguments`, and `call.args` reads them (the same dict).
    """

    name: str
    arguments: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "args")
    )
    result: Any = None
    error: str | None = None
    id: str | None = None
    started_at: datetime | None = None
    duration_s: float | None = None
    mocked: Literal["mock", "replay"] | None = None
    """Who answered the call when the tool did not run: a mock (`tool_mocks`) or the replay of
    a stored run (`--replay-tools`); None when the tool ran."""

    @property
    def args(self) -> dict[str, Any]:
        """Alias of `arguments` (the criterion API's name): the same dict, not a copy."""
        return self.arguments

    @property
    def ok(self) -> bool:
        """Whether the call ran without an error."""
        return self.error is None


class AgentStep(_Model):
    """One step of an agent: what it thought, the tools it called, and what it said."""

    thought: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    output: str | None = None


class Usage(_Model):
    """Token counts, summed over model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ModelCall(_Model):
    """One call to a language model made by the agent."""

    model: str
    provider: str | None = None
    usage: Usage = Field(default_factory=Usage)
    started_at: datetime | None = None
    duration_s: float | None = None
    usage_recorded: bool = True
    """False when the trace says the model was called but records none of its tokens (an
    OpenAI chat completion streamed without `stream_options={"include_usage": True}` reports
    none): `usage` then reads 0, and what the call cost is unknown, never free."""


class FailureCause(StrEnum):
    """Why a trial did not complete."""

    AGENT_ERROR = "agent_error"
    """The agent raised an exception of its own."""
    TIMEOUT = "timeout"
    """The trial ran past its time limit."""
    RATE_LIMITED = "rate_limited"
    """A provider refused for rate limiting, and retries did not get through."""
    PROVIDER_ERROR = "provider_error"
    """A provider answered with a server error (5xx), and retries did not get through."""
    CONNECTION_ERROR = "connection_error"
    """A connection to a provider or service failed, and retries did not get through."""
    NO_RESPONSE = "no_response"
    """The agent finished without an answer (None or empty)."""
    INVALID_OUTPUT = "invalid_output"
    """The agent returned something that is not an answer agenteval can read."""
    UNMOCKED_TOOL = "unmocked_tool"
    """A case with `tool_mocks_only` called a tool no mock answers (even if the agent caught
    the error the call raised: the harness saw it)."""
    REPLAY_MISS = "replay_miss"
    """Replaying a stored run's tool results, the agent made a call the stored run never made
    (and `--replay-fallthrough` did not let it run for real)."""
    USER_SIMULATOR_ERROR = "user_simulator_error"
    """The simulated user could not give its next message (its model refused, answered out of
    shape twice, or stayed unreachable; a scripted user raised): not the agent's failure, so
    the trial is retried and, when retries run out, left out of scoring."""
    WORKER_CRASHED = "worker_crashed"
    """The worker process running the trial (executor `process` or `ray`) died under it: the
    agent exited the process (`os._exit`), crashed in native code, or passed the worker's
    memory limit; `Failure.exit_code` says how. Only the agent's code ran there, so it is the
    agent's failure: scored, not retried."""
    WORKER_LOST = "worker_lost"
    """The machine or Ray worker running the trial went away for a reason outside it (a
    cluster node lost): infrastructure, retried on another worker and, when retries run
    out, left out of scoring."""

    @property
    def is_infrastructure(self) -> bool:
        """Whether the cause lies outside the agent's choices, so a retry may succeed."""
        return self in _INFRASTRUCTURE


_INFRASTRUCTURE = frozenset(
    {
        FailureCause.TIMEOUT,
        FailureCause.RATE_LIMITED,
        FailureCause.PROVIDER_ERROR,
        FailureCause.CONNECTION_ERROR,
        FailureCause.USER_SIMULATOR_ERROR,
        FailureCause.WORKER_LOST,
    }
)


class Failure(_Model):
    """Why a trial ended without an answer."""

    cause: FailureCause
    message: str = ""
    error_type: str | None = None
    exit_code: int | None = None
    """For `worker_crashed`: the worker's exit code, negative for the signal that ended it
    (-11: SIGSEGV, -9: SIGKILL, as Python's `Popen.returncode` gives it); None when the
    executor cannot tell (a Ray worker)."""


class EndReason(StrEnum):
    """Why a simulated conversation ended (`SimulatedConversation.end_reason`)."""

    GOAL_ACHIEVED = "goal_achieved"
    """The simulated user said its goal was met."""
    AGENT_CANNOT_HELP = "agent_cannot_help"
    """The simulated user concluded the agent cannot do what it asks."""
    USER_GAVE_UP = "user_gave_up"
    """The simulated user gave up (the agent went in circles, asked too much, ...)."""
    MAX_TURNS = "max_turns"
    """The conversation reached the case's `max_turns` user messages without a stop."""
    USER_STOPPED = "user_stopped"
    """A scripted user returned None: its script had nothing more to say."""
    TRIAL_FAILED = "trial_failed"
    """The trial ended on a failure mid-conversation (the agent's error, a timeout, the
    simulator's own failure): see `Trial.failure`."""


class UserTurn(_Model):
    """One user message of a simulated conversation and the agent's answer to it."""

    user: str
    source: Literal["written", "simulated", "scripted"]
    """Who wrote the message: the case (its written turns, a `starting_prompt`), the
    simulator's model, or a scripted user."""
    agent: str | None = None
    """The agent's answer to it (None: it gave none, or the trial failed on this turn)."""


class SimulatedConversation(_Model):
    """What a simulated user did in one trial (`Trial.simulation`): every turn, why the
    conversation ended, and what the simulator's own model calls used and cost (reported apart
    from the agent's and the judge's)."""

    user: str
    """The simulated user: the simulator's `provider:model`, or `script:module:function`."""
    turns: list[UserTurn] = Field(default_factory=list)
    end_reason: EndReason | None = None
    end_detail: str | None = None
    """The simulator's word on why it stopped."""
    model_calls: list[ModelCall] = Field(default_factory=list)
    """The simulator's calls to its model (none for a scripted user)."""
    cached_calls: int = 0
    """Replies the simulator took from its cache instead of calling its model."""
    cost_usd: float | None = None
    """What the simulator's model calls cost, priced as the judge's are (None: unpriced)."""

    @property
    def usage(self) -> Usage:
        """The simulator's tokens, summed over its model calls."""
        total = Usage()
        for call in self.model_calls:
            total = total + call.usage
        return total

    @property
    def turns_to_goal(self) -> int | None:
        """The user messages it took to reach the goal; None when the goal was not reached."""
        return len(self.turns) if self.end_reason is EndReason.GOAL_ACHIEVED else None


class Trial(_Model):
    """One run of the agent on one case.

    `output` is the final answer; `tool_calls` is every tool call in order. When only `steps`
    are given, `tool_calls` is filled from them. `trial` is the trial's index within its case
    (0, 1, ...). The criterion API calls this class `ExecutionResult` (an alias) and the answer
    `actual_response`, accepted as a constructor keyword for `output` and read as a property.
    """

    case_id: str = ""
    trial: int = 0
    output: str | None = Field(
        default=None, validation_alias=AliasChoices("output", "actual_response")
    )
    steps: list[AgentStep] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    node_visits: list[str] = Field(default_factory=list)
    retrieved_docs: list[str] | None = None
    model_calls: list[ModelCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    started_at: datetime | None = None
    latency_s: float | None = None
    working_latency_s: float | None = None
    attempts: int = 1
    retries: dict[str, int] = Field(default_factory=dict)
    failure: Failure | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    not_recorded: dict[str, str] = Field(default_factory=dict)
    """What the trial's trace does not record, by field (`output`, `tool_calls`), with why: an
    OpenTelemetry instrumentation that captured no message content says a model answered, or
    asked for tools, without saying what. A scorer that needs a field named here gives no
    score rather than judging an absence that is only a gap in the trace."""
    tool_specs: dict[str, ToolSpec] = Field(default_factory=dict)
    """The tools offered to the model in this trial, by name, as its trace declares them
    (`gen_ai.tool.definitions`, `llm.tools.*`, ...), for checking calls of tools the run itself
    does not know."""
    trace_id: str | None = None
    """The OpenTelemetry trace this trial ran in (32 lowercase hex digits), when it had one."""
    span_id: str | None = None
    """The trial's own span in that trace (16 lowercase hex digits): scores sent out as
    `gen_ai.evaluation.result` events are parented to it."""
    state: dict[str, Any] | None = None
    """The environment state the trial left (`agenteval.state()`, a case's `initial_state`,
    an ADK session's state); None when the trial had none."""
    simulation: SimulatedConversation | None = None
    """The conversation a simulated user held with the agent (a case's `user_simulation`);
    None when the case plays only written turns."""

    @model_validator(mode="after")
    def _fill_from_steps(self) -> Trial:
        if self.steps and not self.tool_calls:
            self.tool_calls = [call for step in self.steps for call in step.tool_calls]
        if self.output is None and self.steps:
            outputs = [step.output for step in self.steps if step.output]
            if outputs:
                self.output = outputs[-1]
        usage = self.usage
        unset = not (
            usage.input_tokens
            or usage.output_tokens
            or usage.cached_tokens
            or usage.reasoning_tokens
        )
        if self.model_calls and unset:
            total = Usage()
            for call in self.model_calls:
                total = total + call.usage
            self.usage = total
        return self

    @property
    def responded(self) -> bool:
        """Whether the model got to respond: no timeout, rate limit, provider or connection
        failure in the way.

        A trial the agent itself failed (`agent_error`, `no_response`, `invalid_output`) did get
        to respond, even with no answer and no tool call: the scorers judge it.
        """
        return self.failure is None or not self.failure.cause.is_infrastructure

    @property
    def actual_response(self) -> str:
        """Alias of `output` (the criterion API's name), read as text: `""` when there is none."""
        return self.output or ""


class ToolSpec(BaseModel):
    """A tool as a model sees it: its name, description and the JSON schema of its arguments.
    Pure data: the scorers, the trace readers and the run record name tools by it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
