"""What opening a run store costs, and what checking it for damage costs, on a large store.

    python bench/store_open.py                   # a 100,000-trial store in a temporary folder
    python bench/store_open.py --trials 20000 --keep /tmp/runs.db

The store is made the way users make it: `agenteval.evaluate` runs a trivial agent over
20,000 cases × 5 trials (the built-in scorers score every trial), so its pages hold what a
real run stores. Then, each median of `--repeat` tries, in this process:

- `open (read)`: `RunStore(path, create=False)`, what `runs`, `show`, `report` pay;
- `open + first write, new process`: opening and setting a run's status, as the first write
  of `run`, `rescore` and `--resume` does in a new process: the file is checked for damage
  first (`PRAGMA quick_check`);
- `open + first write, file checked before`: the same when this process already found the
  file undamaged and nothing else wrote it since (the pytest plugin opens the store per case);
- `quick_check` and `integrity_check` alone, on a fresh connection;
- `missing trials`: `RunStore.missing_trials` on the 100,000-trial run (one COUNT query).

The page cache is warm (the file was just written); a cold read from disk costs more, as it
does for reading the runs themselves.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import agenteval
import agenteval.sqlite.damage
from agenteval import RunStore
from agenteval.case import EvalCase
from agenteval.run import RunStatus


def answer(question: str) -> str:
    return question.upper()


def build(path: Path, trials: int) -> str:
    per_case = 5
    cases = [
        EvalCase(
            id=f"case-{i:06d}",
            input=f"What is the answer to question {i}? Say it in one word.",
            expected_output=f"WHAT IS THE ANSWER TO QUESTION {i}? SAY IT IN ONE WORD.",
        )
        for i in range(trials // per_case)
    ]
    run = agenteval.evaluate(answer, cases, trials=per_case, concurrency=64, store=path)
    return run.run_id


def median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the store here and keep it")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="agenteval-store-open-"))
    path = args.keep or folder / "runs.db"
    try:
        if path.exists():
            with RunStore(path, create=False) as store:
                run_id = store.list_runs(limit=1)[0].run_id
        else:
            start = time.perf_counter()
            run_id = build(path, args.trials)
            print(f"built {args.trials} trials in {time.perf_counter() - start:.1f} s")
        size = path.stat().st_size
        print(
            f"store: {size / 1e6:.1f} MB, {sqlite3.sqlite_version=}, Python {sys.version.split()[0]}"
        )

        def open_read() -> None:
            with RunStore(path, create=False) as store:
                store.list_runs(limit=1)

        def open_write() -> None:
            with RunStore(path, create=False) as store:
                store.set_status(run_id, RunStatus.FINISHED)

        def open_write_first() -> None:
            # As a new process would: nothing known about the file, so it is checked.
            agenteval.sqlite.damage._UNDAMAGED.clear()
            open_write()

        def pragma(name: str) -> Callable[[], object]:
            def check() -> object:
                with sqlite3.connect(path) as conn:
                    return conn.execute(f"PRAGMA {name}").fetchall()

            return check

        def missing() -> None:
            with RunStore(path, create=False) as store:
                store.missing_trials(run_id)

        rows = [
            ("open (read)", median_ms(open_read, args.repeat)),
            (
                "open + first write, new process (quick_check)",
                median_ms(open_write_first, args.repeat),
            ),
            ("open + first write, file checked before", median_ms(open_write, args.repeat)),
            ("quick_check alone", median_ms(pragma("quick_check"), args.repeat)),
            ("integrity_check alone", median_ms(pragma("integrity_check"), args.repeat)),
            ("open + missing trials", median_ms(missing, args.repeat)),
        ]
        print(f"| measure ({args.trials:,} trials, {size / 1e6:.0f} MB) | median ms |")
        print("|---|---|")
        for label, ms in rows:
            print(f"| {label} | {ms:.1f} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
