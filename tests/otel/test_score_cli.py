"""`agenteval score` and the OpenTelemetry example, run as a user runs them: in subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.otel.installed import import_or_skip

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otel"


def agenteval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        # This checkout's agenteval (PYTHONPATH as the tests run), not another one installed.
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "160",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
        timeout=120,
    )


def _results(document: Path) -> dict[str, dict[str, object]]:
    data = json.loads(document.read_text())
    return {r["case_id"]: r for r in data["results"]}


def test_score_the_examples_recorded_traces_into_a_stored_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    done = agenteval(
        tmp_path,
        "score",
        str(EXAMPLE / "traces.jsonl"),
        "--cases",
        str(EXAMPLE / "cases.yaml"),
        "--store",
        str(store),
        "--json",
        "run.json",
    )
    assert done.returncode == 0, done.stderr
    results = _results(tmp_path / "run.json")
    assert set(results) == {
        "lisbon-weather",
        "paris-fahrenheit",
        "oslo-rate-limited",
        "atlantis-unknown",
    }
    paris = results["paris-fahrenheit"]
    assert [c["name"] for c in paris["tool_calls"]] == ["get_weather", "to_fahrenheit"]  # type: ignore[index]
    assert paris["scores"]["exact_match"]["passed"] is True  # type: ignore[index]
    atlantis = results["atlantis-unknown"]
    assert atlantis["scores"]["tool_execution"]["passed"] is False  # type: ignore[index]
    # A stored run like any other: listed, shown, rescored.
    assert "traces.jsonl" in agenteval(tmp_path, "runs", "--store", str(store)).stdout
    shown = agenteval(tmp_path, "show", "latest", "--store", str(store))
    assert shown.returncode == 0 and "4 trials" in shown.stdout
    rescored = agenteval(
        tmp_path, "rescore", "latest", "--store", str(store), "--scorer", "exact_match"
    )
    assert rescored.returncode == 0, rescored.stderr


def test_score_agenteval_trial_jsonl(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(
        "- id: a\n  input: q a\n  expected_output: A\n  expected_tools: [search]\n"
        "- id: b\n  input: q b\n  expected_output: B\n"
    )
    trials = [
        {
            "case_id": "a",
            "output": "A",
            "tool_calls": [{"name": "search", "arguments": {"q": "a"}}],
        },
        {"case_id": "a", "output": "wrong"},
        {"case_id": "b", "output": "B"},
    ]
    (tmp_path / "trials.jsonl").write_text("\n".join(json.dumps(t) for t in trials))
    done = agenteval(
        tmp_path,
        "score",
        "trials.jsonl",
        "--cases",
        "cases.yaml",
        "--store",
        "r.db",
        "--json",
        "o.json",
    )
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "o.json").read_text())
    assert document["settings"]["trials"] == 2
    outcomes = sorted(
        (r["case_id"], r["trial"], r["scores"]["exact_match"]["passed"])
        for r in document["results"]
    )
    assert outcomes == [("a", 0, True), ("a", 1, False), ("b", 0, True)]


def test_score_matches_by_a_custom_attribute_and_warns_about_leftovers(tmp_path: Path) -> None:
    traces = (EXAMPLE / "traces.jsonl").read_text().replace("agenteval.case.id", "session.case")
    (tmp_path / "t.jsonl").write_text(traces)
    shutil.copy(EXAMPLE / "cases.yaml", tmp_path / "cases.yaml")
    with (tmp_path / "cases.yaml").open("a") as cases:
        cases.write("\n- id: never-recorded\n  input: hello\n")
    done = agenteval(
        tmp_path,
        "score",
        "t.jsonl",
        "--cases",
        "cases.yaml",
        "--match-attribute",
        "session.case",
        "--store",
        "r.db",
    )
    assert done.returncode == 0, done.stderr
    assert "1 cases have no trace" in " ".join(done.stderr.split())
    assert "4 trials" in done.stdout


@pytest.mark.parametrize(
    ("traces", "message"),
    [
        ('{"output": "x"}\n{"outptu": "y"}\n', "t.jsonl:2, field 'outptu': not a valid trial"),
        ('{"case_id": "zzz", "output": "x"}\n', "no trace names a case of the case file"),
        (
            '{"output": "x"}\n{"output": "y"}\n',
            "t.jsonl, field 'case_id': none of the 2 trials names its case (no case_id); pairing "
            "them with the one case by order would be a guess hint: give each trial line its "
            "case_id; or pass --match-by-order (match_by_order=True in Python)",
        ),
    ],
)
def test_score_mistakes_end_in_one_message_and_exit_2(
    tmp_path: Path, traces: str, message: str
) -> None:
    (tmp_path / "t.jsonl").write_text(traces)
    (tmp_path / "cases.yaml").write_text("- id: a\n  input: q\n")
    done = agenteval(tmp_path, "score", "t.jsonl", "--cases", "cases.yaml", "--store", "r.db")
    assert done.returncode == 2
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


def test_the_example_runs_live_with_its_spans_captured(tmp_path: Path) -> None:
    done = agenteval(
        tmp_path, "run", str(EXAMPLE), "--store", str(tmp_path / "r.db"), "--json", "live.json"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "live.json").read_text())
    assert data["settings"]["trials"] == 2
    by_case: dict[str, list[dict[str, object]]] = {}
    for result in data["results"]:
        by_case.setdefault(result["case_id"], []).append(result)
    assert [c["name"] for c in by_case["paris-fahrenheit"][0]["tool_calls"]] == [  # type: ignore[index]
        "get_weather",
        "to_fahrenheit",
    ]
    assert all(r["scores"]["exact_match"]["passed"] for r in data["results"])
    assert data["summary"]["retries"] == {"rate_limited": 2}  # Oslo, once per trial
    assert data["summary"]["usage"]["input_tokens"] > 0


def test_record_writes_traces_that_score_like_the_committed_ones(tmp_path: Path) -> None:
    import_or_skip("opentelemetry.exporter.otlp.json.file")
    recorded = tmp_path / "traces.jsonl"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "record.py"), str(recorded)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    outputs = []
    for traces in (recorded, EXAMPLE / "traces.jsonl"):
        scored = agenteval(
            tmp_path,
            "score",
            str(traces),
            "--cases",
            str(EXAMPLE / "cases.yaml"),
            "--store",
            "r.db",
            "--json",
            "o.json",
        )
        assert scored.returncode == 0, scored.stderr
        outputs.append(
            {
                case: (r["output"], [c["arguments"] for c in r["tool_calls"]])  # type: ignore[union-attr]
                for case, r in _results(tmp_path / "o.json").items()
            }
        )
    assert outputs[0] == outputs[1]
