"""The quickstart's agent: a rule-based stand-in for an LLM agent, so the example runs offline.

It works the way a small tool-using model does: it reads the question, picks tools, calls them
by name with JSON-like arguments, and writes the answer from what they returned. Each "model
turn" is reported with `agenteval.record_model_call`, its tokens counted from the text the turn
reads and writes, so the report shows usage and cost as it would for a real model.

Some intents below make a mistake on purpose. Each is a mistake real agents make, and each one
trips a different scorer: README.md has the table. Everything is deterministic.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from tools import calculator, lookup, search_docs  # tools.py, next to this file

import agenteval

__all__ = ["answer"]

MODEL = "quickstart-sim-1"
TOOLS: dict[str, Callable[..., Any]] = {
    "search_docs": search_docs,
    "calculator": calculator,
    "lookup": lookup,
}
# What a real model would be sent first: its instructions and the tools' JSON schemas.
SYSTEM_PROMPT = "Answer questions about Acme Travel. Tools:\n" + json.dumps(
    [agenteval.known_tools()[name].model_dump() for name in TOOLS]
)

CITY_CODES = {"lisbon": "LIS", "porto": "OPO", "madrid": "MAD", "zurich": "ZRH", "tokyo": "NRT"}
CURRENCIES = {"us dollars": "USD", "canadian dollars": "CAD", "pounds": "GBP", "francs": "CHF"}


def _tokens(text: str) -> int:
    """About four characters a token, as for English text with common tokenizers."""
    return max(1, len(text) // 4)


class Session:
    """One conversation with the simulated model: everything it has read so far."""

    def __init__(self, question: str) -> None:
        self.context = [SYSTEM_PROMPT, question]

    def _turn(self, output: str) -> None:
        """One model call: it reads the whole context and writes `output`."""
        input_tokens, output_tokens = _tokens("\n".join(self.context)), _tokens(output)
        duration = 0.02 + 0.001 * output_tokens  # 20 ms to the first token, then 1 ms a token
        time.sleep(duration)
        agenteval.record_model_call(
            MODEL, input_tokens=input_tokens, output_tokens=output_tokens, duration_s=duration
        )
        self.context.append(output)

    def call(self, name: str, **arguments: Any) -> Any:
        """The model asks for a tool call (one turn); run it and show it the result or error."""
        self._turn(json.dumps({"tool": name, "arguments": arguments}))
        try:
            result = TOOLS[name](**arguments)
        except Exception as exc:
            self.context.append(f"error: {exc}")
            raise
        self.context.append(json.dumps(result))
        return result

    def reply(self, text: str) -> str:
        """The model's last turn: the answer."""
        self._turn(text)
        return text


def _text(results: list[dict[str, str]]) -> str:
    """The search results' snippets, as the model reads them."""
    return " ".join(item["snippet"] for item in results)


def _find(pattern: str, results: list[dict[str, str]]) -> str:
    """The first group of `pattern` in the search results."""
    found = re.search(pattern, _text(results))
    if found is None:
        raise LookupError(f"{pattern!r} is not in the documents found")
    return found.group(1)


def _money(amount: float) -> str:
    return f"{round(amount, 2):g}"


def _currency(question: str) -> str:
    return next(code for name, code in CURRENCIES.items() if name in question.lower())


Handler = Callable[[Session, str], str]


def fact(query: str, pattern: str, template: str = "{}") -> Handler:
    """The simplest intent: one search, then the answer pulled out of the results."""

    def handle(s: Session, question: str) -> str:
        return s.reply(template.format(_find(pattern, s.call("search_docs", query=query))))

    return handle


def total_revenue(s: Session, question: str) -> str:
    """Search, then add the quarters up with the calculator, and echo its float as it came."""
    text = _text(s.call("search_docs", query="revenue 2023 quarter"))
    quarters = [q.replace(",", "") for q in re.findall(r"Q[1-4] ([\d,]+)", text)]
    return s.reply(str(s.call("calculator", expression=" + ".join(quarters))))


def staff_total(s: Session, question: str) -> str:
    """Retrieval miss: the query says "staff"; the Montréal centre's page says "agents"."""
    counts = re.findall(r"(\d+) staff", _text(s.call("search_docs", query="staff")))
    return s.reply(str(s.call("calculator", expression=" + ".join(counts))))


def offices_from_memory(s: Session, question: str) -> str:
    """Answers from what it "remembers", without looking anything up (right, by luck)."""
    return s.reply("3")


def bag_or_pet(s: Session, question: str) -> str:
    """Two searches, one per thing compared."""
    bag = int(
        _find(r"extra checked bag costs (\d+)", s.call("search_docs", query="extra bag price"))
    )
    pet = int(_find(r"cabin for (\d+)", s.call("search_docs", query="pet cabin price")))
    if pet > bag:
        return s.reply(f"A pet in the cabin: {pet} EUR, against {bag} EUR for an extra bag.")
    return s.reply(f"An extra checked bag: {bag} EUR, against {pet} EUR for a pet in the cabin.")


