"""A sync agent that charges a card through a `ThreadPoolExecutor` it starts itself, whose
threads do not carry the trial's context, and answers with what the charge returned. The
real `charge_card` is the live system: each call of it is counted in `LIVE_CHARGES` (in the
process that made it)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import agenteval

__all__ = ["LIVE_CHARGES", "charge_card", "run"]

LIVE_CHARGES: list[int] = []


@agenteval.tool
def charge_card(amount: int) -> dict[str, Any]:
    """Charge the customer's card (the live system)."""
    LIVE_CHARGES.append(amount)
    return {"status": "captured"}


def run(question: str) -> str:
    """Charge 45 from a thread of the agent's own pool; say how it went."""
    with ThreadPoolExecutor(2) as pool:
        charged = pool.submit(charge_card, 45).result()
    return f"charged: {charged['status']}"
