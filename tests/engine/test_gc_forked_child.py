"""Found by issue 21's review of the run path, before its fix: the thresholds a run raises are the interpreter's, and a
process the agent forks while the run goes (a `multiprocessing` pool with the `fork` start
method, Linux's default on 3.11) inherits them together with the count of runs going on, so
nothing ever puts them back in it: a worker pool the agent keeps after the run collects its
cyclic garbage after 50,000 allocations instead of 700 for the rest of its life."""

from __future__ import annotations

import gc
import multiprocessing
from multiprocessing.pool import Pool
from pathlib import Path

import agenteval
from agenteval import EvalCase

_POOLS: list[Pool] = []


def _thresholds(_: object) -> tuple[int, int, int]:
    return gc.get_threshold()


def _agent(question: str) -> str:
    # An agent that starts a worker pool on first use and keeps it (a common pattern).
    if not _POOLS:
        _POOLS.append(multiprocessing.get_context("fork").Pool(1))
    return question


def test_v21_runpath_a_process_forked_during_a_run_gets_the_interpreters_thresholds_back(
    tmp_path: Path,
) -> None:
    own = gc.get_threshold()
    try:
        agenteval.evaluate(_agent, [EvalCase(id="a", input="x")], store=tmp_path / "r.db")
        assert gc.get_threshold() == own  # the run's process: put back
        in_child = _POOLS[0].apply(_thresholds, (None,))
        assert tuple(in_child) == own, f"the agent's forked worker kept {in_child} after the run"
    finally:
        for pool in _POOLS:
            pool.terminate()
            pool.join()
        _POOLS.clear()
