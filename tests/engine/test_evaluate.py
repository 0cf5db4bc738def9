"""`agenteval.evaluate`: cases × trials in, a stored and scored `Run` out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase, Score, Trial
from agenteval.errors import ScorerError


@agenteval.tool
def search_kb(query: str) -> list[dict[str, str]]:
    """Search the knowledge base."""
    return [{"id": "paris", "text": "Paris is the capital of France."}]


def capital_agent(question: str) -> str:
    search_kb(question)
    return "Paris" if "France" in question else "I don't know"


CASES = [
    EvalCase(
        id="france",
        input="Capital of France?",
        expected_output="paris.",
        expected_tools=["search_kb"],
    ),
    EvalCase(id="spain", input="Capital of Spain?", expected_output="Madrid"),
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def test_every_case_and_trial_gets_a_result_with_scores(store: Path) -> None:
    run = agenteval.evaluate(capital_agent, CASES, trials=3, store=store)
    assert len(run.results) == 6
    assert {(r.case.id, r.trial.trial) for r in run.results} == {
        (c, t) for c in ("france", "spain") for t in range(3)
    }
    france = next(r for r in run.results if r.case.id == "france")
    assert france.scores["exact_match"].passed is True
    assert france.scores["tool_selection"].passed is True
    spain = next(r for r in run.results if r.case.id == "spain")
    assert spain.scores["exact_match"].passed is False
    # No expected tools: tool_selection does not apply, and says so.
    assert spain.scores["tool_selection"].value is None
    assert run.summary.scorers["exact_match"].pass_rate == pytest.approx(0.5)
    assert run.summary.scorers["exact_match"].scored == 6


def test_the_run_lists_the_tools_the_agent_declared(store: Path) -> None:
    run = agenteval.evaluate(capital_agent, CASES, store=store)
    assert "search_kb" in run.info.tools
    assert run.info.tools["search_kb"].parameters["required"] == ["query"]


def test_custom_scorers_add_to_the_builtins_and_report_errors_apart(store: Path) -> None:
    def concise(case: EvalCase, trial: Trial) -> tuple[bool, str]:
        return len(trial.output or "") < 10, "under 10 characters"

    async def async_scorer(case: EvalCase, trial: Trial) -> float:
        await asyncio.sleep(0)
        return 0.25

    def skipper(case: EvalCase, trial: Trial) -> None:
        return None

    def broken(case: EvalCase, trial: Trial) -> float:
        raise RuntimeError("scorer bug")

    run = agenteval.evaluate(
        capital_agent, CASES, scorers=[concise, async_scorer, skipper, broken], store=store
    )
    scores = run.results[0].scores
    assert "exact_match" in scores
    assert scores["concise"] == Score(
        name="concise", value=1.0, passed=True, reason="under 10 characters"
    )
    assert scores["async_scorer"].value == 0.25 and scores["async_scorer"].passed is False
    assert scores["skipper"].value is None
    assert scores["broken"].error == "RuntimeError: scorer bug"
    assert run.summary.scorers["broken"].errors == 2
    assert run.summary.scorers["skipper"].skipped == 2


def test_builtins_false_runs_only_the_named_scorers(store: Path) -> None:
    run = agenteval.evaluate(
        capital_agent, CASES, scorers=["exact_match"], builtins=False, store=store
    )
    assert set(run.results[0].scores) == {"exact_match"}


def test_an_unknown_scorer_name_is_a_clear_error(store: Path) -> None:
    with pytest.raises(ScorerError, match="exact_mach") as info:
        agenteval.evaluate(capital_agent, CASES, scorers=["exact_mach"], store=store)
    assert "exact_match" in str(info.value)


def test_cases_can_come_from_a_file(tmp_path: Path, store: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- input: Capital of France?\n  expected_output: Paris\n")
    run = agenteval.evaluate(capital_agent, path, store=store)
    assert run.results[0].scores["exact_match"].passed is True


def test_agent_none_scores_the_cases_recorded_traces(store: Path) -> None:
    case = EvalCase(
        input="Find papers",
        agent_trace=[
            {"thought": "search", "tool_calls": [{"name": "search", "arguments": {"q": "ai"}}]},
            {"output": "Here are the papers"},
        ],
        expected_tool_calls=["search", "summarize"],
    )
    run = agenteval.evaluate(None, [case], store=store)
    result = run.results[0]
    assert result.trial.output == "Here are the papers"
    assert result.scores["tool_selection"].passed is False


def test_failed_trials_are_counted_by_cause_and_the_run_goes_on(store: Path) -> None:
    def agent(question: str) -> Any:
        if "Spain" in question:
            raise RuntimeError("agent bug")
        return "Paris"

    run = agenteval.evaluate(agent, CASES, trials=2, store=store)
    assert run.summary.trials == 4
    assert run.summary.failed_trials == 2
    assert run.summary.failures == {"agent_error": 2}


def test_to_json_has_the_documented_shape(store: Path) -> None:
    run = agenteval.evaluate(capital_agent, CASES, store=store)
    document = json.loads(json.dumps(run.to_json()))
    assert document["schema"] == "agenteval.run/1"
    assert document["run_id"] == run.run_id
    assert document["summary"]["trials"] == 2
    stats = document["summary"]["scorers"]["exact_match"]
    assert {"mean", "pass_rate", "scored", "skipped"} <= set(stats)
    first = document["results"][0]
    assert {"case_id", "trial", "output", "failure", "tool_calls", "scores"} <= set(first)
    assert first["tool_calls"][0] == {
        "name": "search_kb",
        "arguments": {"query": "Capital of France?"},
        "result": [{"id": "paris", "text": "Paris is the capital of France."}],
        "error": None,
        "duration_s": first["tool_calls"][0]["duration_s"],
        "mocked": None,  # the tool ran: no mock answered
    }
    assert set(first["scores"]["exact_match"]) >= {"value", "passed", "reason"}


def test_everything_is_in_the_store_and_can_be_rescored(store: Path) -> None:
    run = agenteval.evaluate(capital_agent, CASES, store=store)

    def shouts(case: EvalCase, trial: Trial) -> bool:
        return (trial.output or "").isupper()

    rescored = agenteval.rescore(run.run_id, [shouts], store=store)
    assert rescored.summary.scorers["shouts"].scored == 2
    with agenteval.RunStore(store) as runs:
        stored = list(runs.iter_results(run.run_id))
    assert all("shouts" in r.scores and "exact_match" in r.scores for r in stored)
    assert [r.trial.output for r in stored] == [r.trial.output for r in run.results]


def test_concurrency_bounds_the_trials_in_flight(store: Path) -> None:
    in_flight = 0
    peak = 0

    async def agent(question: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return "x"

    cases = [EvalCase(input=f"q{i}") for i in range(40)]
    agenteval.evaluate(agent, cases, concurrency=5, store=store)
    assert peak == 5


@agenteval.tool
def kb_lookup(topic: str) -> list[dict[str, str]]:
    """Find knowledge-base articles."""
    return [{"slug": "refunds", "text": "Refunds within 30 days."}]


def kb_agent(question: str) -> str:
    kb_lookup(question)
    return "Refunds within 30 days."


def test_a_builtin_with_settings_replaces_the_default_and_survives_a_rescore(store: Path) -> None:
    from agenteval.scorers import RetrievalRecall

    case = EvalCase(id="refunds", input="refunds?", relevant_docs=["refunds"])
    default = agenteval.evaluate(kb_agent, [case], store=store)
    # By default only tools named like "search" or "retriev" count as searches.
    assert default.results[0].scores["retrieval_recall"].value == 0.0

    configured = RetrievalRecall(search_tools=("kb_",), doc_keys=("slug",))
    run = agenteval.evaluate(kb_agent, [case], scorers=[configured], store=store)
    assert run.results[0].scores["retrieval_recall"].value == 1.0
    assert run.info.scorers == [
        {"name": "retrieval_recall", "search_tools": ["kb_"], "doc_keys": ["slug"]}
    ]
    rescored = agenteval.rescore(run.run_id, store=store)
    assert rescored.results[0].scores["retrieval_recall"].value == 1.0


def test_rescore_keeps_scores_whose_scorer_cannot_be_loaded_again(store: Path) -> None:
    run = agenteval.evaluate(capital_agent, CASES, scorers=[lambda case, trial: 0.3], store=store)
    assert run.results[0].scores["<lambda>"].value == 0.3
    rescored = agenteval.rescore(run.run_id, store=store)
    assert rescored.results[0].scores["<lambda>"].value == 0.3
    assert "exact_match" in rescored.results[0].scores


def test_a_run_still_going_in_another_process_is_not_resumed(store: Path) -> None:
    import subprocess
    import sys

    from agenteval.engine.ownership import claim
    from agenteval.errors import ConfigError

    run = agenteval.evaluate(capital_agent, CASES, store=store)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        live = run.info.model_copy(
            update={
                "status": agenteval.run.RunStatus.RUNNING,
                "settings": {
                    "owner": {"pid": other.pid, "host": __import__("socket").gethostname()}
                },
            }
        )
        with pytest.raises(ConfigError, match="is still running"):
            claim(live)
    finally:
        other.kill()
        other.wait()
    assert claim(live).settings["owner"]["pid"] == __import__("os").getpid()


def test_an_agent_can_be_named_by_reference(tmp_path: Path, store: Path) -> None:
    (tmp_path / "named_agent.py").write_text("def run(q):\n    return 'Paris'\n")
    run = agenteval.evaluate(f"{tmp_path / 'named_agent.py'}:run", CASES[:1], store=store)
    assert run.results[0].trial.output == "Paris"


def test_no_cases_is_a_clear_error(store: Path) -> None:
    from agenteval.errors import ConfigError

    with pytest.raises(ConfigError, match="no cases to run"):
        agenteval.evaluate(capital_agent, [], store=store)


def test_tool_calls_from_threads_the_agent_starts_are_reported_not_lost_quietly(
    store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def agent(question: str) -> str:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(search_kb, ["a", "b"]))
        return "Paris"

    agenteval.evaluate(agent, CASES[:1], store=store)
    assert any("2 tool calls ran outside any trial" in r.getMessage() for r in caplog.records)
