"""The home automation tools as plain recorded functions (`agenteval.tool`), for the drop-in's
tests with a callable `root_agent` (no framework)."""

from __future__ import annotations

from typing import Any

import agenteval


@agenteval.tool
def set_device_info(location: str, device_id: str, status: str) -> str:
    """Switch a device on or off."""
    return f"{device_id} in {location} is now {status}."


@agenteval.tool
def get_device_info(device_id: str) -> dict[str, str]:
    """A device's status."""
    return {"status": "OFF"}


def last_user_turn(messages: Any) -> str:
    """The text of the last user turn of what the engine passes a callable agent."""
    return str(messages[-1]["content"] if isinstance(messages, list) else messages)
