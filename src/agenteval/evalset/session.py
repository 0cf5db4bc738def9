"""`final_session_state_match`: the session state the agent ends with, against the state the case
expects (ADK's `final_session_state`, which ADK reads but never checks)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agenteval.case import EvalCase
from agenteval.evalset.adk import FINAL_SESSION_STATE
from agenteval.redaction import mask_secret_keys
from agenteval.score import Score
from agenteval.trace import Trial

__all__ = ["SESSION_STATE", "FinalSessionStateMatch", "final_session_state_match"]

SESSION_STATE = "session_state"
"""`Trial.metadata` key under which an agent reports the session state it ended with (return a
mapping `{"output": ..., "metadata": {"session_state": {...}}}`, or a `Trial` with it)."""

_NAME = "final_session_state_match"
_CHECKED = "agenteval compares final_session_state; Google ADK reads it but never checks it"


def _shown(key: str, value: Any) -> str:
    # A reason is text once written: a value under a secret-named key, at any depth (the state
    # key itself included), is masked while it is data, and deep or circular state is cut.
    shown = mask_secret_keys({key: value})
    text = json.dumps(next(iter(shown.values())), ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class FinalSessionStateMatch:
    """Whether the session ended in the state the case expects.

    Every key of the expected state (`case.metadata["final_session_state"]`) must be in the
    state the agent reports (`trial.metadata["session_state"]`) with an equal value (JSON
    equality: `1` equals `1.0`; nested objects compare whole); other keys of the actual state
    are allowed. The value is the share of expected keys that match; it passes at `threshold`.

    No score when the case expects no state, when an infrastructure failure stopped the trial,
    or when the agent reports no state at all (the reason says how to report it). An agent that
    failed by itself and reported nothing scores 0.
    """

    name: str = _NAME
    threshold: float = 1.0

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        expected = case.metadata.get(FINAL_SESSION_STATE)
        if not isinstance(expected, dict) or not expected:
            return Score(name=self.name, reason="the case expects no final session state")
        if not trial.responded and trial.failure is not None:
            return Score(
                name=self.name,
                reason=f"no score: the trial failed ({trial.failure.cause.value}) before the "
                "agent could finish",
            )
        actual = trial.metadata.get(SESSION_STATE)
        if not isinstance(actual, dict):
            if trial.failure is not None:
                return Score(
                    name=self.name,
                    value=0.0,
                    passed=False,
                    reason=f"the agent failed ({trial.failure.cause.value}) and reported no "
                    "session state",
                    details={"checked_by": _CHECKED},
                )
            return Score(
                name=self.name,
                reason="the agent reported no session state: return it as "
                "metadata['session_state'] (a mapping) with the answer",
            )
        missing = [key for key in expected if key not in actual]
        different = {
            key: {"expected": value, "actual": actual[key]}
            for key, value in expected.items()
            if key in actual and actual[key] != value
        }
        matched = [key for key in expected if key in actual and key not in different]
        value = len(matched) / len(expected)
        problems = [f"{key!r} is missing" for key in missing] + [
            f"{key!r} is {_shown(key, d['actual'])}, expected {_shown(key, d['expected'])}"
            for key, d in different.items()
        ]
        reason = f"{len(matched)} of {len(expected)} expected state keys match"
        if problems:
            reason += ": " + "; ".join(problems)
        return Score(
            name=self.name,
            value=value,
            passed=value >= self.threshold,
            reason=reason,
            details={
                "matched": matched,
                "missing": missing,
                "different": different,
                "checked_by": _CHECKED,
            },
        )


final_session_state_match = FinalSessionStateMatch()
"""The scorer with its defaults, to name as `agenteval.evalset.session:final_session_state_match`."""
