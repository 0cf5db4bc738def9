"""Data of any shape is stored, never crashes the harness: deep, circular or unencodable values
an agent returns are stored cut (with a marker, and the trial notes it), a case file nested too
deeply is one clear error naming file and line, and one bad record never costs its batch."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.python_json import UNREADABLE, needs_unreadable

import agenteval
from agenteval import EvalCase, RunStore
from agenteval.jsonsafe import CIRCULAR, CUT_NOTE, DEEP, MAX_DEPTH, model_json
from agenteval.redaction import REDACTED, is_secret_key
from agenteval.run import RunInfo, TrialResult
from agenteval.score import Score
from agenteval.store.encoding import to_json as _to_json
from agenteval.trace import ToolCall, Trial


def nested(levels: int, leaf: Any = "bottom") -> Any:
    """`levels` dicts one inside the other: {"x": {"x": ... leaf}}."""
    value = leaf
    for _ in range(levels):
        value = {"x": value}
    return value


def depth(value: Any) -> int:
    """How many containers deep `value` goes (a scalar is 0)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item)
    return deepest


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )


def stored_trials(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        return [
            json.loads(row[0]) for row in conn.execute("SELECT data FROM trials ORDER BY rowid")
        ]


# --- an agent's deep metadata, through the real command -----------------------------------------

DEEP_AGENT = """
def nested(levels):
    value = "bottom"
    for _ in range(levels):
        value = {"x": value}
    return value

def run(question):
    if "deep" in question:
        return {"output": "Paris", "metadata": {"deep": nested(500)}}
    return "Paris"
"""


def test_an_agents_metadata_500_deep_is_stored_cut_and_the_run_finishes(tmp_path: Path) -> None:
    (tmp_path / "deep_agent.py").write_text(DEEP_AGENT)
    (tmp_path / "cases.yaml").write_text(
        "- {id: deep, input: deep, expected_output: Paris}\n"
        "- {id: flat, input: flat, expected_output: Paris}\n"
    )
    done = cli(tmp_path, "run", "cases.yaml", "--agent", "deep_agent.py:run", "--store", "s.db")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    trials = {trial["case_id"]: trial for trial in stored_trials(tmp_path / "s.db")}
    assert set(trials) == {"deep", "flat"}
    deep = trials["deep"]
    assert depth(deep) == MAX_DEPTH  # the record itself is level 1
    assert DEEP in json.dumps(deep)
    assert deep["metadata"][CUT_NOTE] == ["metadata.deep.x.x.x.…: nested deeper than 64"]
    assert CUT_NOTE not in trials["flat"].get("metadata", {})
    # Reading it back never crashes: show, report, and a resume of the finished run.
    shown = cli(tmp_path, "show", "latest", "--store", "s.db", "--json", "shown.json")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    report = cli(tmp_path, "report", "latest", "--store", "s.db", "--html", "r.html")
    assert report.returncode == 0, report.stdout + report.stderr
    assert CUT_NOTE in (tmp_path / "r.html").read_text(encoding="utf-8")
    with RunStore(tmp_path / "s.db") as store:
        (run_id,) = [row.run_id for row in store.list_runs()]
        results = list(store.iter_results(run_id))
    assert {result.trial.case_id for result in results} == {"deep", "flat"}


def test_a_record_stored_too_deep_to_read_is_read_cut(tmp_path: Path) -> None:
    """A store written before the limit may hold a trial 230 levels deep, which pydantic's JSON
    reader refuses (it stops at 200): resume, show and report read it cut instead."""
    path = tmp_path / "s.db"
    case = EvalCase(id="c", input="q", expected_output="Paris")
    info = RunInfo(target="cases.yaml")
    with RunStore(path) as store:
        store.create_run(info, [case])
        store.add_result(
            info.run_id, TrialResult(case=case, trial=Trial(case_id="c", output="Paris"))
        )
    old = json.dumps({"case_id": "c", "output": "Paris", "metadata": {"deep": nested(230)}})
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE trials SET data = ?", (old,))
    with RunStore(path) as store:
        (result,) = store.iter_results(info.run_id)
    assert result.trial.output == "Paris"
    assert depth(result.trial.model_dump(mode="json")) == MAX_DEPTH
    assert result.trial.metadata[CUT_NOTE] == ["metadata.deep.x.x.x.…: nested deeper than 64"]


# --- the writer never loses a batch --------------------------------------------------------------


class Unprintable:
    """An object whose repr and str raise: pydantic's fallback cannot write it either."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


def test_one_bad_record_never_costs_the_rest_of_its_batch(tmp_path: Path) -> None:
    circular: dict[str, Any] = {"name": "loop"}
    circular["self"] = circular

    def agent(question: str) -> Any:
        if question == "deep":
            return {"output": "Paris", "metadata": {"deep": nested(5000)}}
        if question == "bad":
            # Assigned past validation, as an agent building its own Trial can.
            trial = Trial(output="Paris")
            trial.metadata["odd"] = Unprintable()
            trial.metadata["surrogate"] = "\ud800 lone"
            trial.tool_calls.append(ToolCall(name="t", result=circular))
            return trial
        return "Paris"

    questions = ["ok-1", "deep", "ok-2", "bad", "ok-3"]
    cases = [EvalCase(id=q, input=q, expected_output="Paris") for q in questions]
    run = agenteval.evaluate(agent, cases, ["exact_match"], store=tmp_path / "s.db", concurrency=5)
    assert run.summary.trials == 5
    trials = {trial["case_id"]: trial for trial in stored_trials(tmp_path / "s.db")}
    assert set(trials) == set(questions)
    bad = trials["bad"]
    assert bad["metadata"]["odd"] == "<unrepresentable Unprintable>"
    assert bad["metadata"]["surrogate"] == "? lone"
    assert bad["tool_calls"][0]["result"] == {"name": "loop", "self": CIRCULAR}
    assert bad["metadata"][CUT_NOTE] == ["tool_calls.0.result.self: circular reference"]
    assert trials["deep"]["metadata"][CUT_NOTE] == ["metadata.deep.x.x.x.…: nested deeper than 64"]
    assert all(CUT_NOTE not in trials[q].get("metadata", {}) for q in ("ok-1", "ok-2", "ok-3"))
    assert {r.trial.case_id for r in run.iter_results()} == set(questions)


# --- the JSON copy itself ------------------------------------------------------------------------


def test_exactly_64_levels_are_kept_and_the_65th_is_cut() -> None:
    # The trial is level 1 and its metadata level 2: 62 more dicts make 64 levels.
    kept = Trial(output="a", metadata={"v": nested(62)})
    encoded = model_json(kept)
    assert encoded.cuts == ()
    assert encoded.text == kept.model_dump_json(exclude_defaults=True)
    assert depth(json.loads(encoded.text)) == MAX_DEPTH
    cut = model_json(Trial(output="a", metadata={"v": nested(63)}))
    assert len(cut.cuts) == 1
    assert depth(json.loads(cut.text)) == MAX_DEPTH


def test_the_usual_record_is_pydantics_own_json() -> None:
    trial = Trial(
        case_id="c",
        output="Paris",
        tool_calls=[ToolCall(name="search", arguments={"q": "x", "n": [1, 2]}, result={"a": 1})],
        metadata={"model": "m"},
    )
    score = Score(name="exact_match", value=1.0, passed=True, details={"compared": "text"})
    for model in (trial, score):
        encoded = model_json(model)
        assert encoded.text == model.model_dump_json(exclude_defaults=True)
        assert encoded.cuts == ()


# --- tool calls read from OpenTelemetry spans ---------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "otel"


@pytest.mark.parametrize("levels", [300, pytest.param(UNREADABLE, marks=needs_unreadable)])
def test_deep_tool_arguments_in_spans_are_scored_and_stored(tmp_path: Path, levels: int) -> None:
    """A span's arguments JSON nested 300 deep is parsed and stored cut; one past what Python's
    JSON reader takes (`tests/python_json.py`) is kept as the text it is. Neither crashes
    `score`."""
    deep = '{"city": "Lisbon", "filters": ' + '{"x": ' * levels + "1" + "}" * levels + "}"
    traces = (EXAMPLE / "traces.jsonl").read_text()
    planted = traces.replace('{\\"city\\": \\"Lisbon\\"}', json.dumps(deep)[1:-1])
    assert planted != traces
    (tmp_path / "traces.jsonl").write_text(planted)
    cases = str(EXAMPLE / "cases.yaml")
    done = cli(tmp_path, "score", "traces.jsonl", "--cases", cases, "--store", "s.db")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lisbon = next(t for t in stored_trials(tmp_path / "s.db") if t["case_id"] == "lisbon-weather")
    arguments = lisbon["tool_calls"][0]["arguments"]
    if levels == 300:
        assert arguments["city"] == "Lisbon"
        assert lisbon["metadata"][CUT_NOTE] == [
            "tool_calls.0.arguments.filters.x.…: nested deeper than 64"
        ]
    else:
        assert arguments == {"input": deep}


# --- the quick look never lets through what the careful copy would cut or mask ----------------

KEYS = st.sampled_from(["a", "query", "api_key", "Password", "x-session-cookie", "max_tokens", "k"])
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.just(""))
DATA = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=40,
)


def wrapped(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


@settings(max_examples=300, deadline=None)
@given(data=DATA, levels=st.integers(min_value=0, max_value=70))
def test_a_stored_trial_is_never_too_deep_nor_holds_a_secret_named_value(
    data: Any, levels: int
) -> None:
    trial = Trial(
        output="a",
        metadata={"v": wrapped(data, levels)},
        tool_calls=[ToolCall(name="t", result=data)],
    )
    text = _to_json(trial)
    stored = json.loads(text)
    assert depth(stored) <= MAX_DEPTH

    def check(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key != CUT_NOTE and is_secret_key(key):
                    assert item in (None, True, False, "", REDACTED)
                else:
                    check(item)
        elif isinstance(value, list):
            for item in value:
                check(item)

    check(stored)
    Trial.model_validate_json(text)  # and it reads back
    if text == trial.model_dump_json(exclude_defaults=True):
        assert CUT_NOTE not in stored.get("metadata", {})


def test_the_cuts_a_value_lost_are_read_from_its_text_and_found_in_its_data() -> None:
    from agenteval.jsonsafe import TOO_MANY, cuts_in, holds_cut

    text = json.dumps({"a": DEEP, "b": [CIRCULAR, TOO_MANY, DEEP], "c": "<cut"})
    # Each reason once, in order; a circular reference lost nothing (it is data met again).
    assert cuts_in(text) == [f"nested deeper than {MAX_DEPTH}", "more than 1,000,000 values"]
    assert cuts_in(json.dumps({"a": CIRCULAR, "b": "plain"})) == []
    # Found inside dict keys and values, lists and tuples, at any depth; data with cycles or
    # shared parts is walked too, each container once.
    deep: Any = {"leaf": DEEP}
    for _ in range(5_000):
        deep = {"k": [deep]}
    looped: dict[str, Any] = {"x": 1}
    looped["self"] = looped
    assert holds_cut(deep) and holds_cut({DEEP: 1}) and holds_cut(("a", (TOO_MANY,)))
    assert not holds_cut(looped) and not holds_cut({"k": [("a", 1)] * 1_000, "z": "ok"})
    assert holds_cut({"pairs": {i: ("a", i) for i in range(1_000)}, "z": DEEP})
