"""The drop-in on a real Google ADK agent: an `LlmAgent` with function tools on a `BaseLlm` that
replays the home automation test file (`agents/adk_home.py`), run through agenteval's ADK
adapter, agrees with google-adk 2.13's own `AgentEvaluator.evaluate` on the same agent, file,
session and `num_runs`.

ADK's side is measured by `adk_reference.py` (it needs ADK's eval extras, which agenteval's test
environment does not install) and kept in `data/adk_reference.json`; the metrics compared are
the ones both compute without a judge: `tool_trajectory_avg_score` and `response_match_score`
(pass/fail), and the efficiency metrics ADK reports on every case (`tool_call_count_v1`,
`inference_call_count_v1`, `token_usage_v1`; `invocation_duration_v1` is wall-clock time).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest
from tests.evalset.dropin.adk_reference import MEASUREMENTS

from agenteval import AgentLoadError
from agenteval.evalset import AgentEvaluator
from agenteval.evalset.dropin import adk_metric_name
from agenteval.scorers.reported import is_reported, reported_value
from agenteval.store import RunStore

DATA = Path(__file__).parent / "data"
ADK = json.loads((DATA / "adk_reference.json").read_text(encoding="utf-8"))
COMPARED = ("tool_trajectory_avg_score", "response_match_score")
REPORTED = ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1")
STORE = Path(".agenteval/runs.db")

# Where agenteval's value differs from ADK's, and why (nothing else may differ).
KNOWN_DIFFERENCES = {
    # ADK's ROUGE-1 splits "device_3" into two tokens ("device", "3") and counts 8 of 9 tokens
    # in common (0.889); agenteval's drops the underscore ("device3"), 7 of 8 (0.875). With the
    # second turn's 1.0: ADK 0.944, agenteval 0.9375. Both pass the threshold of 0.5.
    ("home_wrong", "response_match_score"): 0.9375,
}


def metric_values(run_id: str) -> dict[str, float]:
    """Each criterion's mean over the run's trials, under ADK's metric names."""
    values: dict[str, list[float]] = defaultdict(list)
    with RunStore(STORE, create=False) as store:
        for result in store.iter_results(run_id):
            for name, score in result.scores.items():
                value = reported_value(score) if is_reported(score) else score.value
                if value is not None:
                    values[adk_metric_name(name)].append(value)
    return {name: fmean(found) for name, found in values.items()}


def only_run() -> str:
    with RunStore(STORE, create=False) as store:
        (row,) = store.list_runs()
        return row.run_id


@pytest.mark.parametrize("measurement", sorted(MEASUREMENTS))
async def test_the_drop_in_agrees_with_adks_own_evaluator(measurement: str) -> None:
    arguments: dict[str, Any] = MEASUREMENTS[measurement]
    adk = ADK[measurement]

    failure: str | None = None
    try:
        await AgentEvaluator.evaluate(**arguments, print_detailed_results=False)
    except AssertionError as exc:
        failure = str(exc)

    # The same verdict, with ADK's lines in agenteval's message.
    assert (failure is None) == (adk["assertion"] is None), failure
    if failure is not None:
        for line in adk["assertion"].splitlines()[1:]:
            assert line in failure
    values = metric_values(only_run())
    for metric in COMPARED:
        want = KNOWN_DIFFERENCES.get((measurement, metric), adk["metrics"][metric]["value"])
        assert values[metric] == pytest.approx(want), metric
        assert adk["metrics"][metric]["status"] in ("PASSED", "FAILED")
    for metric in REPORTED:
        assert values[metric] == pytest.approx(adk["metrics"][metric]["value"]), metric
        assert adk["metrics"][metric]["status"] == "INFORMATIONAL"
    assert "invocation_duration_v1" in values  # measured, in seconds: not compared


async def test_every_trial_is_its_own_session_with_the_initial_state() -> None:
    await AgentEvaluator.evaluate(
        agent_module="tests.evalset.dropin.agents.home_adk",
        eval_dataset_file_path_or_dir=str(DATA / "home" / "home.test.json"),
        num_runs=8,
        initial_session_file=str(DATA / "home" / "initial.session.json"),
        print_detailed_results=False,
    )

    with RunStore(STORE, create=False) as store:
        results = list(store.iter_results(only_run()))
    assert sorted(r.trial.trial for r in results) == list(range(8))
    for result in results:
        trial = result.trial
        # Each session saw its own two calls and holds its own state: the initial state, and
        # the device switched in that session.
        assert [call.name for call in trial.tool_calls] == ["set_device_info", "get_device_info"]
        assert trial.metadata["session_state"] == {"home": "flat-3", "status:device_2": "OFF"}
        assert trial.metadata["turn_outputs"] == [
            "I have set the device_2 status to off.",
            "device_2 is off.",
        ]


async def test_agent_name_evaluates_the_sub_agent_alone() -> None:
    await AgentEvaluator.evaluate(
        agent_module="tests.evalset.dropin.agents.home_adk_team",
        eval_dataset_file_path_or_dir=str(DATA / "home" / "home.test.json"),
        num_runs=1,
        agent_name="home_automation",
        print_detailed_results=False,
    )

    with RunStore(STORE, create=False) as store:
        (result,) = store.iter_results(only_run())
    assert result.trial.node_visits == ["home_automation"]


async def test_an_unknown_sub_agent_is_adks_error_and_nothing_runs() -> None:
    with pytest.raises(AgentLoadError, match=r"Sub-Agent 'kitchen' not found\."):
        await AgentEvaluator.evaluate(
            agent_module="tests.evalset.dropin.agents.home_adk_team",
            eval_dataset_file_path_or_dir=str(DATA / "home" / "home.test.json"),
            agent_name="kitchen",
        )


@pytest.mark.parametrize("measurement", sorted(MEASUREMENTS))
async def test_the_recorded_adk_values_are_what_adk_says_now(
    measurement: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ADK's eval extras are installed (`pip install 'google-adk[eval]'`), ADK's own
    evaluator is run again and must say what `data/adk_reference.json` recorded."""
    pytest.importorskip("rouge_score", reason="ADK's evaluator needs google-adk[eval]")
    pytest.importorskip("pandas", reason="ADK's evaluator needs google-adk[eval]")
    from tests.evalset.dropin.adk_reference import VARIES, measure

    monkeypatch.setenv("GOOGLE_API_KEY", "offline")
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")  # offline: no connection gets out

    now = await measure(MEASUREMENTS[measurement])

    recorded = ADK[measurement]
    assert now["assertion"] == recorded["assertion"]
    for metric, found in now["metrics"].items():
        if metric not in VARIES:
            assert found == recorded["metrics"][metric], metric


async def test_a_final_session_state_the_agent_misses_passes_as_in_adk(tmp_path: Path) -> None:
    # The agent leaves device_2 OFF; the file expects it ON. ADK 2.13 does not compare the
    # final session state, so the drop-in passes; agenteval's instance API fails the case.
    from tests.evalset.dropin.agents.home_adk.agent import root_agent

    data = json.loads((DATA / "state" / "home_state.test.json").read_text(encoding="utf-8"))
    data["eval_cases"][0]["final_session_state"] = {"status:device_2": "ON"}
    state_file = tmp_path / "home_state.test.json"
    state_file.write_text(json.dumps(data), encoding="utf-8")

    await AgentEvaluator.evaluate("tests.evalset.dropin.agents.home_adk", str(state_file))

    report = await AgentEvaluator(root_agent).evaluate(state_file)
    assert report.results[0].failed_criteria == ["final_session_state_match"]
