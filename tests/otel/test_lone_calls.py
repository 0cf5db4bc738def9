"""`agenteval score` over traces as real instrumentations write them when the app opens no span
of its own: each model call a trace of its own. Recorded by `record_lone_calls.py` (a plain
openai-SDK tool agent under openai-v2, OpenInference or OpenLLMetry, against a loopback model
server, in a process importing nothing of agenteval), then scored in a child `agenteval`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.cli_process import CHECKOUT_SRC
from tests.otel.installed import import_or_skip

from agenteval.errors import DatasetError
from agenteval.otel.reading import read_recorded
from agenteval.otel.scoring import score_traces

import_or_skip("opentelemetry.instrumentation.openai_v2")
import_or_skip("openinference.instrumentation.openai")
import_or_skip("opentelemetry.instrumentation.openai")

RECORDER = Path(__file__).with_name("record_lone_calls.py")
CITIES = ("Paris", "Oslo", "Rome")
CASES = "".join(
    f"- id: case-{city}\n  input: {city}\n  expected_output: Sunny in {city}.\n" for city in CITIES
)
LONE = "a lone model call (one model-call span, no span of the app's own around it)"
WRAP = 'with tracer.start_as_current_span("my-agent", attributes={"agenteval.case.id": case_id}):'

Record = Callable[[str, str], Path]


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Record:
    """`record(family, mode)`: the traces of the agent over the three cases (recorded once)."""
    folder = tmp_path_factory.mktemp("recorded")
    done: dict[tuple[str, str], Path] = {}

    def recorded(family: str, mode: str) -> Path:
        if (family, mode) not in done:
            out = folder / f"{family}-{mode}.jsonl"
            ran = subprocess.run(
                [sys.executable, str(RECORDER), str(out), family, mode, *CITIES],
                capture_output=True,
                text=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": CHECKOUT_SRC},
                timeout=300,
            )
            assert ran.returncode == 0, ran.stderr
            done[family, mode] = out
        return done[family, mode]

    return recorded


def score(cwd: Path, traces: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (cwd / "cases.yaml").write_text(CASES)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "score",
            str(traces),
            *("--cases", "cases.yaml"),
            *("--store", "r.db", *args),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "COLUMNS": "5000",  # one line a line: the wording is checked as written
        },
        timeout=300,
    )


@pytest.mark.parametrize(("family", "going_on"), [("v2", 3), ("v2bare", 0), ("oi", 3), ("tl", 3)])
def test_each_model_call_is_read_as_a_lone_call_asking_for_tools_or_going_on_from_them(
    record: Record, family: str, going_on: int
) -> None:
    shapes = [r.shape for r in read_recorded(record(family, "bare"))]
    assert all(s is not None and s.lone_model_call for s in shapes)
    # Each trial: a call that asks for get_weather, then one that answers from its result
    # (which only message content shows: openai-v2 records none by default).
    assert [s.asks_for_tools for s in shapes if s is not None] == [True, False] * 3
    assert sum(s.continues for s in shapes if s is not None) == going_on
    wrapped = [r.shape for r in read_recorded(record(family, "wrapped"))]
    assert len(wrapped) == 3
    assert not any(s is None or s.lone_model_call for s in wrapped)


@pytest.mark.parametrize("family", ["v2", "v2bare", "oi", "tl"])
def test_each_model_call_its_own_trace_with_no_case_named_is_an_error_with_the_fix(
    record: Record, tmp_path: Path, family: str
) -> None:
    traces = record(family, "bare")
    assert len(read_recorded(traces)) == 6  # two model calls a trial, three trials
    done = score(tmp_path, traces)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.db").exists()  # nothing was scored, nothing stored
    assert (
        f"error: {traces}, field 'agenteval.case.id': none of the 6 traces names its case (no "
        f"span carries 'agenteval.case.id'), and each is {LONE}: unless the agent makes one "
        "model call per trial, each trial's model calls are split over several traces; pairing "
        "them with the 3 cases by order would be a guess\n"
    ) in done.stderr
    assert WRAP in done.stderr
    assert "in JavaScript or another SDK: start an active span around each trial" in done.stderr
    assert "or pass --match-attribute NAME" in done.stderr
    assert "or pass --match-by-order (match_by_order=True in Python)" in done.stderr


@pytest.mark.parametrize("family", ["v2", "oi", "tl"])
def test_matching_by_order_refuses_model_calls_that_go_on_from_one_another(
    record: Record, tmp_path: Path, family: str
) -> None:
    traces = record(family, "bare")
    done = score(tmp_path, traces, "--match-by-order")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        f"error: {traces}, field 'agenteval.case.id': --match-by-order pairs one trace with "
        f"each trial, but 3 of these 6 traces are each {LONE} going on from tool results an "
        "earlier call asked for: a trial's model calls are split over several traces\n"
    ) in done.stderr
    assert WRAP in done.stderr


@pytest.mark.parametrize("family", ["v2", "oi", "tl"])
def test_a_case_id_copied_onto_every_model_call_is_an_error_naming_the_case(
    record: Record, tmp_path: Path, family: str
) -> None:
    traces = record(family, "stamped")
    done = score(tmp_path, traces)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        f"error: {traces}, case 'case-Paris', field 'agenteval.case.id': 2 traces naming this "
        f"case are each {LONE}, and 1 of them goes on from tool results an earlier call asked "
        "for: one trial's model calls are split over several traces, and scoring each as a "
        "trial would be wrong (cases 'case-Oslo', 'case-Rome' too)\n"
    ) in done.stderr
    assert WRAP in done.stderr
    assert "a span processor that copies agenteval.case.id onto every span" in done.stderr


def test_without_message_content_split_calls_naming_their_case_are_a_warning(
    record: Record, tmp_path: Path
) -> None:
    # openai-v2's default records no message: nothing proves the calls are one trial's, and a
    # one-call agent's trials look the same. Scored, with the warning and the fix.
    done = score(tmp_path, record("v2bare", "stamped"))
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: 3 cases have several traces that are each {LONE}: 'case-Paris' (2), "
        "'case-Oslo' (2), 'case-Rome' (2); each is scored as a trial of one model call, though "
        "3 of them end asking for tool calls, as a call does when its trial goes on in another "
        "trace. If a trial makes several model calls, they are split over traces: wrap each "
        "trial in one span"
    ) in done.stderr
    assert WRAP in done.stderr


@pytest.mark.parametrize("family", ["v2", "oi", "tl"])
def test_the_fix_one_span_of_the_apps_own_naming_the_case_scores_each_trial_right(
    record: Record, tmp_path: Path, family: str
) -> None:
    done = score(tmp_path, record(family, "wrapped"), "--json", "o.json")
    assert done.returncode in (0, 1), done.stderr  # 1: a scorer may fail, never a mismatch
    assert "warning" not in done.stderr
    document = json.loads((tmp_path / "o.json").read_text())
    assert document["settings"]["matching"] == {
        "by": "attribute",
        "attribute": "agenteval.case.id",
        "recorded": 3,
        "left_out": 0,
        "cases_without_trials": 0,
        "lone_model_calls": 0,
    }
    outputs = {r["case_id"]: r["output"] for r in document["results"]}
    assert outputs == {f"case-{city}": f"Sunny in {city}." for city in CITIES}
    assert all(r["scores"]["exact_match"]["passed"] for r in document["results"])


def test_order_matching_when_asked_is_warned_about_stored_and_reported(
    record: Record, tmp_path: Path
) -> None:
    traces = tmp_path / "unnamed.jsonl"
    traces.write_text(record("v2", "wrapped").read_text().replace("agenteval.case.id", "x.y"))
    refused = score(tmp_path, traces)
    assert refused.returncode == 2
    assert (
        f"error: {traces}, field 'agenteval.case.id': none of the 3 traces names its case (no "
        "span carries 'agenteval.case.id'); pairing them with the 3 cases by order would be a "
        "guess\n"
    ) in refused.stderr
    done = score(tmp_path, traces, "--match-by-order", "--json", "o.json")
    assert done.returncode in (0, 1), done.stderr
    assert (
        "warning: no trace names its case: the 3 traces are matched to the 3 cases by order, "
        "as asked (--match-by-order)\n"
    ) in done.stderr
    assert "matched to cases by order (--match-by-order): no trace named its case" in done.stdout
    document = json.loads((tmp_path / "o.json").read_text())
    assert document["settings"]["matching"]["by"] == "order"
    outputs = {r["case_id"]: r["output"] for r in document["results"]}
    assert outputs == {f"case-{city}": f"Sunny in {city}." for city in CITIES}
    shown = subprocess.run(
        [sys.executable, "-m", "agenteval", "show", "latest", "--store", "r.db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        timeout=300,
    )
    assert "matched to cases by order (--match-by-order)" in shown.stdout


def test_traces_naming_no_case_beside_named_ones_are_left_out_and_counted(
    record: Record, tmp_path: Path
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "1-wrapped.jsonl").write_text(record("oi", "wrapped").read_text())
    (folder / "2-bare.jsonl").write_text(record("oi", "bare").read_text())
    for flags in ((), ("--match-by-order",)):  # asking for order changes nothing here
        done = score(tmp_path, folder, "--json", "o.json", *flags)
        assert done.returncode in (0, 1), done.stderr
        assert (
            "warning: 6 of the 9 traces name no case (no span carries 'agenteval.case.id'), "
            f"left out: {folder / '2-bare.jsonl'}:1 (trace "
        ) in done.stderr
        assert f"and 3 more; 6 of them are each {LONE}, perhaps a part of a trial" in done.stderr
        assert "6 of 9 traces left out" in done.stdout
        document = json.loads((tmp_path / "o.json").read_text())
        assert document["settings"]["matching"]["by"] == "attribute"
        assert document["settings"]["matching"]["left_out"] == 6
        assert len(document["results"]) == 3


def test_score_traces_in_python_asks_for_order_matching_by_name(
    record: Record, tmp_path: Path
) -> None:
    traces = tmp_path / "unnamed.jsonl"
    traces.write_text(record("tl", "wrapped").read_text().replace("agenteval.case.id", "x.y"))
    (tmp_path / "cases.yaml").write_text(CASES)
    with pytest.raises(DatasetError, match="pairing them with the 3 cases by order would be"):
        score_traces(traces, tmp_path / "cases.yaml", store=tmp_path / "r.db")
    warned: list[str] = []
    run = score_traces(
        traces,
        tmp_path / "cases.yaml",
        store=tmp_path / "r.db",
        match_by_order=True,
        on_warning=warned.append,
    )
    assert run.info.settings["matching"]["by"] == "order"
    assert warned[0].startswith("no trace names its case: the 3 traces are matched")
    assert [r.trial.output for r in run.results] == [f"Sunny in {c}." for c in CITIES]


def test_trials_sharing_one_trace_under_a_span_of_the_apps_own_are_each_a_trial(
    record: Record, tmp_path: Path
) -> None:
    # A span around the whole loop (a batch, a long-lived server span) puts every trial in one
    # trace; each span naming a case below it is a trial, never one trial of the first case.
    traces = record("v2", "batched")
    recorded = read_recorded(traces)
    assert [(r.key, r.trial.output) for r in recorded] == [
        (f"case-{city}", f"Sunny in {city}.") for city in CITIES
    ]
    assert len({(r.trial.metadata["trace_id"], r.trial.trace_id) for r in recorded}) == 1
    # Each trial's span is its own `my-agent` span (scores sent out hang under it).
    assert len({r.trial.span_id for r in recorded} - {None}) == 3
    done = score(tmp_path, traces, "--json", "o.json")
    assert done.returncode in (0, 1), done.stderr
    assert "warning" not in done.stderr
    document = json.loads((tmp_path / "o.json").read_text())
    outputs = {r["case_id"]: r["output"] for r in document["results"]}
    assert outputs == {f"case-{city}": f"Sunny in {city}." for city in CITIES}
    assert all(len(r["usage"]) and r["usage"]["input_tokens"] == 20 for r in document["results"])


def test_traces_whose_root_span_naming_the_case_is_missing_are_said_to_lack_it(
    record: Record, tmp_path: Path
) -> None:
    # The app's span naming the case was never exported (the app ended first) or went to
    # another process's file: each trial's model calls are left hanging under a missing parent.
    export = json.loads(record("v2", "wrapped").read_text())
    for resource in export["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s["name"] != "my-agent"]
    traces = tmp_path / "rootless.jsonl"
    traces.write_text(json.dumps(export) + "\n")
    assert all(r.shape is not None and r.shape.rootless for r in read_recorded(traces))
    done = score(tmp_path, traces)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        f"error: {traces}, field 'agenteval.case.id': none of the 3 traces names its case (no "
        "span carries 'agenteval.case.id'); all 3 traces lack their root span (the parent "
        "of their top span is in no file read: it was never exported (the app ended before it "
        "did), or another process exported it elsewhere; it may be the span naming the case); "
        "pairing them with the 3 cases by order would be a guess\n"
    ) in done.stderr


def test_two_recordings_in_one_file_are_scored_as_trials_with_a_warning(
    record: Record, tmp_path: Path
) -> None:
    # A trace file the Collector appends to keeps every recording: two processes that each
    # answered every case may be a before and an after, not two trials of one agent.
    traces = tmp_path / "appended.jsonl"
    traces.write_text(record("v2", "wrapped").read_text() + record("oi", "wrapped").read_text())
    done = score(tmp_path, traces, "--json", "o.json")
    assert done.returncode in (0, 1), done.stderr
    assert (
        "warning: the traces come from 2 processes (service.instance.id) that each answered "
        "every case, scored as one run with each answer a trial of its case; if they are "
        "separate recordings (before and after a change, say: a trace file the Collector "
        "appends to keeps both), score their traces apart\n"
    ) in done.stderr
    assert json.loads((tmp_path / "o.json").read_text())["settings"]["trials"] == 2
