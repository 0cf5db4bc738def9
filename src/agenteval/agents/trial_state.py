"""The running trial's environment, as tools and framework adapters reach it:
`current_environment()` and `agenteval.state()` (through the trial's recorder, so nothing is
added to a trial that does not ask)."""

from __future__ import annotations

from typing import Any

from agenteval.agents.environment import ToolEnvironment
from agenteval.agents.recorder import current_recorder

__all__ = ["current_environment", "state"]


def current_environment() -> ToolEnvironment | None:
    """The environment of the trial running in this context, if it has one."""
    recorder = current_recorder()
    return None if recorder is None else recorder.environment


def state() -> dict[str, Any]:
    """The environment state of the trial running in this context: a mapping the agent's tools
    read and change, which starts from the case's `initial_state` and is stored with the trial
    (the `state_match` scorer checks it against `expected_state`).

    Outside a trial, raises `RuntimeError`: there is no trial whose state it would be."""
    recorder = current_recorder()
    if recorder is None:
        raise RuntimeError(
            "agenteval.state() is the state of the trial running: call it from the agent or "
            "its tools while agenteval runs them"
        )
    if recorder.environment is None:
        recorder.environment = ToolEnvironment(stateful=True)
    recorder.environment.stateful = True
    return recorder.environment.state
