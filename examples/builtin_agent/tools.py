"""The tools of the built-in agent example: their signatures and docstrings are what the model
sees (`ToolSpec`), and every call the model asks for is recorded."""

from __future__ import annotations

import agenteval

_WEATHER = {
    "paris": {"city": "Paris", "condition": "sunny", "celsius": 21},
    "oslo": {"city": "Oslo", "condition": "snow", "celsius": -3},
    "lisbon": {"city": "Lisbon", "condition": "windy", "celsius": 17},
}
_RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93, ("EUR", "GBP"): 0.85}


@agenteval.tool
def get_weather(city: str) -> dict[str, object]:
    """Today's weather in a city: condition and temperature in °C."""
    found = _WEATHER.get(city.strip().lower())
    if found is None:
        raise LookupError(f"no weather for {city!r}")
    return found


@agenteval.tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, object]:
    """Convert an amount between currencies (EUR, USD, GBP)."""
    rate = _RATES.get((from_currency.upper(), to_currency.upper()))
    if rate is None:
        raise LookupError(f"no rate from {from_currency} to {to_currency}")
    return {"amount": round(amount * rate, 2), "currency": to_currency.upper(), "rate": rate}
