"""The support agent's tools. Two of them touch live systems: `create_ticket` opens a ticket
in the helpdesk and `charge_card` charges the customer's card. Here "live" is a ledger file
(`ledger.jsonl`, next to this file) so that a real call leaves a trace you can see; under CI
(`CI` set in the environment) they refuse to run at all, as a payment API's credentials would
not be there.

In the evaluation every call of these two is answered by a mock (`tool_mocks` in `cases.yaml`),
so the ledger is never written and nothing is charged: that is what the example shows.
`find_customer` only reads, and runs for real.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import agenteval

__all__ = ["charge_card", "create_ticket", "find_customer"]

LEDGER = Path(__file__).with_name("ledger.jsonl")

CUSTOMERS = {
    "ada@example.com": {"id": "C-1", "name": "Ada Lovelace", "card": "visa-4242"},
    "alan@example.com": {"id": "C-2", "name": "Alan Turing", "card": "amex-0005"},
}


def _live(action: str, record: dict[str, Any]) -> dict[str, Any]:
    """Do `action` for real: refused under CI, else written to the ledger."""
    if os.environ.get("CI"):
        raise RuntimeError(
            f"{action} would touch a live system, and CI has no credentials for it: mock it "
            "(tool_mocks) or run outside CI"
        )
    with LEDGER.open("a", encoding="utf-8") as ledger:
        ledger.write(json.dumps({"action": action, **record}) + "\n")
    return {"id": f"{action}-{sum(1 for _ in LEDGER.open(encoding='utf-8'))}", **record}


@agenteval.tool
def find_customer(email: str) -> dict[str, Any]:
    """The customer with this e-mail address (read only)."""
    customer = CUSTOMERS.get(email.lower())
    if customer is None:
        raise LookupError(f"no customer with e-mail {email}")
    return customer


@agenteval.tool
def charge_card(customer_id: str, amount_eur: int) -> dict[str, Any]:
    """Charge the customer's card on file (live: a payment)."""
    return _live("charge", {"customer_id": customer_id, "amount_eur": amount_eur})


@agenteval.tool
def create_ticket(customer_id: str, subject: str) -> dict[str, Any]:
    """Open a ticket in the helpdesk (live: a human will read it)."""
    return _live("ticket", {"customer_id": customer_id, "subject": subject})
