"""The summary's simulated conversations: over the trials a simulated (or scripted) user played,
how each conversation ended, how many user turns it took, how many to reach the goal, and what
the simulator itself used and cost.

Apart from the agent's and the judge's numbers: a simulator's tokens are not the agent's work,
and a run scored without its simulator (rescoring, `agenteval score`) must read the same agent
cost. `SummaryBuilder` adds each trial here; the run's `CostStats.simulator_usd` comes from
`cost_usd` and is part of the run's total (the terminal and the HTML report say so).

A run without any simulated conversation has no `SimulationStats` at all (`Summary.simulation`
is None): no section, no line, no JSON key.
"""

from __future__ import annotations

import statistics
from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from agenteval.redaction import Redactor
from agenteval.report.floats import FloatLog
from agenteval.trace import EndReason, ToolCall, Trial, Usage

__all__ = ["END_REASON_WORDS", "SimulationBuilder", "SimulationStats", "turn_tool_calls"]

END_REASON_WORDS: dict[str, str] = {
    EndReason.GOAL_ACHIEVED.value: "the user's goal was met",
    EndReason.AGENT_CANNOT_HELP.value: "the user concluded the agent cannot help",
    EndReason.USER_GAVE_UP.value: "the user gave up",
    EndReason.MAX_TURNS.value: "the conversation reached max_turns",
    EndReason.USER_STOPPED.value: "the scripted user had nothing more to say",
    EndReason.TRIAL_FAILED.value: "the trial failed mid-conversation",
}
"""What each end reason means, in the order the summary tallies them."""


class SimulationStats(BaseModel):
    """The simulated conversations of a run (`Summary.simulation`), over the trials that had
    one (`Trial.simulation`).

    `turns_to_goal_*` is a measurement over the conversations that reached their goal, never a
    pass or a fail; None when none did.
    """

    model_config = ConfigDict(extra="forbid")

    trials: int = 0
    """Trials with a simulated conversation."""
    end_reasons: dict[str, int] = Field(default_factory=dict)
    """Conversations by end reason, every reason listed (zeros too), in `END_REASON_WORDS`'
    order; a conversation stored without a reason counts under `unknown`."""
    user_turns_mean: float | None = None
    """User messages per conversation (written ones included, as `max_turns` counts them)."""
    user_turns_max: int | None = None
    goal_achieved: int = 0
    turns_to_goal_mean: float | None = None
    turns_to_goal_median: float | None = None
    users: list[str] = Field(default_factory=list)
    """Who played the users (`openai:gpt-4o-mini`, `script:my_users:refund`), sorted."""
    usage: Usage = Field(default_factory=Usage)
    """The simulator's tokens (not the agent's, not the judge's)."""
    model_calls: int = 0
    """The simulator's calls to its model (a scripted user makes none)."""
    cached_calls: int = 0
    """Replies taken from the simulator's cache instead of a model call."""
    cost_usd: float | None = None
    """What the simulator's calls cost; None when none had a price. Part of the run's
    `CostStats.total_usd`."""
    unpriced: bool = False
    """Some of the simulator's calls used tokens and had no price (`cost_usd` leaves them
    out)."""
    models_without_usage: list[str] = Field(default_factory=list)
    """The simulator's models some of whose answers carried no token usage (a proxy that strips
    it): their cost is missing from `cost_usd`, not zero."""


