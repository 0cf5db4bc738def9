"""The ADK home automation agent switching the wrong device in the first turn, and saying so."""

from __future__ import annotations

from tests.evalset.dropin.agents.adk_home import Turn, home_agent


def _wrong_device(script: dict[str, Turn]) -> None:
    first = next(iter(script.values()))
    name, args = first.calls[0]
    first.calls[0] = (name, {**args, "device_id": "device_3"})
    first.answer = "I have set the device_3 status to off."


root_agent = home_agent(change=_wrong_device)
