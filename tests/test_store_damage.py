"""A store with garbage in its middle is refused before anything is written to it, and every
command reading it ends in one clear message, never a traceback.

The README promises that a corrupt store is refused and left untouched. A file whose header is
intact but whose pages are damaged used to open normally, and `agenteval run` added a run to
it. Now the first write of a `RunStore` checks the file (`PRAGMA quick_check`) unless this
process has checked this very file (same size, modification and change times) before.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli

import agenteval
from agenteval import RunStore
from agenteval.case import EvalCase
from agenteval.cli import main
from agenteval.errors import StoreError
from agenteval.run import RunInfo, RunStatus

CASES = [
    EvalCase(id=f"c{i:03d}", input=f"question {i} " * 8, expected_output=f"ANSWER {i}")
    for i in range(150)
]


def upper(question: str) -> str:
    return question.upper()


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of three finished runs, closed (its WAL folded in)."""
    path = tmp_path_factory.mktemp("healthy") / "runs.db"
    for _ in range(3):
        agenteval.evaluate(upper, CASES, trials=2, store=path)
    assert not Path(f"{path}-wal").exists()
    return path


def _damaged(healthy: Path, folder: Path, seed: int = 0, at: float | None = None) -> Path:
    """A copy of the store with 8 KiB of garbage at `at` of its length (the header intact); by
    default over two of the `trials` table's leaf pages, in the middle of them. Not at a fixed
    share of the file: which table's pages lie there depends on how the writer happened to
    batch the trials, and the tests that list the runs need the `runs` table intact."""
    path = folder / f"damaged-{seed}.db"
    shutil.copy(healthy, path)
    garbage = random.Random(seed).randbytes(8192)
    if at is not None:
        spots = [(max(int(path.stat().st_size * at), 4096), garbage)]
    else:
        with closing(sqlite3.connect(path)) as db:
            size = db.execute("PRAGMA page_size").fetchone()[0]
            pages = [
                page
                for (page,) in db.execute(
                    "SELECT pageno FROM dbstat WHERE name = 'trials' AND pagetype = 'leaf' "
                    "ORDER BY pageno"
                )
            ]
        middle = len(pages) // 2
        spots = [((page - 1) * size, garbage[:size]) for page in pages[middle : middle + 2]]
    with path.open("r+b") as fh:
        for offset, data in spots:
            fh.seek(offset)
            fh.write(data)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_damaged_store_is_refused_before_a_run_is_added(healthy: Path, tmp_path: Path) -> None:
    path = _damaged(healthy, tmp_path)
    before = _digest(path)
    with pytest.raises(StoreError) as refused:
        agenteval.evaluate(upper, CASES[:2], store=path)
    message = refused.value.render()
    assert "the run store is damaged" in message and "nothing was written" in message
    assert str(path) in message
    assert "agenteval runs" in message and ".recover" in message
    assert _digest(path) == before, "the damaged file was changed"
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


def test_every_write_path_is_refused_and_the_file_left_as_it_was(
    healthy: Path, tmp_path: Path
) -> None:
    path = _damaged(healthy, tmp_path)
    before = _digest(path)
    with RunStore(path, create=False) as runs:
        run_id = runs.list_runs()[0].run_id
    writes = {
        "create_run": lambda s: s.create_run(RunInfo(), CASES[:1]),
        "set_status": lambda s: s.set_status(run_id, RunStatus.RUNNING),
        "change_info": lambda s: s.change_info(run_id, lambda info: info),
    }
    for name, write in writes.items():
        with RunStore(path, create=False) as runs, pytest.raises(StoreError, match="damaged"):
            write(runs)
        assert _digest(path) == before, name


def test_a_store_that_refused_a_write_refuses_the_next_one_too(
    healthy: Path, tmp_path: Path
) -> None:
    """The same `RunStore` asked again after a refusal (a long-lived process: the pytest
    plugin, a notebook catching the error and retrying) checks again: the check was marked
    done before it ran, so the second write went through to the damaged file."""
    path = _damaged(healthy, tmp_path)
    before = _digest(path)
    with RunStore(path, create=False) as runs:
        run_id = runs.list_runs()[0].run_id
        for _ in range(2):
            with pytest.raises(StoreError, match="damaged"):
                runs.set_status(run_id, RunStatus.RUNNING)
    assert _digest(path) == before


def test_the_cli_refuses_a_damaged_store_with_one_message(healthy: Path, tmp_path: Path) -> None:
    path = _damaged(healthy, tmp_path)
    (tmp_path / "agent.py").write_text("def answer(q):\n    return q\n")
    (tmp_path / "cases.json").write_text(json.dumps([{"input": "hi"}]))
    before = _digest(path)
    done = agenteval_cli(
        tmp_path, "run", "cases.json", "--agent", "agent.py:answer", "--store", str(path)
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "the run store is damaged" in done.stderr
    assert _digest(path) == before
    listed = agenteval_cli(tmp_path, "runs", "--store", str(path))
    assert listed.returncode == 0 and listed.stdout.count("finished") == 3, listed.stderr


def test_a_healthy_store_is_checked_once_per_process_not_at_every_open(
    healthy: Path, tmp_path: Path
) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(healthy, path)
    statements: list[str] = []

    def write_once() -> None:
        with RunStore(path) as runs:
            # Every statement the store's connection runs, as SQLite reports it.
            runs._conn.set_trace_callback(statements.append)  # type: ignore[union-attr]
            runs.set_status(runs.list_runs()[0].run_id, RunStatus.FINISHED)

    write_once()
    assert sum("quick_check" in s for s in statements) == 1
    for _ in range(3):  # the file as this process left it: no second check
        write_once()
    assert sum("quick_check" in s for s in statements) == 1
    assert sum("UPDATE runs" in s for s in statements) == 4
    with path.open("r+b") as fh:  # anyone else's write is checked again
        fh.seek(path.stat().st_size // 2)
        fh.write(random.Random(1).randbytes(8192))
    with RunStore(path) as runs, pytest.raises(StoreError, match="damaged"):
        runs.set_status(runs.list_runs()[0].run_id, RunStatus.FINISHED)


@pytest.mark.parametrize("seed", range(12))
def test_reading_commands_on_a_damaged_store_end_in_one_message(
    healthy: Path, tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Garbage anywhere past the header: `runs`, `show`, `report`, `compare` and `gate` either
    read what is intact or end in one clear error (exit 2), never another exception."""
    path = _damaged(healthy, tmp_path, seed, at=random.Random(seed).uniform(0.05, 0.95))
    with RunStore(healthy, create=False) as runs:
        ids = [row.run_id for row in runs.list_runs()]
    commands = [
        ["runs"],
        *(["show", run_id] for run_id in ids),
        ["report", ids[0], "--html", str(tmp_path / "r.html")],
        ["compare", ids[1], ids[0]],
        ["gate", ids[1], ids[0]],
    ]
    before = _digest(path)
    for command in commands:
        try:
            main([*command, "--store", str(path)])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        _, err = capsys.readouterr()
        assert code in (0, 1, 2), (command, code)
        if code == 2:
            assert err.startswith("error: "), (command, err)
    assert _digest(path) == before
