"""The SQLite run store: round trips, resume keys, rescoring, run ids, bad files, durability."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from agenteval.case import EvalCase
from agenteval.errors import StoreError
from agenteval.redaction import Redactor
from agenteval.run import RunInfo, RunStatus, TrialResult
from agenteval.score import Score
from agenteval.store import SCHEMA_VERSION, RunStore
from agenteval.trace import AgentStep, Failure, FailureCause, ModelCall, ToolCall, Trial, Usage

T0 = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def make_cases(n: int = 3) -> list[EvalCase]:
    return [
        EvalCase(id=f"case-{i}", input=f"what is {i} + {i}?", expected_output=str(2 * i))
        for i in range(n)
    ]


def make_info(run_id: str = "20261130-070000-aaaa", **fields: object) -> RunInfo:
    return RunInfo.model_validate(
        {"run_id": run_id, "created_at": T0, "target": "evals.yaml", "trials": 2, **fields}
    )


def make_result(case: EvalCase, trial: int = 0, value: float = 1.0) -> TrialResult:
    return TrialResult(
        case=case,
        trial=Trial(case_id=case.id, trial=trial, output="4", latency_s=0.25),
        scores={"exact_match": Score(name="exact_match", value=value, passed=value == 1.0)},
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(tmp_path / "runs.db") as opened:
        yield opened


# -- runs ------------------------------------------------------------------------------------


def test_a_new_store_creates_its_folder_and_file(tmp_path: Path) -> None:
    path = tmp_path / ".agenteval" / "runs.db"
    with RunStore.open(path) as store:
        assert store.path == path
        assert store.list_runs() == []
    assert path.is_file()


def test_create_run_then_read_back_its_info_and_cases_in_order(store: RunStore) -> None:
    cases = list(reversed(make_cases(3)))
    info = make_info(scorers=["exact_match"], settings={"model": "gpt-x"})

    store.create_run(info, cases)

    assert store.get_info(info.run_id) == info
    assert store.get_cases(info.run_id) == cases


class _Ledger:
    """A value pydantic cannot write (the store keeps its text)."""


def test_a_decimal_in_an_initial_state_is_read_back_as_that_decimal(store: RunStore) -> None:
    # Before, a case holding also a value pydantic cannot write was stored by the careful copy,
    # which wrote the Decimal as its text: a stream of such cases started from "0.50".
    cases = [
        EvalCase(id="plain", input="q", initial_state={"balance": Decimal("0.50")}),
        EvalCase(
            id="odd",
            input="q",
            initial_state={"balance": Decimal("0.50"), "ledger": _Ledger(), "n": [Decimal("2")]},
        ),
        EvalCase(id="own", input="q", initial_state={"tag": {"$decimal": "not a number"}}),
    ]
    store.create_run(make_info(), cases)
    read = {case.id: case.initial_state or {} for case in store.get_cases(make_info().run_id)}
    assert read["plain"] == {"balance": Decimal("0.50")}
    assert isinstance(read["plain"]["balance"], Decimal)
    assert str(read["odd"]["balance"]) == "0.50" and read["odd"]["n"] == [Decimal("2")]
    assert isinstance(read["odd"]["balance"], Decimal)
    assert str(read["odd"]["ledger"]).startswith("<tests.test_store._Ledger object")
    assert read["own"] == {"tag": {"$decimal": "not a number"}}


def test_list_runs_newest_first_with_progress(store: RunStore) -> None:
    cases = make_cases(3)
    old = make_info("20261130-070000-aaaa")
    new = make_info("20261130-080000-bbbb", created_at=T0 + timedelta(hours=1), trials=1)
    store.create_run(old, cases)
    store.create_run(new, cases[:2])
    store.add_result(old.run_id, make_result(cases[0], 0))
    store.add_result(old.run_id, make_result(cases[0], 1))

    rows = store.list_runs()

    assert [row.run_id for row in rows] == [new.run_id, old.run_id]
    newest, oldest = rows
    assert (newest.trials_done, newest.trials_total) == (0, 2)
    assert (oldest.trials_done, oldest.trials_total, oldest.cases) == (2, 6, 3)
    assert oldest.created_at == T0
    assert oldest.status is RunStatus.RUNNING
    assert oldest.target == "evals.yaml"
    assert [row.run_id for row in store.list_runs(limit=1)] == [new.run_id]


def test_created_at_in_other_time_zones_still_sorts_by_time(store: RunStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    # 08:30 at +02:00 is 06:30 UTC: earlier than T0, though its text sorts later.
    early = make_info("run-early", created_at=datetime(2026, 11, 30, 8, 30, tzinfo=plus_two))
    store.create_run(early, [])
    store.create_run(make_info("run-late"), [])

    assert [row.run_id for row in store.list_runs()] == ["run-late", "run-early"]


def test_a_run_id_cannot_be_created_twice(store: RunStore) -> None:
    store.create_run(make_info(), make_cases())

    with pytest.raises(StoreError, match="already stored"):
        store.create_run(make_info(), make_cases())


def test_duplicate_case_ids_are_refused_before_anything_is_written(store: RunStore) -> None:
    cases = [*make_cases(2), make_cases(1)[0]]

    with pytest.raises(StoreError, match="'case-0' twice"):
        store.create_run(make_info(), cases)
    assert store.list_runs() == []


def test_set_status_and_update_info(store: RunStore) -> None:
    info = make_info()
    store.create_run(info, make_cases())
    done_at = T0 + timedelta(minutes=5)

    store.set_status(info.run_id, RunStatus.FINISHED, finished_at=done_at)

    stored = store.get_info(info.run_id)
    assert (stored.status, stored.finished_at) == (RunStatus.FINISHED, done_at)
    assert store.list_runs()[0].finished_at == done_at

    store.set_status(info.run_id, RunStatus.RUNNING)  # resumed
    assert store.get_info(info.run_id).finished_at is None

    stored = store.get_info(info.run_id)
    stored.settings["tools_found"] = 3
    store.update_info(stored)
    assert store.get_info(info.run_id).settings == {"tools_found": 3}


def test_finishing_without_a_time_stamps_now(store: RunStore) -> None:
    store.create_run(make_info(), [])

    store.set_status("20261130-070000-aaaa", RunStatus.FINISHED)

    finished_at = store.get_info("20261130-070000-aaaa").finished_at
    assert finished_at is not None
    assert abs(datetime.now(UTC) - finished_at) < timedelta(minutes=1)


def test_latest_unfinished_is_the_newest_running_run_on_that_target(store: RunStore) -> None:
    store.create_run(make_info("run-1"), [])
    store.create_run(make_info("run-2", created_at=T0 + timedelta(hours=1)), [])
    store.create_run(make_info("run-3", created_at=T0 + timedelta(hours=2)), [])
    store.create_run(
        make_info("run-4", created_at=T0 + timedelta(hours=3), target="other.yaml"), []
    )
    store.set_status("run-3", RunStatus.FINISHED)

    assert store.latest_unfinished("evals.yaml") == "run-2"
    assert store.latest_unfinished("nothing.yaml") is None


# -- run ids ---------------------------------------------------------------------------------


def test_resolve_run_id_accepts_a_full_id_a_unique_prefix_or_latest(store: RunStore) -> None:
    store.create_run(make_info("20261130-070000-aaaa"), [])
    store.create_run(make_info("20261130-070000-abcd", created_at=T0 + timedelta(seconds=1)), [])
    store.create_run(make_info("20261201-090000-ffff", created_at=T0 + timedelta(days=1)), [])

    assert store.resolve_run_id("20261130-070000-aaaa") == "20261130-070000-aaaa"
    assert store.resolve_run_id("20261130-070000-ab") == "20261130-070000-abcd"
    assert store.resolve_run_id("20261201") == "20261201-090000-ffff"
    assert store.resolve_run_id("latest") == "20261201-090000-ffff"


def test_an_ambiguous_prefix_lists_the_candidates(store: RunStore) -> None:
    store.create_run(make_info("20261130-070000-aaaa"), [])
    store.create_run(make_info("20261130-070000-abcd"), [])

    with pytest.raises(StoreError) as caught:
        store.resolve_run_id("20261130")

    message = str(caught.value)
    assert "matches 2 runs" in message
    assert "20261130-070000-aaaa" in message and "20261130-070000-abcd" in message
    assert "agenteval runs" in message


@pytest.mark.parametrize("wanted", ["nope", "", "latest"])
def test_an_unknown_run_id_names_the_store_and_the_runs_command(
    store: RunStore, wanted: str
) -> None:
    with pytest.raises(StoreError) as caught:
        store.resolve_run_id(wanted)

    assert str(store.path) in str(caught.value)
    if wanted != "latest":
        assert "agenteval runs lists the stored runs" in str(caught.value)


def test_every_read_and_write_refuses_an_unknown_run(store: RunStore) -> None:
    case = make_cases(1)[0]
    calls: list[Callable[[], object]] = [
        lambda: store.get_info("ghost"),
        lambda: store.get_cases("ghost"),
        lambda: store.iter_results("ghost"),
        lambda: store.count_results("ghost"),
        lambda: store.finished_keys("ghost"),
        lambda: store.add_result("ghost", make_result(case)),
        lambda: store.set_status("ghost", RunStatus.FINISHED),
        lambda: store.update_info(make_info("ghost")),
        lambda: store.replace_scores("ghost", case.id, 0, {}),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="agenteval runs lists the stored runs"):
            call()


# -- results ---------------------------------------------------------------------------------


class Opaque:
    """A tool result JSON knows nothing about."""

    def __repr__(self) -> str:
        return "Opaque(42)"


def test_a_result_round_trips_exactly(store: RunStore) -> None:
    case = EvalCase(
        id="weather",
        input="Weather in Paris?",
        expected_tools=["get_weather"],
        metadata={"difficulty": "easy"},
    )
    call = ToolCall(
        name="get_weather",
        arguments={"city": "Paris"},
        result={"temp_c": 18.5, "sky": "clear"},
        started_at=T0,
        duration_s=0.12,
    )
    trial = Trial(
        case_id="weather",
        trial=1,
        steps=[AgentStep(thought="look it up", tool_calls=[call], output="18.5C and clear")],
        model_calls=[ModelCall(model="m", usage=Usage(input_tokens=120, output_tokens=30))],
        started_at=T0,
        latency_s=1.5,
        working_latency_s=1.2,
        retries={"rate_limited": 1},
        attempts=2,
        metadata={"seed": 7},
    )
    scores = {
        "tool_selection": Score(name="tool_selection", value=1.0, passed=True),
        "judge": Score(
            name="judge",
            value=0.5,
            reason="partly",
            details={"samples": [0.4, 0.6]},
            usage=Usage(input_tokens=900, output_tokens=40),
        ),
        "grounding": Score(name="grounding", value=None, reason="no docs"),
    }
    result = TrialResult(case=case, trial=trial, scores=scores)
    store.create_run(make_info(), [case])

    store.add_result("20261130-070000-aaaa", result)

    (read,) = store.iter_results("20261130-070000-aaaa")
    assert read == result
    assert list(read.scores) == ["tool_selection", "judge", "grounding"]


def test_tool_results_json_cannot_hold_are_stored_anyway(store: RunStore) -> None:
    looped: dict[str, object] = {"name": "loop"}
    looped["self"] = looped
    results = {
        "a set": {3, 1, 2},
        "an object": Opaque(),
        "raw bytes": b"\xff\xfe",
        "a loop": looped,
        "not a number": float("nan"),
        "a lone surrogate": "\ud800",
    }
    case = make_cases(1)[0]
    store.create_run(make_info(), [case])
    for trial, (label, value) in enumerate(results.items()):
        call = ToolCall(name="tool", arguments={"label": label}, result=value)
        store.add_result(
            "20261130-070000-aaaa",
            TrialResult(case=case, trial=Trial(case_id=case.id, trial=trial, tool_calls=[call])),
        )

    read = {
        r.trial.tool_calls[0].arguments["label"]: r.trial.tool_calls[0].result
        for r in store.iter_results("20261130-070000-aaaa")
    }

    assert sorted(read["a set"]) == [1, 2, 3]
    assert read["an object"] == "Opaque(42)"  # its repr
    assert read["raw bytes"] == "\\xff\\xfe"
    assert read["a loop"] == {"name": "loop", "self": "<cut: circular reference>"}
    assert read["not a number"] is None
    assert read["a lone surrogate"] == "?"


def test_results_come_back_in_case_order_then_trial_order_across_chunks(
    store: RunStore,
) -> None:
    cases = make_cases(30)
    store.create_run(make_info(trials=40), cases)
    # Written out of order, more than one read chunk's worth.
    writes = [make_result(case, trial) for trial in reversed(range(40)) for case in cases]
    for start in range(0, len(writes), 200):
        store.add_results("20261130-070000-aaaa", writes[start : start + 200])

    keys = [r.key for r in store.iter_results("20261130-070000-aaaa")]

    assert keys == [(case.id, trial) for case in cases for trial in range(40)]
    assert store.count_results("20261130-070000-aaaa") == 1200


def test_iter_results_reads_lazily(store: RunStore) -> None:
    cases = make_cases(2)
    store.create_run(make_info(), cases)
    store.add_results("20261130-070000-aaaa", [make_result(c, t) for c in cases for t in (0, 1)])

    results = store.iter_results("20261130-070000-aaaa")
    first = next(results)
    # A result stored while reading shows up if it sorts after what was read.
    store.add_result("20261130-070000-aaaa", make_result(cases[1], 2))

    assert first.key == ("case-0", 0)
    assert [r.key for r in results] == [("case-0", 1), ("case-1", 0), ("case-1", 1), ("case-1", 2)]


def test_finished_keys_are_the_stored_pairs(store: RunStore) -> None:
    cases = make_cases(2)
    store.create_run(make_info(), cases)
    failed = make_result(cases[1], 1)
    failed.trial.failure = Failure(cause=FailureCause.TIMEOUT, message="30s")
    store.add_results("20261130-070000-aaaa", [make_result(cases[0], 0), failed])

    assert store.finished_keys("20261130-070000-aaaa") == {("case-0", 0), ("case-1", 1)}


def test_writing_the_same_pair_again_replaces_it(store: RunStore) -> None:
    case = make_cases(1)[0]
    store.create_run(make_info(), [case])
    first = make_result(case, 0, value=0.0)
    first.scores["extra"] = Score(name="extra", value=1.0)
    store.add_result("20261130-070000-aaaa", first)

    retried = make_result(case, 0, value=1.0)
    store.add_result("20261130-070000-aaaa", retried)
    store.add_result("20261130-070000-aaaa", retried)

    assert store.count_results("20261130-070000-aaaa") == 1
    assert list(store.iter_results("20261130-070000-aaaa")) == [retried]


def test_a_result_for_a_case_the_run_does_not_list_is_kept(store: RunStore) -> None:
    cases = make_cases(2)
    store.create_run(make_info(), cases[:1])

    store.add_result("20261130-070000-aaaa", make_result(cases[1]))
    store.add_result("20261130-070000-aaaa", make_result(cases[0]))

    assert store.get_cases("20261130-070000-aaaa") == cases
    assert [r.key for r in store.iter_results("20261130-070000-aaaa")] == [
        ("case-0", 0),
        ("case-1", 0),
    ]


# -- rescoring -------------------------------------------------------------------------------


def test_replace_scores_replaces_the_whole_set(store: RunStore) -> None:
    case = make_cases(1)[0]
    store.create_run(make_info(), [case])
    store.add_result("20261130-070000-aaaa", make_result(case))
    judged = {"judge": Score(name="judge", value=0.75)}

    store.replace_scores("20261130-070000-aaaa", case.id, 0, judged)

    (read,) = store.iter_results("20261130-070000-aaaa")
    assert read.scores == judged
    assert read.trial.output == "4"  # the trial itself is untouched


def test_replace_scores_merge_only_upserts_the_given_names(store: RunStore) -> None:
    case = make_cases(1)[0]
    store.create_run(make_info(), [case])
    store.add_result("20261130-070000-aaaa", make_result(case, value=0.0))
    new = {
        "judge": Score(name="judge", value=0.75),
        "exact_match": Score(name="exact_match", value=1.0, reason="rescored"),
    }

    store.replace_scores("20261130-070000-aaaa", case.id, 0, new, merge=True)

    (read,) = store.iter_results("20261130-070000-aaaa")
    assert read.scores == new
    assert list(read.scores) == ["exact_match", "judge"]  # existing names keep their place


def test_replace_scores_many_is_all_or_nothing(store: RunStore) -> None:
    cases = make_cases(2)
    store.create_run(make_info(), cases)
    store.add_results("20261130-070000-aaaa", [make_result(c) for c in cases])
    judged = {"judge": Score(name="judge", value=0.5)}

    with pytest.raises(StoreError, match="no stored trial 9"):
        store.replace_scores_many(
            "20261130-070000-aaaa", [("case-0", 0, judged), ("case-1", 9, judged)]
        )
    assert all("judge" not in r.scores for r in store.iter_results("20261130-070000-aaaa"))

    store.replace_scores_many(
        "20261130-070000-aaaa", [("case-0", 0, judged), ("case-1", 0, judged)]
    )
    assert all(r.scores == judged for r in store.iter_results("20261130-070000-aaaa"))


# -- files that are not (our) stores ---------------------------------------------------------


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    garbage = b"these are my notes, not a database\n" * 200
    path.write_bytes(garbage)

    with pytest.raises(StoreError) as caught:
        RunStore(path)

    message = str(caught.value)
    assert str(path) in message
    assert "not an agenteval run store" in message
    assert "--store PATH" in message
    assert path.read_bytes() == garbage
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_another_programs_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    before = path.read_bytes()

    with pytest.raises(StoreError, match="not an agenteval run store"):
        RunStore(path)

    assert path.read_bytes() == before


def test_a_store_from_a_newer_agenteval_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        store.create_run(make_info(), make_cases())
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")

    with pytest.raises(StoreError) as caught:
        RunStore(path)

    assert str(path) in str(caught.value)
    assert "newer agenteval" in str(caught.value)
    assert "upgrade agenteval" in str(caught.value)


def test_a_corrupt_store_raises_store_error_not_sqlite_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        store.create_run(make_info(), make_cases())
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)  # the schema page, past the header
    path.write_bytes(bytes(data))

    with pytest.raises(StoreError, match="corrupt") as caught, RunStore(path) as store:
        store.list_runs()

    assert str(path) in str(caught.value)


def test_a_folder_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="folder"):
        RunStore(tmp_path)


def test_create_false_does_not_make_a_store(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"

    with pytest.raises(StoreError, match="no run store here"):
        RunStore(path, create=False)

    assert not path.exists()


def test_reopening_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    cases = make_cases(2)
    with RunStore(path) as store:
        store.create_run(make_info(), cases)
        store.add_results("20261130-070000-aaaa", [make_result(c) for c in cases])

    with RunStore(path) as store, RunStore(path) as again:
        assert store.count_results("20261130-070000-aaaa") == 2
        assert again.get_cases("20261130-070000-aaaa") == cases


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    store.close()
    store.close()  # closing twice is fine

    with pytest.raises(StoreError, match="closed"):
        store.list_runs()


# -- durability and other processes ----------------------------------------------------------

_SETUP = """
import os, signal, sys
from agenteval.case import EvalCase
from agenteval.run import RunInfo, TrialResult
from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.trace import Trial

