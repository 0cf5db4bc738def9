"""The adaptive throttle, under its former name: it lives in `agenteval.providers.throttle`
(with the provider clients it paces)."""

from __future__ import annotations

from agenteval.providers.throttle import (
    DECREASE,
    FLOOR,
    RATE_LIMIT_RETRIES,
    AdaptiveLimit,
    RetryBudget,
    endpoint,
    shared_limit,
    shared_limits,
)

__all__ = [
    "DECREASE",
    "FLOOR",
    "RATE_LIMIT_RETRIES",
    "AdaptiveLimit",
    "RetryBudget",
    "endpoint",
    "shared_limit",
    "shared_limits",
]
