"""The failure classification, under its former engine name: it lives in `agenteval.failures`
(below the judge, the providers and the engine, which all classify failures)."""

from __future__ import annotations

from agenteval.failures import Classified, TrialTimeoutError, classify, retry_after_s

__all__ = ["Classified", "TrialTimeoutError", "classify", "retry_after_s"]
