"""Cases as a stream: any iterable of `EvalCase` is read once, into the store, in order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.errors import ConfigError, StoreError
from agenteval.store import RunStore


def echo(question: str) -> str:
    return question.upper()


def stream(count: int) -> Iterator[EvalCase]:
    for i in range(count):
        yield EvalCase(id=f"case-{i}", input=f"q{i}", expected_output=f"Q{i}")


def test_a_generator_of_cases_is_run_whole_and_stored_in_order(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(echo, stream(250), trials=2, concurrency=7, store=store)
    assert run.summary.trials == 500
    assert run.summary.scorers["exact_match"].passed == 500
    with RunStore(store) as opened:
        assert opened.count_cases(run.run_id) == 250
        assert [c.id for c in opened.iter_cases(run.run_id)] == [f"case-{i}" for i in range(250)]
        assert opened.count_results(run.run_id) == 500


def test_an_empty_stream_is_refused_like_an_empty_list(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no cases"):
        agenteval.evaluate(echo, iter(()), store=tmp_path / "runs.db")


def test_duplicate_ids_are_refused_before_the_agent_runs_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    calls: list[str] = []

    def agent(question: str) -> str:
        calls.append(question)
        return question

    store = tmp_path / "runs.db"
    twice = [EvalCase(id="a", input="1"), EvalCase(id="b", input="2"), EvalCase(id="a", input="3")]
    with pytest.raises(ConfigError, match="'a'"):
        agenteval.evaluate(agent, twice, store=store)
    assert calls == []
    # In a stream the second copy is met only while storing: the run is refused whole.
    with pytest.raises(StoreError, match="'a'"):
        agenteval.evaluate(agent, iter(twice), store=store)
    assert calls == []
    with RunStore(store) as opened:
        assert opened.list_runs() == []


def test_a_listed_run_is_stored_before_any_of_its_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer stores the run and its cases while the first trials run: no result may be
    # stored before them.
    writes: list[str] = []
    create_run, write_results = RunStore.create_run, RunStore.write_results

    def recording_create(self: RunStore, *args: Any) -> int:
        writes.append("run")
        return create_run(self, *args)

    def recording_write(self: RunStore, *args: Any) -> None:
        writes.append("results")
        write_results(self, *args)

    monkeypatch.setattr(RunStore, "create_run", recording_create)
    monkeypatch.setattr(RunStore, "write_results", recording_write)
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(echo, list(stream(40)), concurrency=40, store=store)
    assert writes[0] == "run" and writes.count("run") == 1 and "results" in writes
    with RunStore(store) as opened:
        assert opened.get_info(run.run_id).status == "finished"
        assert [r.case.id for r in opened.iter_results(run.run_id)] == [
            f"case-{i}" for i in range(40)
        ]


@pytest.mark.parametrize("failing", ["create_run", "write_results"])
def test_a_store_that_cannot_be_written_ends_in_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    # The run and its results are written by the writer task while trials run: its failure
    # surfaces as the store's own error (one clear message), not as an exception group.
    def refuse(self: RunStore, *args: Any) -> None:
        raise StoreError("database or disk is full", file=tmp_path / "runs.db")

    monkeypatch.setattr(RunStore, failing, refuse)
    with pytest.raises(StoreError, match="disk is full"):
        agenteval.evaluate(echo, list(stream(30)), concurrency=5, store=tmp_path / "runs.db")
