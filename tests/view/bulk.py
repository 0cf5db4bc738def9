"""Large stored runs, written fast, for the viewer's tests: real store files, real rows.

`write_bulk_run` stores a finished run of any size in a few seconds: the run and its cases go
through `RunStore.create_run` (so they are what the store writes), and the trials and scores
are a few JSON templates, each made once by the store's own encoder (`encoding.to_json`) from
real `Trial` and `Score` records, with the case id, trial number and latency put in per row and
written with `executemany`. Every row is one the store could have written: reading it back
goes through the same parsing as any run's.

`live_writer_command` is a process that stores a run trial by trial through `RunStore`, as a
run in progress does, for the live tests.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agenteval.case import EvalCase
from agenteval.records import RunInfo, RunStatus
from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.store.encoding import to_json
from agenteval.trace import Failure, FailureCause, ModelCall, Trial, Usage

__all__ = ["KINDS", "SCORERS", "TAGS", "expected_kind", "live_writer_command", "write_bulk_run"]

SCORERS = ("exact_match", "tool_selection", "helpful")
"""The scorers every bulk trial has a score of (`helpful` a custom one)."""
TAGS = ("billing", "search", "smalltalk")
"""A case's tag is TAGS[case index % 3]."""
KINDS = ("pass", "fail", "error", "unscored")
"""What a bulk trial is, as `expected_kind` picks it."""

# Markers JSON writes as they are (plain ASCII, nothing to escape).
_CASE = "@@CASE@@"
_TRIAL = "@@TRIAL@@"
_LATENCY = "@@LATENCY@@"


def expected_kind(case_index: int, trial: int) -> str:
    """The kind of trial `trial` of case `case_index`: mostly passes, some failures and
    errors, a few unscored; case 7 of every 11 flips between pass and fail (flaky)."""
    if case_index % 11 == 7:
        return "pass" if trial % 2 == 0 else "fail"
    slot = (case_index * 7 + trial) % 20
    return "error" if slot == 0 else "unscored" if slot == 1 else "fail" if slot < 6 else "pass"


def expected_latency(case_index: int, trial: int) -> float:
    """The trial's stored latency: distinct per row, so sorting by it is a real order."""
    return round(0.5 + ((case_index * 31 + trial * 17) % 997) / 100, 3)


@dataclass(frozen=True, slots=True)
class _Template:
    """One kind of trial: its JSON and its scores' JSON, with the case id, trial number and
    latency left as markers to put in per row."""

    trial: list[str]
    scores: list[tuple[str, list[str]]]


def _split(text: str) -> list[str]:
    """The JSON text cut at its markers: text, marker, text, ... (markers as themselves)."""
    parts: list[str] = []
    rest = text
    while True:
        at = [(rest.find(m), m) for m in (_CASE, _TRIAL, _LATENCY) if m in rest]
        if not at:
            parts.append(rest)
            return parts
        index, marker = min(at)
        parts.extend((rest[:index], marker))
        rest = rest[index + len(marker) :]


def _fill(parts: list[str], case_id: str, trial: int, latency: float) -> str:
    values = {_CASE: json.dumps(case_id)[1:-1], _TRIAL: str(trial), _LATENCY: repr(latency)}
    return "".join(values.get(part, part) for part in parts)


def _template(kind: str) -> _Template:
    failed = kind == "error"
    trial = Trial(
        case_id=_CASE,
        trial=7,  # 7 is a marker too: the trial number is put in below
        output=None if failed else f"answer for {_CASE}",
        latency_s=1.25,
        working_latency_s=1.0,
        model_calls=[
            ModelCall(model="gpt-4o-mini", usage=Usage(input_tokens=120, output_tokens=30))
        ],
        usage=Usage(input_tokens=120, output_tokens=30),
        failure=Failure(cause=FailureCause.AGENT_ERROR, message="agent raised ValueError")
        if failed
        else None,
    )
    text = to_json(trial).replace('"trial":7', f'"trial":{_TRIAL}')
    text = text.replace('"latency_s":1.25', f'"latency_s":{_LATENCY}')
    passed = kind == "pass"
    scores: list[tuple[str, Score]] = [
        (
            "exact_match",
            Score(
                name="exact_match",
                value=None if kind == "unscored" else 1.0 if passed else 0.0,
                passed=None if kind == "unscored" else passed,
                reason="no expected_output in the case"
                if kind == "unscored"
                else f"compared with the expected answer of {_CASE}",
            ),
        ),
        ("tool_selection", Score(name="tool_selection", reason="no expected_tools in the case")),
        (
            "helpful",
            Score(
                name="helpful",
                value=None if kind in ("unscored", "error") else 0.8 if passed else 0.6,
                passed=None if kind in ("unscored", "error") else True,
                reason="helpful enough",
            ),
        ),
    ]
    assert _TRIAL in text and _LATENCY in text and _CASE in text
    return _Template(
        trial=_split(text), scores=[(name, _split(to_json(score))) for name, score in scores]
    )


