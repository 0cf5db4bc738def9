"""What the viewer's reads cost on a large run: the numbers behind `agenteval view`'s pages.

    python bench/view_reader.py                  # a 100,000-trial run in a temporary folder
    python bench/view_reader.py --trials 20000 --keep /tmp/runs.db

The run is written straight into a real store (`tests/view/bulk.py`: the run and its cases
through `RunStore`, trials and scores as pre-encoded JSON, three scores a trial). Then, each
the median of `--repeat` tries unless said:

- `stamp`: the first (counts and a CRC of every score), with nothing committed since (one
  PRAGMA), and after another run in the file was written (counts and CRC again);
- `keys_in_order` and `results` at the last page (offset N-50, 50 keys); `search`;
- `build_index`: the one pass (summary and rows), its time, then again under `tracemalloc`
  for the memory it holds and its peak (tracemalloc slows the pass several times);
- `select`: the last page sorted by latency, first (sorting) and again (kept order).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.view.bulk import write_bulk_run

from agenteval.view import StoreReader, build_index


def _median(repeat: int, call: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="write the store here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="agenteval-view-bench-"))
    path = args.keep or folder / "runs.db"
    try:
        started = time.perf_counter()
        run_id = write_bulk_run(path, trials=args.trials)
        print(f"write_bulk_run ({args.trials:,} trials)  {_ms(time.perf_counter() - started)}")
        other = write_bulk_run(path, trials=10, cases=5, target="other.yaml")
        reader = StoreReader(path, refresh_s=0)
        started = time.perf_counter()
        reader.stamp(run_id)
        print(f"stamp, first                     {_ms(time.perf_counter() - started)}")
        print(
            f"stamp, nothing changed           {_ms(_median(args.repeat, lambda: reader.stamp(run_id)))}"
        )

        def changed() -> None:
            write_bulk_run(path, trials=2, cases=1, target="more.yaml")
            started = time.perf_counter()
            reader.stamp(run_id)
            times.append(time.perf_counter() - started)

        times: list[float] = []
        for _ in range(args.repeat):
            changed()
        print(f"stamp, another run written       {_ms(statistics.median(times))}")
        last = max(args.trials - 50, 0)
        keys = reader.keys_in_order(run_id, last, 50)
        print(
            f"keys_in_order at {last:,}        {_ms(_median(args.repeat, lambda: reader.keys_in_order(run_id, last, 50)))}"
        )
        print(
            f"results of those 50 keys         {_ms(_median(args.repeat, lambda: reader.results(run_id, keys)))}"
        )
        print(
            f"search 'CASE-000123'             {_ms(_median(args.repeat, lambda: reader.search(run_id, 'CASE-000123')))}"
        )
        print(
            f"runs() ({len(reader.runs())} runs)                  {_ms(_median(args.repeat, reader.runs))}"
        )
        started = time.perf_counter()
        index = build_index(reader, run_id)
        print(f"build_index                      {_ms(time.perf_counter() - started)}")
        started = time.perf_counter()
        index.select(sort="latency", descending=True, offset=last)
        print(f"select last page by latency      {_ms(time.perf_counter() - started)} (sorting)")
        print(
            f"  again                          {_ms(_median(args.repeat, lambda: index.select(sort='latency', descending=True, offset=last)))}"
        )
        print(
            f"select status=fail tag=billing   {_ms(_median(args.repeat, lambda: index.select(status='fail', tag='billing')))}"
        )
        del index
        tracemalloc.start()
        index = build_index(reader, run_id)
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"build_index memory: {held / 1e6:.1f} MB held by the index, {peak / 1e6:.1f} MB peak"
        )
        reader.close()
        assert other
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
