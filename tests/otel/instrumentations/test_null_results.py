"""A tool that returns JSON null, in a plain openai-SDK tool loop under each real openai
instrumentation: the chat API carries a tool's answer as text, so every family records the
text `null` it was sent, a result like any other (never "tool_results not recorded"), and
`tool_execution` scores the calls, live and offline alike. (A trace whose message parts hold
the result as JSON null is read as a result too: `tests/otel/test_not_recorded.py`.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .agents import openai_agent
from .families import (
    OPENAI_INSTRUMENTATIONS,
    OPENAI_V2,
    OPENINFERENCE,
    OPENLLMETRY,
    Family,
    require,
)
from .loopback import ScriptedOpenAI
from .runs import TraceFile, both_ways, facts, run_live, run_offline

require(*OPENAI_INSTRUMENTATIONS)


def _nothing(**arguments: object) -> str:
    return json.dumps(None)


@pytest.mark.parametrize(
    "instrumented", [OPENAI_V2, OPENINFERENCE, OPENLLMETRY], ids=lambda f: f.name, indirect=True
)
def test_a_tool_that_returned_null_has_its_result_recorded(
    instrumented: Family, openai_server: ScriptedOpenAI, trace_file: TraceFile, tmp_path: Path
) -> None:
    agent = openai_agent(openai_server.base_url, {"get_weather": _nothing, "get_time": _nothing})
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    for _case_id, expected, where, result in both_ways(live, offline):
        seen = facts(result)
        assert seen["calls"] == expected.calls, where
        assert seen["results"] == ["null"] * len(expected.calls), where
        assert "tool_results" not in seen["not_recorded"], where
        if expected.calls:
            assert seen["scores"]["tool_execution"] == (1.0, True), where