def write_bulk_run(
    path: Path,
    trials: int = 100_000,
    cases: int | None = None,
    *,
    target: str = "bulk.yaml",
    created_at: datetime | None = None,
    finished: bool = True,
) -> str:
    """Store a run of `trials` trials over `cases` cases (default: half as many, two trials
    each) in the store at `path` (made if missing); return its id.

    Trial `t` of case `i` (id `case-00000i`) is of `expected_kind(i, t)` and has latency
    `expected_latency(i, t)`. `trials` must be a multiple of `cases`.
    """
    cases = cases if cases is not None else max(trials // 2, 1)
    if trials % cases:
        raise ValueError(f"{trials} trials do not divide into {cases} cases")
    per_case = trials // cases
    created = created_at or datetime.now(UTC)
    info = RunInfo(
        created_at=created,
        finished_at=created + timedelta(seconds=trials / 1000) if finished else None,
        status=RunStatus.FINISHED if finished else RunStatus.RUNNING,
        target=target,
        agent="python:bulk_agent",
        trials=per_case,
        concurrency=8,
    )
    with RunStore(path) as store:
        store.create_run(info, _cases(cases))
    templates = {kind: _template(kind) for kind in KINDS}
    written_at = (created + timedelta(seconds=1)).isoformat(timespec="microseconds")
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO trials (run_id, case_id, trial, data, finished_at) VALUES (?, ?, ?, ?, ?)",
            (
                (info.run_id, case_id, t, _fill(templates[kind].trial, case_id, t, lat), written_at)
                for case_id, t, kind, lat in _keys(cases, per_case)
            ),
        )
        db.executemany(
            "INSERT INTO scores (run_id, case_id, trial, name, data) VALUES (?, ?, ?, ?, ?)",
            (
                (info.run_id, case_id, t, name, _fill(parts, case_id, t, lat))
                for case_id, t, kind, lat in _keys(cases, per_case)
                for name, parts in templates[kind].scores
            ),
        )
        db.execute("COMMIT")
    return info.run_id


def case_id(index: int) -> str:
    """The id of bulk case `index`."""
    return f"case-{index:06d}"


def _cases(count: int) -> Iterator[EvalCase]:
    for index in range(count):
        yield EvalCase(
            id=case_id(index),
            input=f"question number {index}: what does plan {index % 13} cost?",
            expected_output=f"answer for {case_id(index)}",
            tags=[TAGS[index % len(TAGS)]],
        )


def _keys(cases: int, per_case: int) -> Iterator[tuple[str, int, str, float]]:
    for index in range(cases):
        cid = case_id(index)
        for t in range(per_case):
            yield cid, t, expected_kind(index, t), expected_latency(index, t)


# -- a run in progress, written by another process --------------------------------------------

_LIVE_SCRIPT = r"""
import sys, time
from agenteval.case import EvalCase
from agenteval.records import RunInfo, RunStatus, TrialResult
from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.trace import Trial

path, run_id, count, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
cases = [EvalCase(id=f"live-{i:04d}", input=f"live question {i}") for i in range(count)]
with RunStore(path) as store:
    store.create_run(RunInfo(run_id=run_id, target="live.yaml", trials=1), cases)
    print("created", flush=True)
    for i, case in enumerate(cases):
        trial = Trial(case_id=case.id, output=f"live answer {i}", latency_s=0.1 + i / 1000)
        score = Score(name="exact_match", value=1.0, passed=True)
        store.add_result(run_id, TrialResult(case=case, trial=trial, scores={score.name: score}))
        print("stored", i + 1, flush=True)
        if delay:
            time.sleep(delay)
    if sys.argv[5:] == ["finish"]:
        store.set_status(run_id, RunStatus.FINISHED)
        print("finished", flush=True)
"""


def live_writer_command(
    path: Path, run_id: str, trials: int, delay_s: float, *, finish: bool = True
) -> list[str]:
    """The command of a process that stores run `run_id` (on `trials` cases, one trial each)
    in the store at `path` through `RunStore`, one trial at a time with `delay_s` between
    them, printing `created`, then `stored N` after each, then `finished` once it marks the
    run finished (with `finish`)."""
    return [
        sys.executable,
        "-c",
        _LIVE_SCRIPT,
        str(path),
        run_id,
        str(trials),
        str(delay_s),
        *(["finish"] if finish else []),
    ]
