"""A Google ADK home automation agent (an `LlmAgent` with function tools) on a scripted model.

Its tools have the names and behaviour of adk-python's home automation fixture agent
(`get_device_info`, `set_device_info`, ...), written here anew; devices switched are kept in
the session state (`tool_context.state`), so concurrent sessions never share them.

`ReplayLlm` is a `BaseLlm` that replays an ADK test file: for each user query of the file it
asks for that turn's `expected_tool_use` calls, then, once their results are in, answers the
turn's `reference`. It decides from the request alone (the last user text and whether function
responses follow it), so one model serves any number of sessions at once, offline.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.tools import ToolContext
from google.genai import types

HOME_TEST = Path(__file__).parents[1] / "data" / "home" / "home.test.json"

_DEVICES = {
    "device_1": {"status": "ON", "location": "Living Room"},
    "device_2": {"status": "OFF", "location": "Bedroom"},
    "device_3": {"status": "OFF", "location": "Kitchen"},
}
_TEMPERATURES = {"Living Room": 22, "Bedroom": 20, "Kitchen": 24}


def get_device_info(device_id: str, tool_context: ToolContext) -> dict[str, Any] | str:
    """Get the current status and location of a device.

    Args:
        device_id: The unique identifier of the device.
    """
    device = _DEVICES.get(device_id)
    if device is None:
        return "Device not found"
    status = tool_context.state.get(f"status:{device_id}", device["status"])
    return {"status": status, "location": device["location"]}


def set_device_info(
    device_id: str, tool_context: ToolContext, status: str = "", location: str = ""
) -> str:
    """Update a device's status and/or location.

    Args:
        device_id: The unique identifier of the device.
        status: The new status, 'ON' or 'OFF'.
        location: The new location: 'Living Room', 'Bedroom' or 'Kitchen'.
    """
    if device_id not in _DEVICES:
        return "Device not found"
    if status:
        tool_context.state[f"status:{device_id}"] = status
        return f"Device {device_id} information updated: status -> {status}."
    if location:
        tool_context.state[f"location:{device_id}"] = location
        return f"Device {device_id} information updated: location -> {location}."
    return "Nothing to update"


def get_temperature(location: str) -> int | str:
    """Get the current temperature in celsius of a location.

    Args:
        location: 'Living Room', 'Bedroom' or 'Kitchen'.
    """
    return _TEMPERATURES.get(location, "Location not found")


TOOLS = [get_device_info, set_device_info, get_temperature]


class Turn:
    """One turn of the script: the calls the model asks for, then its answer."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]], answer: str) -> None:
        self.calls = calls
        self.answer = answer


def script_of(test_file: Path) -> dict[str, Turn]:
    """Each query of a legacy ADK test file, with its expected tool calls and reference."""
    turns = json.loads(test_file.read_text(encoding="utf-8"))
    return {
        turn["query"]: Turn(
            [(use["tool_name"], dict(use["tool_input"])) for use in turn["expected_tool_use"]],
            turn.get("reference", ""),
        )
        for turn in turns
    }


class ReplayLlm(BaseLlm):
    """A scripted model: the script's calls for the current query, then its answer."""

    script: dict[str, Turn]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        query, answered = _where(llm_request.contents)
        turn = self.script.get(query)
        if turn is None:
            text = f"I was not scripted for {query!r}."
            yield _response([types.Part(text=text)])
            return
        if turn.calls and not answered:
            yield _response(
                [
                    types.Part(
                        function_call=types.FunctionCall(id=f"call-{i}", name=name, args=args)
                    )
                    for i, (name, args) in enumerate(turn.calls)
                ]
            )
            return
        yield _response([types.Part(text=turn.answer)])


def _where(contents: list[types.Content]) -> tuple[str, bool]:
    """The last user query of the conversation, and whether function results came after it."""
    answered = False
    for content in reversed(contents):
        parts = content.parts or []
        if any(part.function_response for part in parts):
            answered = True
        texts = [part.text for part in parts if part.text and content.role == "user"]
        if texts:
            return texts[-1], answered
    return "", answered


def _response(parts: list[types.Part]) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=parts),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=40, candidates_token_count=10, total_token_count=50
        ),
    )


def home_agent(
    test_file: Path = HOME_TEST,
    *,
    name: str = "Home_automation_agent",
    change: Callable[[dict[str, Turn]], None] | None = None,
) -> LlmAgent:
    """The home automation agent on a model replaying `test_file` (`change` edits the script
    first, to make the agent err)."""
    script = script_of(test_file)
    if change is not None:
        change(script)
    return LlmAgent(
        name=name,
        model=ReplayLlm(model="replay", script=script),
        instruction="You are Home Automation Agent. You control the devices in the home.",
        tools=list(TOOLS),
    )
