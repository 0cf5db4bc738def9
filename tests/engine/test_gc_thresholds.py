"""A run raises the cyclic collector's thresholds for as long as it lasts (`gc_thresholds`), and
puts the process's own back when the last run ends, however it ends: returned, cancelled,
Ctrl-C, runs nested in one loop or in several threads; a process that set its own thresholds
(or disabled the collector) keeps them."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.engine.gc_thresholds import (
    MOST_YOUNG,
    RUN_THRESHOLDS,
    raised_gc_thresholds,
    run_thresholds,
    trial_ended,
)

CASES = [EvalCase(id=f"c{i}", input=f"q{i}", expected_output="A") for i in range(4)]
DEFAULT = (700, 10, 10)


@pytest.fixture(autouse=True)
def _interpreter_defaults() -> Iterator[None]:
    """Each test starts from CPython's defaults, and leaves the process as it found it."""
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(*DEFAULT)
    gc.enable()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not enabled:
            gc.disable()


def _seen_by(agent_saw: list[tuple[int, int, int]]) -> object:
    async def agent(_question: str) -> str:
        agent_saw.append(gc.get_threshold())
        await asyncio.sleep(0)
        return "A"

    return agent


def test_a_run_raises_them_while_it_runs_and_puts_them_back(tmp_path: Path) -> None:
    saw: list[tuple[int, int, int]] = []
    run = agenteval.evaluate(_seen_by(saw), CASES, ["exact_match"], store=tmp_path / "s.db")
    assert run.summary.trials == len(CASES)
    assert saw and set(saw) <= run_thresholds()
    assert gc.get_threshold() == DEFAULT


