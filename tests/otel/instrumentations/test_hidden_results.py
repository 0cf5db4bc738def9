"""OpenInference told to hide the requests' messages (`OPENINFERENCE_HIDE_INPUT_MESSAGES`, or
`OPENINFERENCE_HIDE_INPUTS`), as a privacy-minded deployment does: the responses still name
the tool calls and their arguments, but the results the application sent back are nowhere.
Read as "no result", the tool that failed (`get_weather` of Atlantis) passed `tool_execution`;
the results are "not recorded" instead, and the scorers that read them give no score."""

from __future__ import annotations

from pathlib import Path

import pytest

from .agents import openai_agent
from .families import OPENAI_INSTRUMENTATIONS, OPENINFERENCE_HIDDEN_INPUTS, Family, require
from .loopback import ScriptedOpenAI
from .runs import TraceFile, both_ways, facts, run_live, run_offline

require(*OPENAI_INSTRUMENTATIONS)


@pytest.mark.parametrize(
    "instrumented", [OPENINFERENCE_HIDDEN_INPUTS], ids=lambda f: f.name, indirect=True
)
def test_calls_whose_results_were_hidden_leave_tool_execution_unscored(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    agent = openai_agent(openai_server.base_url)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    for _case_id, expected, where, result in both_ways(live, offline):
        seen = facts(result)
        assert seen["calls"] == expected.calls, where
        assert seen["results"] == [None] * len(expected.calls), where
        execution = result.scores["tool_execution"]
        if not expected.calls:
            assert "tool_results" not in seen["not_recorded"], where
            continue
        assert "tool_results" in seen["not_recorded"], where
        assert "OPENINFERENCE_HIDE" in result.trial.not_recorded["tool_results"], where
        assert execution.value is None and execution.passed is None, where
        assert "the tool calls' results" in str(execution.reason), where
        # What is recorded is still judged: which tools, in which order, with which
        # arguments.
        assert seen["scores"]["tool_selection"] == (1.0, True), where
        assert seen["scores"]["tool_arguments_valid"] == (1.0, True), where
