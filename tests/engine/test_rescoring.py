"""Rescoring a stored run: read once, scored, only changed scores written, summarised in the
same pass, with the stored run's order and every score kept that no scorer gives again."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

import agenteval
from agenteval import EvalCase, Score, Trial
from agenteval.engine.rescoring import score_stored
from agenteval.report.summary import SummaryBuilder, summarize
from agenteval.run import TrialResult
from agenteval.store import RunStore


@agenteval.tool
def lookup(city: str) -> dict[str, object]:
    """Look a city up."""
    return {"city": city, "population": 2_100_000}


def agent(question: str) -> str:
    lookup(question.split()[-1].rstrip("?"))
    return "Paris" if "France" in question else "It has 2,100,000 people"


CASES = [
    EvalCase(id=f"c{i}", input=f"Capital of {country}?", expected_output="Paris")
    for i, country in enumerate(["France", "Spain", "France", "Italy"])
]


def half(case: EvalCase, trial: Trial) -> float:
    return 0.5


def rows(store: Path) -> list[tuple[int, str, str, str]]:
    with sqlite3.connect(store) as conn:
        return conn.execute(
            "SELECT rowid, case_id, name, data FROM scores ORDER BY rowid"
        ).fetchall()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def test_rescoring_with_the_same_scorers_writes_nothing_and_summarises_the_store(
    store: Path,
) -> None:
    run = agenteval.evaluate(agent, CASES, [lambda case, trial: 0.3], trials=2, store=store)
    before = rows(store)
    rescored = agenteval.rescore(run.run_id, store=store)
    assert rows(store) == before  # every score came out the same: not one was written again
    expected = summarize(run.iter_results(), [s.name for s in agenteval.scorers.default_scorers()])
    assert rescored.summary == expected
    assert rescored.summary.scorers["<lambda>"].scored == 8  # kept, and counted


def test_a_changed_score_is_written_in_place_and_the_summary_shows_it(store: Path) -> None:
    run = agenteval.evaluate(agent, CASES, store=store)
    before = {(case, name): (rowid, data) for rowid, case, name, data in rows(store)}
    strict = {"name": "exact_match", "threshold": 1.0}
    rescored = agenteval.rescore(run.run_id, [half, strict], store=store)
    after = {(case, name): (rowid, data) for rowid, case, name, data in rows(store)}
    assert after.keys() == before.keys() | {(case.id, "half") for case in CASES}
    for key, (rowid, data) in before.items():
        assert after[key] == (rowid, data)  # unchanged scores keep their row and text
    results = rescored.results
    assert [result.case.id for result in results] == [case.id for case in CASES]
    assert list(results[0].scores)[-1] == "half"  # a new score comes after the stored ones
    assert rescored.summary == summarize(rescored.iter_results(), [*rescored.summary.scorers], None)
    assert rescored.summary.scorers["half"].scored == 4


def test_a_stored_score_that_cannot_be_read_is_an_error_only_when_it_is_kept(
    store: Path,
) -> None:
    run = agenteval.evaluate(agent, CASES[:1], [half], store=store)
    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE scores SET data = '{\"name\": 1}' WHERE name = 'exact_match'")
    agenteval.rescore(run.run_id, store=store)  # replaced: never read
    with sqlite3.connect(store) as conn:  # a score no scorer gives again, unreadable
        conn.execute("UPDATE scores SET name = 'kept', data = '{\"name\": 1}' WHERE name = 'half'")
    with pytest.raises(agenteval.StoreError, match="score 'kept' of case 'c0'"):
        agenteval.rescore(run.run_id, store=store, builtins=False)


def test_scorer_errors_are_counted_apart(store: Path) -> None:
    def broken(case: EvalCase, trial: Trial) -> float:
        raise ValueError("no")

    run = agenteval.evaluate(agent, CASES, store=store)
    rescored = agenteval.rescore(run.run_id, [broken], store=store)
    stats = rescored.summary.scorers["broken"]
    assert (stats.errors, stats.scored) == (4, 0)
    assert rescored.results[0].scores["broken"].error == "ValueError: no"


def test_async_scorers_score_concurrently_and_results_come_in_stored_order(
    store: Path,
) -> None:
    run = agenteval.evaluate(agent, CASES, trials=3, store=store)
    in_flight = 0
    most = 0

    async def slow(case: EvalCase, trial: Trial) -> Score:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        # Later trials finish first: the order must come from the store, not the clock.
        await asyncio.sleep(0.01 * (3 - trial.trial))
        in_flight -= 1
        return Score(name="slow", value=1.0, passed=True)

    seen: list[TrialResult] = []

    async def rescore() -> agenteval.Run:
        return await agenteval.rescore_async(
            run.run_id, [slow], store=store, concurrency=5, on_result=seen.append
        )

    rescored = asyncio.run(rescore())
    keys = [(case.id, index) for case in CASES for index in range(3)]
    assert [result.key for result in seen] == keys
    assert set(seen[0].scores) == {*(s.name for s in agenteval.scorers.default_scorers()), "slow"}
    assert 1 < most <= 5
    assert rescored.summary.scorers["slow"].scored == 12


def test_without_merge_the_new_scores_replace_the_whole_set(store: Path) -> None:
    run = agenteval.evaluate(agent, CASES[:2], store=store)
    builder = SummaryBuilder(["half"])

    async def replace() -> None:
        with RunStore(store) as run_store:
            await score_stored(
                run_store, run.run_id, [half], concurrency=2, merge=False, summary=builder
            )

    asyncio.run(replace())
    for result in run.iter_results():
        assert list(result.scores) == ["half"]
    assert builder.build().scorers.keys() == {"half"}


def test_scores_serialised_together_are_each_as_stored() -> None:
    # The rescore's one-call comparison holds only while both give the same text.
    from agenteval.score import JudgeRecord
    from agenteval.store.encoding import scores_json as _scores_json
    from agenteval.store.encoding import to_json as _to_json
    from agenteval.trace import Usage

    scores = [
        Score(name="a"),
        Score(name="b", value=0.25, passed=False, reason="r", details={"x": [1, {"y": None}]}),
        Score(
            name="c",
            value=1.0,
            usage=Usage(input_tokens=3),
            judge=JudgeRecord(judge="openai:m", template="t", template_version=1),
        ),
        Score(name="d", error="ValueError: é", details={"set": {1}, "obj": object()}),
    ]
    assert _scores_json(scores).decode() == "[" + ",".join(map(_to_json, scores)) + "]"
