"""The failure classification, under its former engine name: it lives in `agenteval.failures`
(below the judge, the providers and the engine, which all classify failures); and the run's
own failure when its workers are gone (`WorkerLostError`), which the scheduler and the
executors raise."""

from __future__ import annotations

from agenteval.failures import Classified, TrialTimeoutError, classify, retry_after_s

__all__ = ["Classified", "TrialTimeoutError", "WorkerLostError", "classify", "retry_after_s"]


class WorkerLostError(RuntimeError):
    """A worker or the writer ended with jobs left and no error of its own (a `CancelledError`
    nobody asked for, which a task group takes for a cancellation): the run cannot be finished,
    and says so rather than finish with trials missing."""
