"""Found by issue 21's review of the rescore pool, before its fix: a rescore run from a daemonic process (a
`multiprocessing.Pool` worker, as job runners use) cannot start the rescore pool's workers
("daemonic processes are not allowed to have children") and fails, where main rescored it in
process. The pool is used by default from 20,000 stored trials (forced here, as
tests/engine/test_rescore_pool.py forces it). Real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.engine.rescore_runs import RUN_ID, build

SCRIPT = """
import multiprocessing, sys

def job(run_id, db):
    import agenteval, agenteval.engine.rescoring as rescoring
    rescoring.POOL_FROM, rescoring.RANGE_TRIALS = 0, 5
    try:
        return str(agenteval.rescore(run_id, builtins=True, store=db).summary.trials)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"

if __name__ == "__main__":
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print(pool.apply(job, (sys.argv[1], sys.argv[2])))
"""


def test_v21_rescore_a_rescore_in_a_daemonic_process_works_as_on_main(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    build(db, 1, cases=5, trials=2)
    script = tmp_path / "in_a_pool.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), RUN_ID, str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "10", done.stdout + done.stderr[-2000:]
