"""JSONL and CSV case files streamed into a run (issue 21): a run given such a file holds its
text and ids, never its cases as a list, and still refuses a broken file whole, before any
trial, with the message `load_cases` gives."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

import agenteval
from agenteval.casefiles.loading import open_cases
from agenteval.casefiles.streaming import CaseStream
from agenteval.datasets import load_cases
from agenteval.errors import ConfigError, DatasetError
from agenteval.store import RunStore

CALLS: list[str] = []


async def counting_agent(question: str) -> str:
    CALLS.append(question)
    return "Paris"


def _jsonl(path: Path, count: int, *, last: str | None = None) -> Path:
    lines = [
        json.dumps({"id": f"case-{i}", "input": f"q{i}", "expected_output": "Paris"})
        for i in range(count)
    ]
    path.write_text("\n".join([*lines, *([last] if last is not None else [])]) + "\n")
    return path


def _csv(path: Path, count: int, *, last: str | None = None) -> Path:
    rows = ["id,input,expected_output", *(f"case-{i},q{i},Paris" for i in range(count))]
    path.write_text("\n".join([*rows, *([last] if last is not None else [])]) + "\n")
    return path


WRITERS = {"jsonl": _jsonl, "csv": _csv}


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_line_oriented_file_is_opened_as_a_stream_holding_no_case(
    tmp_path: Path, fmt: str
) -> None:
    path = WRITERS[fmt](tmp_path / f"cases.{fmt}", 3)

    stream = open_cases(path)

    assert isinstance(stream, CaseStream)
    assert len(stream) == 3
    assert stream.notable == ()  # no mocks, no simulated user: nothing kept from the first pass
    assert not any(isinstance(value, list) for value in vars(stream).values())
    first, again = next(iter(stream)), next(iter(stream))
    assert first == again and first is not again  # made again on every pass, never kept
    assert list(stream) == load_cases(path)


def test_yaml_and_json_files_are_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"id": "a", "input": "q"}]))

    assert open_cases(path) == load_cases(path)


def test_only_the_cases_a_run_checks_first_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"id": "plain", "input": "q"}\n'
        '{"id": "mocked", "input": "q", "tool_mocks": {"lookup": {"result": 1}}}\n'
        '{"id": "user", "user_simulation": {"goal": "a refund"}}\n'
    )

    stream = open_cases(path)

    assert isinstance(stream, CaseStream)
    assert [case.id for case in stream.notable] == ["mocked", "user"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_broken_last_line_stops_the_run_before_any_trial(tmp_path: Path, fmt: str) -> None:
    broken = (
        '{"id": "case-x", "input": "q", "expected_outptu": "P"}'
        if fmt == "jsonl"
        else "x,q,P,extra"
    )
    path = WRITERS[fmt](tmp_path / f"cases.{fmt}", 50, last=broken)
    with pytest.raises(DatasetError) as expected:
        load_cases(path)
    CALLS.clear()

    with pytest.raises(DatasetError) as caught:
        agenteval.evaluate(counting_agent, path, store=tmp_path / "runs.db", builtins=False)

    assert str(caught.value) == str(expected.value)
    header = 1 if fmt == "csv" else 0
    assert (caught.value.file, caught.value.line) == (str(path), 51 + header)
    assert CALLS == []
    with RunStore(tmp_path / "runs.db") as store:
        assert store.list_runs() == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_duplicate_id_stops_the_run_before_any_trial(tmp_path: Path, fmt: str) -> None:
    last = '{"id": "case-3", "input": "again"}' if fmt == "jsonl" else "case-3,again,Paris"
    path = WRITERS[fmt](tmp_path / f"cases.{fmt}", 20, last=last)
    CALLS.clear()

    with pytest.raises(DatasetError) as caught:
        agenteval.evaluate(counting_agent, path, store=tmp_path / "runs.db", builtins=False)

    header = 1 if fmt == "csv" else 0
    assert (
        caught.value.message
        == f"duplicate id: case 4 (line {4 + header}) already has the id 'case-3'"
    )
    assert caught.value.line == 21 + header
    assert CALLS == []


def test_a_simulated_user_without_a_simulator_is_refused_before_the_run(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "cases.jsonl", 5, last='{"id": "u", "user_simulation": {"goal": "g"}}')
    CALLS.clear()

    with pytest.raises(ConfigError, match="simulates its user"):
        agenteval.evaluate(counting_agent, path, store=tmp_path / "runs.db", builtins=False)

    assert CALLS == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_streamed_file_runs_every_case_once_and_stores_them_in_order(
    tmp_path: Path, fmt: str
) -> None:
    path = WRITERS[fmt](tmp_path / f"cases.{fmt}", 30)
    CALLS.clear()

    run = agenteval.evaluate(
        counting_agent, path, ["exact_match"], store=tmp_path / "runs.db", builtins=False
    )

    assert sorted(CALLS) == sorted(f"q{i}" for i in range(30))
    assert run.summary.scorers["exact_match"].passed == 30
    with RunStore(tmp_path / "runs.db") as store:
        stored = [case.id for case in store.iter_cases(run.run_id)]
        assert stored == [f"case-{i}" for i in range(30)]
        assert store.get_info(run.run_id).dataset == str(path)


def _peak_of(work: object) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        work()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_reading_a_streamed_file_holds_a_fraction_of_its_cases(tmp_path: Path, fmt: str) -> None:
    # Measured in this process (tracemalloc counts only its own allocations): opening and
    # reading 20,000 cases as a run does (the check, then a pass a case at a time) against
    # holding them as a list. The stream peaks at ~7 MB here (the text, the ids); the list at
    # ~27 MB (the cases on top of them): a quarter, asserted below half.
    path = WRITERS[fmt](tmp_path / f"cases.{fmt}", 20_000)

    def streamed() -> None:
        for _ in open_cases(path):
            pass

    def listed() -> None:
        cases = load_cases(path)
        del cases

    stream_peak, list_peak = _peak_of(streamed), _peak_of(listed)

    assert stream_peak < list_peak / 2, (stream_peak, list_peak)