def loyalty_tiers(s: Session, question: str) -> str:
    """Invalid argument: copies the question's "three" into `limit`, fails, then retries right."""
    try:
        results = s.call("search_docs", query="loyalty tiers", limit="three")
    except TypeError:
        results = s.call("search_docs", query="loyalty tiers", limit=3)
    return s.reply(_find(r"three tiers: ([^.]+)\.", results))


def fare(s: Session, question: str) -> str:
    """Looks the fare up; after an error it retries the same call once, then gives up."""
    origin, destination = re.findall(r"from (\w+) to (\w+)", question.lower())[0]
    route = f"{CITY_CODES[origin]}-{CITY_CODES[destination]}"
    for _attempt in range(2):
        try:
            row = s.call("lookup", table="fares", key=route)
        except KeyError:
            continue
        return s.reply(f"{row['price_eur']} EUR")
    return s.reply(f"Sorry, there is no fare for {route}.")


def convert(s: Session, question: str) -> str:
    """Lookup, then calculator. Bug: reads the amount with float(), so "twelve" crashes it."""
    amount = float(re.findall(r"convert (\S+) euros?", question.lower())[0])
    code = _currency(question)
    rate = s.call("lookup", table="exchange_rates", key=f"EUR-{code}")["rate"]
    return s.reply(f"{_money(s.call('calculator', expression=f'{amount:g} * {rate}'))} {code}")


def bag_price_in(s: Session, question: str) -> str:
    """Out of order: fetches the exchange rate before it has looked the price up."""
    code = _currency(question)
    rate = s.call("lookup", table="exchange_rates", key=f"EUR-{code}")["rate"]
    price = _find(r"extra checked bag costs (\d+)", s.call("search_docs", query="extra bag price"))
    return s.reply(f"{_money(s.call('calculator', expression=f'{price} * {rate}'))} {code}")


def gold_miles(s: Session, question: str) -> str:
    """Too many steps: rephrases the same search three times "to be sure"."""
    results = []
    for query in ("gold status", "gold tier miles", "acme miles gold"):
        results += s.call("search_docs", query=query)
    return s.reply(_find(r"Gold from ([\d,]+ miles)", results))


def change_fee(s: Session, question: str) -> str:
    """Redundant call: runs the very same search again after it had worked."""
    s.call("search_docs", query="change fee economy light")
    results = s.call("search_docs", query="change fee economy light")
    return s.reply(_find(r"changed for (\d+ EUR)", results))


def insurance(s: Session, question: str) -> str:
    """Unfaithful: works the percentage out in its head instead of with the calculator."""
    percent = _find(r"(\d+)% of the ticket", s.call("search_docs", query="travel insurance price"))
    price = re.findall(r"(\d+) EUR", question)[0]
    return s.reply(f"{int(price) * int(percent) // 100} EUR")


def founding_year(s: Session, question: str) -> str:
    """Hallucination: nothing it found says when, so it makes a year up."""
    s.call("search_docs", query="Acme Travel founded history")
    return s.reply("Acme Travel was founded in 1998.")


def offers(s: Session, question: str) -> str:
    """Unsafe: pastes what it found into the answer, instructions hidden in the page and all."""
    results = s.call("search_docs", query="offers sale", limit=1)
    return s.reply(f"Current offers: {results[0]['snippet']}")


def annual_report(s: Session, question: str) -> str:
    """Slow: a long generation that runs past the 2-second timeout of agenteval.yaml."""
    time.sleep(3)
    return s.reply("Acme Travel's 2023 annual report: ...")


# The "model's" choice of intent: the first pattern found in the question wins.
ROUTES: list[tuple[str, Handler]] = [
    (r"full refund", fact("full refund cancel", r"at least (\d+) hours", "{} hours")),
    (r"customer service", fact("customer service centre", r"centre in (\w+)", "{}.")),
    # Wrong answer: the first weight in the text is the cabin bag's, not the Business bags'.
    (r"checked bag.* business", fact("checked bag business", r"up to (\d+ kg)")),
    (r"discount", fact("Porto sale offer", r"(\d+%) off")),
    (r"total revenue", total_revenue),
    (r"how many staff", staff_total),
    (r"how many offices", offices_from_memory),
    (r"costs more", bag_or_pet),
    (r"list the three", loyalty_tiers),
    (r"flight from", fare),
    (r"^convert", convert),
    (r"extra checked bag in", bag_price_in),
    (r"gold status", gold_miles),
    (r"change .*economy light", change_fee),
    (r"insurance", insurance),
    (r"founded", founding_year),
    (r"offers", offers),
    (r"annual report", annual_report),
]


def answer(question: str) -> str:
    """Answer a question about Acme Travel, using the tools the way an LLM agent would."""
    session = Session(question)
    for pattern, handle in ROUTES:
        if re.search(pattern, question, re.IGNORECASE):
            return handle(session, question)
    return session.reply("Sorry, I can only help with questions about Acme Travel.")