def test_a_failing_run_puts_them_back(tmp_path: Path) -> None:
    def ctrl_c(_result: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        agenteval.evaluate(lambda q: "A", CASES, on_result=ctrl_c, store=tmp_path / "s.db")
    assert gc.get_threshold() == DEFAULT


def test_a_cancelled_run_puts_them_back(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def hangs(_question: str) -> str:
        started.set()
        await asyncio.sleep(3600)
        return "A"

    async def main() -> None:
        run = asyncio.ensure_future(agenteval.evaluate_async(hangs, CASES, store=tmp_path / "s.db"))
        await started.wait()
        assert gc.get_threshold() in run_thresholds()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    assert gc.get_threshold() == DEFAULT


def test_runs_nested_in_one_loop_keep_them_until_the_last_ends(tmp_path: Path) -> None:
    saw: list[tuple[int, int, int]] = []
    after_inner: list[tuple[int, int, int]] = []

    async def outer_agent(question: str) -> str:
        # A run inside a trial (an agent evaluating a sub-agent): it ends first.
        await agenteval.evaluate_async(
            _seen_by(saw), CASES[:1], store=tmp_path / f"inner-{question}.db"
        )
        after_inner.append(gc.get_threshold())
        return "A"

    async def main() -> None:
        await asyncio.gather(
            agenteval.evaluate_async(outer_agent, CASES[:2], store=tmp_path / "a.db"),
            agenteval.evaluate_async(_seen_by(saw), CASES, store=tmp_path / "b.db"),
        )

    asyncio.run(main())
    assert saw and set(saw) <= run_thresholds()
    assert len(after_inner) == 2 and set(after_inner) <= run_thresholds()
    assert gc.get_threshold() == DEFAULT


def test_runs_in_threads_keep_them_until_the_last_ends(tmp_path: Path) -> None:
    saw: list[tuple[int, int, int]] = []
    first_in, release = threading.Event(), threading.Event()

    def waits(_question: str) -> str:
        first_in.set()
        release.wait(60)
        return "A"

    def first() -> None:
        agenteval.evaluate(waits, CASES[:1], store=tmp_path / "a.db")

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(60)
    agenteval.evaluate(_seen_by(saw), CASES, store=tmp_path / "b.db")
    # The second run ended while the first still runs: the first keeps its thresholds.
    assert gc.get_threshold() in run_thresholds()
    release.set()
    thread.join(60)
    assert len(saw) == len(CASES) and set(saw) <= run_thresholds()
    assert gc.get_threshold() == DEFAULT


@pytest.mark.parametrize("own", [(5000, 10, 10), (700, 10, 10, "disabled")])
def test_a_process_that_chose_its_own_keeps_them(tmp_path: Path, own: tuple[object, ...]) -> None:
    thresholds = own[:3]
    gc.set_threshold(*thresholds)  # type: ignore[arg-type]
    if "disabled" in own:
        gc.disable()
    saw: list[tuple[int, int, int]] = []
    agenteval.evaluate(_seen_by(saw), CASES, store=tmp_path / "s.db")
    assert set(saw) == {thresholds}
    assert gc.get_threshold() == thresholds
    assert gc.isenabled() is ("disabled" not in own)


def test_thresholds_the_agent_sets_during_the_run_stay(tmp_path: Path) -> None:
    def sets_its_own(_question: str) -> str:
        gc.set_threshold(900, 10, 10)
        return "A"

    agenteval.evaluate(sets_its_own, CASES[:1], store=tmp_path / "s.db")
    assert gc.get_threshold() == (900, 10, 10)


def test_the_block_puts_them_back_on_ctrl_c() -> None:
    with pytest.raises(KeyboardInterrupt), raised_gc_thresholds():
        assert gc.get_threshold() == RUN_THRESHOLDS
        with raised_gc_thresholds():
            pass
        assert gc.get_threshold() == RUN_THRESHOLDS
        raise KeyboardInterrupt
    assert gc.get_threshold() == DEFAULT


def _cycles(count: int) -> None:
    """`count` containers of cyclic garbage, in pairs (young: made just now)."""
    for _ in range(count // 2):
        a: list[object] = []
        b: list[object] = [a]
        a.append(b)


def _young_pass(trials_ended: int = 1) -> None:
    for _ in range(trials_ended):
        trial_ended()
    gc.collect(0)


STEPS = sorted(young for young, _, _ in run_thresholds())


def test_young_passes_that_free_nothing_raise_the_young_threshold_and_garbage_lowers_it() -> None:
    gc.collect()
    with raised_gc_thresholds():
        assert gc.get_threshold() == RUN_THRESHOLDS
        _young_pass()
        _young_pass()
        assert gc.get_threshold() == RUN_THRESHOLDS  # two clean passes are not enough
        _young_pass()
        assert gc.get_threshold() == (STEPS[1], *RUN_THRESHOLDS[1:])
        _young_pass()
        raised = (MOST_YOUNG, *RUN_THRESHOLDS[1:])
        assert len(STEPS) == 3 and (STEPS[0], STEPS[-1]) == (RUN_THRESHOLDS[0], MOST_YOUNG)
        assert gc.get_threshold() == raised
        _young_pass()
        assert gc.get_threshold() == raised
        _cycles(MOST_YOUNG // 20)  # a twentieth of it: still raised
        _young_pass()
        assert gc.get_threshold() == raised
        _cycles(MOST_YOUNG // 10)  # a tenth: a run making garbage goes back
        _young_pass()
        assert gc.get_threshold() == RUN_THRESHOLDS
        for _ in range(4):  # at the floor, a tenth of it keeps it there
            _cycles(RUN_THRESHOLDS[0] // 10)
            _young_pass()
        assert gc.get_threshold() == RUN_THRESHOLDS
    assert gc.get_threshold() == DEFAULT


def test_passes_with_no_trial_ended_since_the_last_do_not_count() -> None:
    """A run's first passes, with its first trials all in flight, cannot tell whether trials
    leave cyclic garbage when they end."""
    gc.collect()
    with raised_gc_thresholds():
        for _ in range(5):
            gc.collect(0)
        assert gc.get_threshold() == RUN_THRESHOLDS
        _young_pass(trials_ended=3)  # one pass, however many trials ended before it
        gc.collect(0)
        _young_pass()
        assert gc.get_threshold() == RUN_THRESHOLDS
        _young_pass()
        assert gc.get_threshold()[0] == STEPS[1]


def test_raised_ones_are_put_back_and_the_adapting_stops_with_the_last_run() -> None:
    callbacks = list(gc.callbacks)
    with raised_gc_thresholds():
        assert len(gc.callbacks) == len(callbacks) + 1
        for _ in range(4):
            _young_pass()
        assert gc.get_threshold()[0] == MOST_YOUNG
    assert gc.get_threshold() == DEFAULT
    assert gc.callbacks == callbacks
    for _ in range(4):
        _young_pass()
    assert gc.get_threshold() == DEFAULT


def test_thresholds_the_process_sets_while_raised_stay_and_are_not_adapted() -> None:
    with raised_gc_thresholds():
        for _ in range(4):
            _young_pass()
        gc.set_threshold(900, 10, 10)
        _cycles(RUN_THRESHOLDS[0])
        _young_pass()
        assert gc.get_threshold() == (900, 10, 10)
    assert gc.get_threshold() == (900, 10, 10)
