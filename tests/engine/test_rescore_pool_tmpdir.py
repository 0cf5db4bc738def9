"""Found by issue 21's review of the rescore pool, before its fix: the rescore pool's forkserver listens on a UNIX socket
made under TMPDIR; with a TMPDIR of ~78 characters or more the socket's path is too long, the
workers never start, and the rescore fails with `BrokenProcessPool` and an empty message,
where main (in-process) rescored the run. The pool is used by default from 20,000 stored
trials (forced here, as tests/engine/test_rescore_pool.py forces it). A real process: TMPDIR
is read once per process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.engine.rescore_runs import RUN_ID, build

SCRIPT = """
import sys, agenteval, agenteval.engine.rescoring as rescoring
rescoring.POOL_FROM, rescoring.RANGE_TRIALS = 0, 5
run = agenteval.rescore(sys.argv[1], builtins=True, store=sys.argv[2])
print(run.summary.trials)
"""


def test_v21_rescore_a_long_tmpdir_rescores_as_on_main(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    build(db, 1, cases=5, trials=2)
    long_tmp = Path("/tmp") / ("t" * 90)
    long_tmp.mkdir(exist_ok=True)
    script = tmp_path / "rescore.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), RUN_ID, str(db)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(long_tmp)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["10"]
