"""The OpenAI Agents SDK example (`examples/openai_agents`): run as its README says, from a copy
of the folder, offline; each case ends as the README's table says, and the trials record what
the SDK's run did (calls paired by id, the handoff, the guardrail, tokens priced)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.cli_process import assert_clean, cli_env

from agenteval import EvalCase
from agenteval.store import RunStore
from agenteval.trace import FailureCause, Trial

pytest.importorskip("agents")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "openai_agents"

# Case id -> the tools its trials call, in order: what the intended scores rest on.
CALLS = {
    "track-one": ["track_package"],
    "track-two-at-once": ["track_package", "track_package"],
    "track-unknown": ["track_package"],
    "refund": ["lookup_order", "refund_order"],
    "refund-refused": ["lookup_order"],
    "refund-bad-amount": ["lookup_order", "refund_order", "refund_order"],
    "password-refused": [],
    "hello-then-refund": ["lookup_order", "refund_order"],
}
# Case id -> the scorers that fail on it (every other scorer that applies passes).
FAILING = {"track-unknown": {"tool_execution"}, "refund-bad-amount": {"tool_arguments_valid"}}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`agenteval run openai_agents` in a fresh folder holding a copy of the example."""
    work = tmp_path_factory.mktemp("work")
    shutil.copytree(EXAMPLE, work / "openai_agents", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "openai_agents"],
        cwd=work,
        capture_output=True,
        text=True,
        env=cli_env(PYTHONPATH=str(ROOT / "src"), NO_PROXY="*"),
        timeout=300,
    )
    return done, work


def results(work: Path) -> dict[tuple[str, int], tuple[Trial, dict[str, bool | None]]]:
    with RunStore.open(work / ".agenteval" / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        return {
            (r.case.id, r.trial.trial): (r.trial, {n: s.passed for n, s in r.scores.items()})
            for r in store.iter_results(row.run_id)
        }


def test_the_example_runs_offline_and_leaves_its_folder_as_it_was(
    ran: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, work = ran
    assert done.returncode == 0, done.stderr
    assert_clean(done.stderr)
    assert "16 trials, 14 completed, 2 failed" in done.stdout
    copied = sorted(p.name for p in (work / "openai_agents").iterdir() if p.name != "__pycache__")
    assert copied == sorted(p.name for p in EXAMPLE.iterdir() if p.name != "__pycache__")


def test_every_case_ends_as_the_readme_says(
    ran: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, work = ran
    stored = results(work)
    cases = [
        EvalCase.model_validate(raw)
        for raw in yaml.safe_load((EXAMPLE / "cases.yaml").read_text(encoding="utf-8"))
    ]
    assert {case.id for case in cases} == set(CALLS)
    assert len(stored) == 2 * len(CALLS)
    for (case_id, _), (trial, passed) in stored.items():
        assert [c.name for c in trial.tool_calls] == CALLS[case_id], case_id
        failing = {name for name, ok in passed.items() if ok is False}
        assert failing == FAILING.get(case_id, set()), case_id
        assert all(c.model == "scripted-support-1" for c in trial.model_calls)
        if case_id == "password-refused":
            assert trial.output is None
            assert trial.failure is not None
            assert trial.failure.cause is FailureCause.AGENT_ERROR
            assert trial.metadata["guardrail"]["name"] == "no_passwords"
            continue
        assert trial.failure is None, case_id
        assert trial.model_calls and trial.usage.input_tokens > 0
        expected_visits = ["triage", "refunds"] if "refund" in case_id else ["triage"]
        assert trial.node_visits == expected_visits, case_id


def test_parallel_calls_and_a_raising_tool_are_recorded_from_the_run(
    ran: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, work = ran
    stored = results(work)
    both, _ = stored[("track-two-at-once", 0)]
    assert [(c.arguments["tracking_id"], c.result["city"]) for c in both.tool_calls] == [
        ("TRK123", "Lyon"),
        ("TRK456", "Porto"),
    ]
    assert len({c.id for c in both.tool_calls}) == 2
    unknown, _ = stored[("track-unknown", 0)]
    assert unknown.tool_calls[0].error == "LookupError: no package TRK999"
    bad, _ = stored[("refund-bad-amount", 1)]
    assert bad.tool_calls[1].arguments == {"order_id": "C300", "amount": "19.9 EUR"}
    assert bad.tool_calls[1].error is not None
    assert bad.tool_calls[2].result == "refunded 19.90 EUR on C300"
    talk, _ = stored[("hello-then-refund", 0)]
    assert talk.metadata["turn_outputs"] == [
        "I can track packages and help with refunds.",
        "Refunded 25.00 EUR on order A100.",
    ]
    assert set(both.tool_specs) == {"track_package", "lookup_order", "refund_order"}
