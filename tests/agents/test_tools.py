"""`@agenteval.tool`: the JSON schema from the signature, and what a call records."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import jsonschema
from pydantic import BaseModel

import agenteval
from agenteval.agents.recorder import TrialRecorder, recording


@agenteval.tool
def find(query: str, limit: int = 3, exact: bool = False) -> list[str]:
    """Find things."""
    return [query] * limit


@agenteval.tool
def with_connection(connection: sqlite3.Connection, table: str) -> int:
    """A tool with an argument JSON Schema cannot describe."""
    return 0


@agenteval.tool
def filtered(query: str, **filters: Any) -> dict[str, Any]:
    """A tool that takes any named filters."""
    return {"query": query, **filters}


class Hit(BaseModel):
    id: str
    score: float


@agenteval.tool(name="search_hits")
def search(query: str) -> list[Hit]:
    """Returns models, not plain data."""
    return [Hit(id="refund-policy", score=0.9)]


def schema(name: str) -> dict[str, Any]:
    return agenteval.known_tools()[name].parameters


def test_the_signature_gives_the_json_schema() -> None:
    assert schema("find") == {
        "additionalProperties": False,
        "properties": {
            "query": {"type": "string"},
            "limit": {"default": 3, "type": "integer"},
            "exact": {"default": False, "type": "boolean"},
        },
        "required": ["query"],
        "type": "object",
    }
    assert agenteval.known_tools()["find"].description == "Find things."


def test_an_argument_json_schema_cannot_describe_is_left_unconstrained() -> None:
    properties = schema("with_connection")["properties"]
    assert properties["table"] == {"type": "string"}
    assert "type" not in properties["connection"]


def test_a_tool_taking_keyword_arguments_accepts_extra_arguments() -> None:
    jsonschema.validate({"query": "x", "year": 2024}, schema("filtered"))


def test_results_are_recorded_as_plain_data_at_the_time_of_the_call() -> None:
    recorder = TrialRecorder()
    with recording(recorder):
        hits = search("refund")
    assert isinstance(hits[0], Hit)  # the agent gets what the tool returned
    assert recorder.tool_calls[0].result == [{"id": "refund-policy", "score": 0.9}]
    assert recorder.tool_calls[0].name == "search_hits"


def test_outside_a_trial_a_tool_is_a_plain_function() -> None:
    assert find("x", limit=2) == ["x", "x"]
    assert asyncio.run(asyncio.to_thread(find, "y", 1)) == ["y"]
