"""The support agent: plain Python, deterministic and offline (a rule-based stand-in for an LLM
agent, as in examples/quickstart). It handles two kinds of request:

- "Charge <email> <amount> EUR for <reason>": find the customer, charge the card, open a ticket
  recording the payment. A payment API times out now and then, so a timeout is retried once; a
  second timeout, or any other error, is not retried: the agent opens a ticket for a human
  instead and says the payment did not go through (charging twice is worse than not at all).
- "Open a ticket for <email>: <subject>": find the customer, open the ticket.
"""

from __future__ import annotations

import re

from tools import charge_card, create_ticket, find_customer  # tools.py, next to this file

__all__ = ["handle"]

CHARGE = re.compile(r"charge (\S+@\S+) (\d+) eur for (.+)", re.IGNORECASE)
TICKET = re.compile(r"open a ticket for (\S+@\S+): (.+)", re.IGNORECASE)


def handle(request: str) -> str:
    """The agent's answer to one request."""
    if match := CHARGE.match(request.strip()):
        email, amount, reason = match.group(1), int(match.group(2)), match.group(3)
        return _charge(email, amount, reason)
    if match := TICKET.match(request.strip()):
        customer = find_customer(match.group(1))
        ticket = create_ticket(customer["id"], match.group(2))
        return f"Opened ticket {ticket['id']} for {customer['name']}."
    return "Sorry, I can only charge a card or open a ticket."


def _charge(email: str, amount: int, reason: str) -> str:
    customer = find_customer(email)
    try:
        payment = _charge_retrying_a_timeout(customer["id"], amount)
    except Exception as exc:  # the payment did not go through: a human takes over
        ticket = create_ticket(customer["id"], f"payment of {amount} EUR failed ({exc})")
        return f"The payment did not go through; ticket {ticket['id']} is open for a human."
    ticket = create_ticket(customer["id"], f"charged {amount} EUR for {reason}")
    return f"Charged {amount} EUR ({payment['id']}); ticket {ticket['id']}."


def _charge_retrying_a_timeout(customer_id: str, amount: int) -> dict[str, str]:
    try:
        return charge_card(customer_id, amount)
    except TimeoutError:  # once: the API may have been slow, not down
        return charge_card(customer_id, amount)
