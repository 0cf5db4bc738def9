"""How a failure that a retry may help is retried: exponential backoff with full jitter, and the
provider's `Retry-After` honoured (`RetryPolicy`). The engine retries trials with it, the judge
and the built-in agent retry model calls with it."""

from __future__ import annotations

import random
from dataclasses import dataclass

from agenteval.failures import retry_after_s

__all__ = ["RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """How a trial that failed for infrastructure reasons is retried.

    Waits grow exponentially from `initial_wait_s` up to `max_wait_s`, with full jitter; a
    provider's `Retry-After` is honoured (up to `max_wait_s`).
    """

    max_retries: int = 2
    initial_wait_s: float = 1.0
    max_wait_s: float = 30.0

    def wait_s(self, retry_number: int, exc: BaseException) -> float:
        """How long to wait before retry number `retry_number` (1-based)."""
        asked = retry_after_s(exc)
        if asked is not None:
            return min(asked, self.max_wait_s)
        ceiling = min(self.max_wait_s, self.initial_wait_s * 2 ** (retry_number - 1))
        return random.uniform(ceiling / 2, ceiling)
