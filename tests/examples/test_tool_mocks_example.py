"""examples/tool_mocks, run as its README says from a fresh clone, under CI (where its live tools
refuse to run): nothing charged, no ticket opened, the injected timeout handled, each trial's
state its own, state_match catching the rate-limit gap; and the clone left as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.cli_process import assert_clean, cli_env
from tests.examples.clones import git

EXAMPLE = "examples/tool_mocks"


def _run(clone: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=clone,
        capture_output=True,
        text=True,
        env=cli_env(PYTHONPATH=str(clone / "src"), NO_PROXY="*", **env),
        timeout=300,
    )


def test_the_example_runs_under_mocks_and_touches_nothing_live(clone: Path, tmp_path: Path) -> None:
    done = _run(clone, "-m", "agenteval", "run", EXAMPLE, "-v", CI="1")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert "charge_card (mocked; error: InjectedRateLimit)" in " ".join(done.stdout.split())
    assert not (clone / EXAMPLE / "ledger.jsonl").exists()
    document = tmp_path / "run.json"
    shown = _run(clone, "-m", "agenteval", "show", "latest", "--json", str(document))
    assert shown.returncode == 0, shown.stderr
    assert git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""

    results: list[dict[str, Any]] = json.loads(document.read_text())["results"]
    assert len(results) == 10  # five cases, two trials each, eight at a time
    by_case: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_case.setdefault(result["case_id"], []).append(result)
    for case_id, trials in by_case.items():
        # Both trials alike: each from its own initial state and the start of each sequence.
        assert trials[0]["state"] == trials[1]["state"], case_id
        assert [c["mocked"] for c in trials[0]["tool_calls"]] == [
            c["mocked"] for c in trials[1]["tool_calls"]
        ]
        for trial in trials:
            assert trial["failure"] is None, (case_id, trial["failure"])
            calls = trial["tool_calls"]
            live = [c["name"] for c in calls if c["mocked"] is None]
            assert set(live) <= {"find_customer"}, (case_id, live)  # nothing live ran
    retried = by_case["charge-timeout-retried"][0]
    assert [(c["name"], c["error"] is not None) for c in retried["tool_calls"]] == [
        ("find_customer", False),
        ("charge_card", True),
        ("charge_card", False),
        ("create_ticket", False),
    ]
    assert retried["state"] == {"charged_eur": 45, "ticket": "T-101"}
    verdicts = {
        case_id: {
            name: score["passed"]
            for name, score in trials[0]["scores"].items()
            if name in ("exact_match", "state_match")
        }
        for case_id, trials in by_case.items()
    }
    assert verdicts == {
        "charge-ok": {"exact_match": True, "state_match": True},
        "charge-timeout-retried": {"exact_match": True, "state_match": True},
        "charge-down-handed-over": {"exact_match": True, "state_match": True},
        "charge-rate-limited": {"exact_match": None, "state_match": False},
        "ticket-mocks-only": {"exact_match": True, "state_match": True},
    }
    # The timeout was the case's injected failure, which the agent handled: no failed call.
    assert by_case["charge-timeout-retried"][0]["scores"]["tool_execution"]["passed"] is True
    gap = by_case["charge-rate-limited"][0]["scores"]["state_match"]["reason"]
    assert gap == "state.charged_eur: expected 20, got 0"
    mocks_only = by_case["ticket-mocks-only"][0]["tool_calls"]
    assert [c["mocked"] for c in mocks_only] == ["mock", "mock"]


def test_without_mocks_the_tools_really_act_and_under_ci_refuse(clone: Path) -> None:
    # The premise of the test above: these tools do have side effects.
    script = (
        "import sys; sys.path.insert(0, 'examples/tool_mocks'); from agent import handle; "
        "print(handle('Charge ada@example.com 5 EUR for a coffee'))"
    )
    refused = _run(clone, "-c", script, CI="1")
    assert refused.returncode != 0 and "CI has no credentials" in refused.stderr
    done = _run(clone, "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Charged 5 EUR (charge-1); ticket ticket-2.")
    ledger = (clone / EXAMPLE / "ledger.jsonl").read_text().splitlines()
    assert [json.loads(line)["action"] for line in ledger] == ["charge", "ticket"]
    # Ignored by git: a real run leaves no change git would commit.
    assert git("status", "--porcelain", cwd=clone) == ""


def _document(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def test_a_replay_of_the_run_gives_its_scores_with_no_tool_run(clone: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    done = _run(clone, "-m", "agenteval", "run", EXAMPLE, "--json", str(first), CI="1")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    replayed = _run(
        clone,
        *("-m", "agenteval", "run", EXAMPLE, "--replay-tools", "latest"),
        *("--json", str(second)),
        CI="1",
    )
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
    assert "tool calls replayed from run" in " ".join(replayed.stdout.split())
    recorded, again = _document(first), _document(second)
    assert again["settings"]["replay"]["run_id"] == recorded["run_id"]

    def outcomes(document: dict[str, Any]) -> dict[tuple[str, int], Any]:
        return {
            (r["case_id"], r["trial"]): (
                r["output"],
                r["state"],
                {name: (s["value"], s["passed"]) for name, s in r["scores"].items()},
            )
            for r in document["results"]
        }

    assert outcomes(again) == outcomes(recorded)
    # The cases' mocks still answer their tools; what ran for real (find_customer, where a
    # case does not mock it) is replayed: nothing runs.
    calls = [call for result in again["results"] for call in result["tool_calls"]]
    assert all(call["mocked"] in ("mock", "replay") for call in calls)
    assert {call["name"] for call in calls if call["mocked"] == "replay"} == {"find_customer"}
    assert not (clone / EXAMPLE / "ledger.jsonl").exists()
