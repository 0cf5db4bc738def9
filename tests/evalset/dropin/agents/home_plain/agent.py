"""A callable home automation agent that does what home.test.json expects."""

from __future__ import annotations

from typing import Any

from tests.evalset.dropin.agents.plain_tools import get_device_info, last_user_turn, set_device_info


def root_agent(messages: Any) -> str:
    said = last_user_turn(messages)
    if "Turn off" in said:
        set_device_info(location="Bedroom", device_id="device_2", status="OFF")
        return "I have set the device_2 status to off."
    get_device_info(device_id="device_2")
    return "device_2 is off."
