"""The errors a user can cause, each carrying where it happened and how to fix it."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AgentEvalError",
    "AgentLoadError",
    "ConfigError",
    "DatasetError",
    "ScorerError",
    "StoreError",
]


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
            parts.append(f"field {self.field!r}")
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
