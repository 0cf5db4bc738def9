"""A callable home automation agent that switches the wrong device and answers off the point."""

from __future__ import annotations

from typing import Any

from tests.evalset.dropin.agents.plain_tools import get_device_info, last_user_turn, set_device_info


def root_agent(messages: Any) -> str:
    said = last_user_turn(messages)
    if "Turn off" in said:
        set_device_info(location="Kitchen", device_id="device_9", status="OFF")
        return "Done."
    get_device_info(device_id="device_2")
    return "device_2 is off."
