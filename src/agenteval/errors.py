"""The errors a user can cause, each carrying where it happened and how to fix it; and
`InfrastructureError`, which an agent raises for a failure that is not its own."""

from __future__ import annotations

from pathlib import Path

from agenteval.trace import FailureCause, ModelCall

__all__ = [
    "AgentEvalError",
    "AgentLoadError",
    "ConfigError",
    "DatasetError",
    "InfrastructureError",
    "ScorerError",
    "StoreError",
    "UserSimulatorError",
]


class InfrastructureError(Exception):
    """Raised by an agent (or a tool it calls) for a failure that is not the agent's: a service
    it depends on is down, busy or unreachable.

    The trial is retried like any infrastructure failure (up to the run's `retries`, waiting
    `retry_after_s` when given) and, when the retries run out, ends with `cause`, left out of
    scoring. Raise it `from` the original error, so the trial keeps what really happened:
    `raise agenteval.InfrastructureError("vector store busy", cause="rate_limited") from exc`.

    Anything else an agent raises is its own error (`agent_error`), scored as a failure, unless
    its type is one agenteval knows (see `agenteval.failures`) or the run declares it
    (`infrastructure_errors`). Not an `AgentEvalError`: it is no mistake in the user's input.
    """

    def __init__(
        self,
        message: str = "",
        *,
        cause: FailureCause | str = FailureCause.PROVIDER_ERROR,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        kind = FailureCause(cause)
        if not kind.is_infrastructure:
            raise ValueError(
                f"an InfrastructureError's cause is rate_limited, provider_error, "
                f"connection_error, timeout or user_simulator_error, not {kind.value}"
            )
        self.cause = kind
        self.retry_after_s = retry_after_s


class UserSimulatorError(InfrastructureError):
    """The simulated user could not give its next message: its model refused, answered out of
    shape twice or stayed unreachable, or a scripted user raised. Not the agent's failure: the
    trial is retried, and left out of scoring when retries run out (`user_simulator_error`,
    or `rate_limited` and the like when the simulator's provider was the trouble). Here, below
    both, so the simulator (`agenteval.simulation`) and the agents' side (`agents.users`)
    raise and catch the one class."""

    def __init__(
        self,
        message: str,
        *,
        cause: FailureCause | str = FailureCause.USER_SIMULATOR_ERROR,
        retry_after_s: float | None = None,
        model_calls: list[ModelCall] | None = None,
        cost_usd: float | None = None,
    ) -> None:
        super().__init__(message, cause=cause, retry_after_s=retry_after_s)
        self.model_calls = list(model_calls or ())
        """The calls the simulator's model answered before it gave up (an unreadable reply
        asked twice): spent all the same, so counted on the trial's `simulation`."""
        self.cost_usd = cost_usd


class AgentEvalError(Exception):
    """A mistake in the user's input: a dataset, a config, an agent or scorer reference, a store.

    The CLI prints these as one or two lines (no traceback) and exits with status 2.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        case: str | int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.case = case
        self.field = field
        self.hint = hint
        super().__init__(self.render())

    @property
    def location(self) -> str:
        """Where the mistake is, as `file:line, case X, field Y` (empty when unknown)."""
        parts: list[str] = []
        if self.file is not None:
            parts.append(f"{self.file}:{self.line}" if self.line is not None else self.file)
        if self.case is not None:
            parts.append(
                f"case {self.case}" if isinstance(self.case, int) else f"case {self.case!r}"
            )
        if self.field is not None:
            # A command-line flag is named as typed: `--agent`, not "field '--agent'".
            parts.append(self.field if self.field.startswith("--") else f"field {self.field!r}")
        return ", ".join(parts)

    def render(self) -> str:
        """The message as the CLI prints it."""
        where = self.location
        text = f"{where}: {self.message}" if where else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class DatasetError(AgentEvalError):
    """A case file that cannot be read or does not describe valid cases."""


class ConfigError(AgentEvalError):
    """An `agenteval.yaml` or a command-line setting that is not valid."""


class AgentLoadError(AgentEvalError):
    """An agent reference (`module:function`, `file.py:function`) that cannot be loaded."""


class ScorerError(AgentEvalError):
    """A scorer name or reference that does not resolve to a scorer."""


class StoreError(AgentEvalError):
    """A run store that cannot be opened, is corrupt, or lacks the run asked for."""