path = sys.argv[1]
cases = [EvalCase(id=f"case-{i}", input="q") for i in range(10)]

def result(i):
    case = cases[i % 10]
    return TrialResult(
        case=case,
        trial=Trial(case_id=case.id, trial=i // 10, output="a"),
        scores={"s": Score(name="s", value=1.0)},
    )
"""


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SETUP) + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_committed_results_survive_the_writer_being_killed(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    writer = """
    store = RunStore(path)
    store.create_run(RunInfo(run_id="killed", trials=10), cases)
    for i in range(37):
        store.add_result("killed", result(i))
    os.kill(os.getpid(), signal.SIGKILL)
    """

    done = run_python(writer, str(path))

    assert done.returncode == -9, done.stderr
    with RunStore(path) as store:
        assert store.count_results("killed") == 37
        assert all(r.scores["s"].value == 1.0 for r in store.iter_results("killed"))
        assert store.list_runs()[0].status is RunStatus.RUNNING


def test_another_process_reads_while_a_writer_holds_the_store(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    reader = """
    with RunStore(path) as store:
        print(store.count_results("live"), len(list(store.iter_results("live"))))
        print(store.list_runs()[0].trials_done)
    """
    with RunStore(path) as writer:
        writer.create_run(make_info("live", trials=10), make_cases(10))
        writer.add_results("live", [make_result(c, 0) for c in make_cases(10)])

        first = run_python(reader, str(path))
        writer.add_results("live", [make_result(c, 1) for c in make_cases(10)])
        second = run_python(reader, str(path))

    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["10", "10", "10"]
    assert second.stdout.split() == ["20", "20", "20"]


def test_a_writer_thread_and_a_reader_thread_share_one_store(store: RunStore) -> None:
    cases = make_cases(10)
    store.create_run(make_info(trials=50), cases)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for trial in range(50):
                store.add_results("20261130-070000-aaaa", [make_result(c, trial) for c in cases])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    seen = 0
    while writer.is_alive():
        seen = max(seen, sum(1 for _ in store.iter_results("20261130-070000-aaaa")))
    writer.join()

    assert errors == []
    assert 0 <= seen <= 500
    assert store.count_results("20261130-070000-aaaa") == 500


@pytest.mark.parametrize(
    "secret_text",
    [
        "the key is sk-proj-Fake0123456789xyzXYZFake0123456789xyzXYZFake01",
        "Authorization: Bearer Fake0123456789xyzXYZFake0123",
        'password="hunter2hunter2"',
        "postgres://admin:s3cretPassw0rd@db.internal/app",
        "AKIAFAKE0123456789FA",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEFake0123456789abcdefFAKE\n-----END RSA PRIVATE KEY-----",
        "env value my-literal-secret-value-42",
    ],
)
def test_a_secret_in_one_record_of_a_batch_is_redacted_as_if_stored_alone(
    tmp_path: Path, secret_text: str
) -> None:
    # Results are checked for secrets a batch at a time: a secret in any one record must
    # still be found, at the batch's start, middle or end, in the trial or in a score.
    redactor = Redactor(["my-literal-secret-value-42"])
    cases = make_cases(5)
    for where in range(5):
        results = [make_result(case) for case in cases]
        if where % 2:
            results[where].scores["exact_match"].reason = secret_text
        else:
            results[where].trial.output = secret_text
        with RunStore(tmp_path / f"runs-{where}.db", redactor=redactor) as store:
            store.create_run(make_info(), cases)
            store.add_results("20261130-070000-aaaa", results)
            stored = {r.case.id: r for r in store.iter_results("20261130-070000-aaaa")}
        for i, case in enumerate(cases):
            trial, score = stored[case.id].trial, stored[case.id].scores["exact_match"]
            alone_trial = redactor.redact_model(results[i].trial)
            alone_score = redactor.redact_model(results[i].scores["exact_match"])
            assert trial.output == alone_trial.output
            assert score.reason == alone_score.reason
        changed = stored[cases[where].id]
        text = changed.trial.output if where % 2 == 0 else changed.scores["exact_match"].reason
        assert text != secret_text and "[REDACTED]" in (text or "")
