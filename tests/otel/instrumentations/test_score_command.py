"""`agenteval score FILE --cases CASES`, the command line as a user runs it (in the folder of
its `agenteval.yaml`, which gives the prices; in-process, for speed), over the OTLP JSON file an OpenInference-instrumented openai tool loop
wrote: the scored run says what the live run says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.cli import main
from agenteval.datasets import dump_cases

from .agents import CASES, EXPECTED, PRICE, expected_cost, expected_usage, openai_agent
from .families import OPENAI_INSTRUMENTATIONS, OPENINFERENCE, Family, require
from .loopback import REQUEST_MODEL, ScriptedOpenAI
from .runs import TraceFile, facts, record_offline, run_live, stored_results

require(*OPENAI_INSTRUMENTATIONS)


@pytest.mark.parametrize("instrumented", [OPENINFERENCE], ids=lambda f: f.name, indirect=True)
def test_the_score_command_reads_the_file_as_the_live_run_recorded_it(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = openai_agent(openai_server.base_url)
    record_offline(agent)  # the app's own run, its spans written to the file
    trace_file.save()
    live = run_live(agent, tmp_path / "live.db")

    dump_cases(CASES, tmp_path / "cases.yaml")
    (tmp_path / "agenteval.yaml").write_text(
        "prices:\n"
        f"  {REQUEST_MODEL}: {{input: {PRICE.input}, output: {PRICE.output},"
        f" cached_input: {PRICE.cached_input}}}\n"
    )
    monkeypatch.chdir(tmp_path)
    main(
        [
            "score",
            str(trace_file.path),
            "--cases",
            "cases.yaml",
            "--scorer",
            "tool_call_accuracy[require_order]",
            "--store",
            "offline.db",
            "--json",
            "run.json",
        ]
    )
    # The stored run, read back whole, records what the live run recorded.
    stored = stored_results(tmp_path / "offline.db")
    assert set(stored) == set(live) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        seen = facts(live[case_id])
        assert facts(stored[case_id]) == seen, case_id
        assert seen["calls"] == expected.calls, case_id
        assert seen["output"] == expected.output, case_id
        assert seen["usage"] == expected_usage(case_id, details=True), case_id
        assert seen["model_calls"] == expected.model_calls, case_id
        assert seen["cost"] == pytest.approx(expected_cost(case_id, details=True)), case_id
    # And the JSON document says so too, with the run's cost from agenteval.yaml's prices.
    document = json.loads((tmp_path / "run.json").read_text())
    for written in document["results"]:
        seen = facts(live[written["case_id"]])
        assert [(c["name"], c["arguments"]) for c in written["tool_calls"]] == [
            (name, arguments) for name, arguments, _ in seen["calls"]
        ]
        assert written["usage"] == seen["usage"]
        assert {name: written["scores"][name]["value"] for name in seen["scores"]} == {
            name: value for name, (value, _) in seen["scores"].items()
        }
    total = sum(expected_cost(case_id, details=True) for case_id in EXPECTED)
    assert document["summary"]["cost"]["agent_usd"] == pytest.approx(total)
    assert document["summary"]["cost"]["unpriced_models"] == []