class SimulationBuilder:
    """Accumulates `SimulationStats` one trial at a time (per trial: a few integers)."""

    def __init__(self) -> None:
        self._trials = 0
        self._reasons: Counter[str] = Counter()
        self._turns: list[int] = []
        self._to_goal: list[int] = []
        self._users: set[str] = set()
        self._usage = Usage()
        self._calls = 0
        self._cached = 0
        self._usd: float | None = None
        self._unpriced_models: set[str] = set()
        self._without_usage: set[str] = set()  # models called with no token usage recorded
        self._log: FloatLog | None = None  # only in a partial builder (see `SummaryBuilder`)

    def log_costs(self) -> None:
        """Keep every cost added, for `merge` (a partial builder)."""
        self._log = FloatLog()

    def merge(self, part: SimulationBuilder) -> None:
        """Count `part`'s conversations after this builder's, as if added here (see
        `SummaryBuilder.merge`)."""
        self._trials += part._trials
        self._reasons.update(part._reasons)
        self._turns += part._turns
        self._to_goal += part._to_goal
        self._users |= part._users
        self._usage = self._usage + part._usage
        self._calls += part._calls
        self._cached += part._cached
        if part._log is not None:
            for _key, values in part._log.items():
                self._usd = part._log.added(self._usd, values)
            if self._log is not None:
                self._log.extend(part._log)
        self._unpriced_models |= part._unpriced_models
        self._without_usage |= part._without_usage

    def add(self, trial: Trial) -> None:
        """Count the trial's conversation, if it had one."""
        conversation = trial.simulation
        if conversation is None:
            return
        self._trials += 1
        reason = conversation.end_reason
        self._reasons[reason.value if reason is not None else "unknown"] += 1
        self._turns.append(len(conversation.turns))
        if conversation.turns_to_goal is not None:
            self._to_goal.append(conversation.turns_to_goal)
        self._users.add(conversation.user)
        usage = conversation.usage
        self._usage = self._usage + usage
        self._calls += len(conversation.model_calls)
        self._cached += conversation.cached_calls
        if conversation.cost_usd is not None:
            self._usd = (self._usd or 0.0) + conversation.cost_usd
            if self._log is not None:
                self._log.add(("simulator", ""), conversation.cost_usd)
        elif usage.total_tokens:
            self._unpriced_models.update(call.model for call in conversation.model_calls)
        for call in conversation.model_calls:
            if not call.usage_recorded:  # its cost is unknown: never counted as free
                self._without_usage.add(call.model)

    @property
    def cost_usd(self) -> float | None:
        """The simulator's cost so far (None: nothing priced)."""
        return self._usd

    @property
    def models_without_usage(self) -> set[str]:
        """The simulator's models some of whose calls recorded no token usage."""
        return set(self._without_usage)

    @property
    def unpriced_models(self) -> set[str]:
        """The simulator's models that used tokens without a price (for the cost's list)."""
        return set(self._unpriced_models)

    def build(self, redactor: Redactor) -> SimulationStats | None:
        """The stats, secrets redacted from the users' labels; None without any conversation."""
        if not self._trials:
            return None
        reasons = {reason: self._reasons.get(reason, 0) for reason in END_REASON_WORDS}
        if self._reasons.get("unknown"):
            reasons["unknown"] = self._reasons["unknown"]
        to_goal = self._to_goal
        return SimulationStats(
            trials=self._trials,
            end_reasons=reasons,
            user_turns_mean=statistics.fmean(self._turns),
            user_turns_max=max(self._turns),
            goal_achieved=len(to_goal),
            turns_to_goal_mean=statistics.fmean(to_goal) if to_goal else None,
            turns_to_goal_median=float(statistics.median(to_goal)) if to_goal else None,
            users=sorted({redactor.redact_text(user) for user in self._users}),
            usage=self._usage,
            model_calls=self._calls,
            cached_calls=self._cached,
            cost_usd=self._usd,
            unpriced=bool(self._unpriced_models),
            models_without_usage=sorted(
                {redactor.redact_text(model) for model in self._without_usage}
            ),
        )


def turn_tool_calls(trial: Trial) -> list[list[ToolCall]] | None:
    """The tool calls each user turn of the trial's conversation led to, turn by turn; None
    when the trial's steps do not pair with its turns.

    Whatever plays a simulated conversation (a callable's turns, a framework adapter's
    `TrialBuilder`) records one step per user message, so step i holds turn i's calls. A trial
    that failed mid-turn, or an agent that returned its own steps, may not: its calls are then
    shown as the trial's steps, not guessed onto turns.
    """
    conversation = trial.simulation
    if conversation is None or len(trial.steps) != len(conversation.turns):
        return None
    return [list(step.tool_calls) for step in trial.steps]
