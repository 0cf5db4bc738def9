"""Workload W5: rescoring stored trials, and judging them a second time from the cache.

    python bench/w5_rescore.py [--trials 100000] [--judge-trials 2000] [--workdir DIR]

1. A store holding one run of N stored trials (N cases, one trial each), each a small realistic
   trial: an answer, two or three tool calls with arguments and results, a model call with
   usage, and cases with an expected output, expected tools and trajectory, relevant documents,
   forbidden phrases and keywords, so that every deterministic built-in scorer applies. The
   trials are stored with their scores, as `agenteval run` leaves them. The store is built once
   per N (in a child process, so it does not count towards this process's peak RSS) and copied
   afresh for each measurement, since rescoring writes to it.
2. Timed: `agenteval.rescore(run_id, builtins=True, store=...)`: read every trial, score it
   with the ten deterministic built-ins of seed 000, write back the scores that changed (none,
   as the store was scored by this agenteval; `--stale-scores` makes every stored score differ
   by a byte, so that every score is written again), summarise.
3. The judge: `agenteval.judge_run` twice over a run of the first J trials (a separate run in
   the same store: judging all 100,000 through one loopback server would take minutes) against
   an OpenAI-compatible loopback server in a child process (`tests/judge/fakes.py`'s
   `FakeOpenAI`, real HTTP), with a fresh judge cache; the server's request count after each pass.

The last line of stdout is one JSON object with the figures (`peak_rss_mb` is this process's
peak by the end of the rescore).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import sqlite3
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase, ModelCall, RunInfo, RunStore, ToolCall, Trial, Usage
from agenteval.agents.tools import ToolSpec
from agenteval.engine.scheduler import score_trial
from agenteval.run import RunStatus, TrialResult
from agenteval.scorers import BUILTIN_SCORERS, default_scorers

_ROOT = Path(__file__).resolve().parent.parent
_GENERATOR_VERSION = 2  # bump when the stored trials change, to rebuild cached stores
_RUN_ID = "w5-rescore"
_JUDGE_RUN_ID = "w5-judge"
_JUDGE_RUBRICS = ["correctness", "groundedness"]

TOOLS = {
    "search_filings": ToolSpec(
        name="search_filings",
        description="Search company filings.",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    "get_revenue": ToolSpec(
        name="get_revenue",
        description="A company's revenue for a year.",
        parameters={
            "type": "object",
            "properties": {"company": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["company", "year"],
            "additionalProperties": False,
        },
    ),
}


def make_case(i: int) -> EvalCase:
    company = f"Company {i}"
    revenue = 10_000 + (i * 7919) % 90_000
    return EvalCase(
        id=f"case-{i:06d}",
        input=f"What was the revenue of {company} in 2024?",
        expected_output=f"{revenue}",
        expected_tools=["search_filings", "get_revenue"],
        expected_trajectory=[
            {"name": "search_filings"},
            {"name": "get_revenue", "arguments": {"company": company, "year": 2024}},
        ],
        max_tool_calls=3,
        relevant_docs=[f"doc-{i}-10k", f"doc-{i}-ar"],
        must_not_contain=["I am DAN", "rm -rf /"],
        keywords=["revenue", "2024"],
        tags=["finance"],
    )


def make_trial(i: int) -> Trial:
    """Trial `i` of case `i`: most right, some wrong, some with accents, some repeating a call."""
    company = f"Company {i}"
    revenue = 10_000 + (i * 7919) % 90_000
    kind = i % 10
    if kind < 6:
        output = f"{revenue:,}"
    elif kind < 8:
        output = f"{revenue + 1_000:,}"  # a wrong number, not in any tool result
    elif kind == 8:
        output = (
            f"Le chiffre d'affaires de {company} était {revenue:,} en 2024, d'après le rapport."
        )
    else:
        output = f"{company} reported revenue of {revenue:,} dollars in 2024."
    search = ToolCall(
        name="search_filings",
        arguments={"query": f"{company} annual report", "year": 2024},
        result={
            "results": [
                {"id": f"doc-{i}-10k", "title": f"{company} 10-K 2024"},
                {"id": f"doc-{i}-ar" if i % 7 else f"doc-{i}-q4", "title": "Annual report"},
            ]
        },
        duration_s=0.012,
    )
    lookup = ToolCall(
        name="get_revenue",
        arguments={"company": company, "year": 2024},
        result={"company": company, "year": 2024, "revenue": revenue, "currency": "USD"},
        duration_s=0.004,
    )
    calls = [search, lookup, lookup] if i % 13 == 0 else [search, lookup]
    return Trial(
        case_id=f"case-{i:06d}",
        trial=0,
        output=output,
        tool_calls=calls,
        model_calls=[
            ModelCall(
                model="gpt-4o-mini",
                provider="openai",
                usage=Usage(input_tokens=420 + i % 50, output_tokens=35 + i % 9),
                duration_s=0.8,
            )
        ],
        latency_s=0.9 + (i % 17) / 100,
        working_latency_s=0.85 + (i % 17) / 100,
    )


def _build_run(store: RunStore, run_id: str, n: int) -> None:
    import asyncio

    scorers = default_scorers(TOOLS)
    info = RunInfo(
        run_id=run_id, target="bench-w5", trials=1, scorers=[], builtins=True, tools=TOOLS
    )
    store.create_run(info, [make_case(i) for i in range(n)])

    async def scored(start: int, stop: int) -> list[TrialResult]:
        results = []
        for i in range(start, stop):
            case, trial = make_case(i), make_trial(i)
            results.append(
                TrialResult(case=case, trial=trial, scores=await score_trial(scorers, case, trial))
            )
        return results

    for start in range(0, n, 2_000):
        store.add_results(run_id, asyncio.run(scored(start, min(n, start + 2_000))))
    store.set_status(run_id, RunStatus.FINISHED)


def build_store(path: Path, trials: int, judge_trials: int) -> None:
    """Build the store file at `path` (a finished run as `agenteval run` leaves it)."""
    partial = path.with_suffix(".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    with RunStore(partial) as store:
        _build_run(store, _RUN_ID, trials)
        _build_run(store, _JUDGE_RUN_ID, judge_trials)
    partial.rename(path)


def _serve_judge(conn: Connection) -> None:
    """The loopback OpenAI-compatible server, in its own process; answers `count` requests."""
    sys.path.insert(0, str(_ROOT))
    from tests.judge.fakes import FakeOpenAI

    with FakeOpenAI() as fake:
        conn.send(fake.base_url)
        while (message := conn.recv()) != "stop":
            assert message == "count"
            conn.send(fake.request_count)


def _judge_passes(store: Path, judge_trials: int, cache: Path) -> tuple[int, int]:
    from agenteval.judge.judge import JudgeConfig

    # The judge talks to loopback only: no proxy, and a key the SDK accepts.
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    os.environ.setdefault("OPENAI_API_KEY", "bench-w5-not-a-key")
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    server = context.Process(target=_serve_judge, args=(theirs,), daemon=True)
    server.start()
    try:
        base_url = ours.recv()
        config = JudgeConfig(
            spec="openai:gpt-4o-mini", base_url=base_url, cache_path=cache, concurrency=32
        )
        counts = []
        for _ in range(2):
            before = _ask(ours, "count")
            agenteval.judge_run(_JUDGE_RUN_ID, config, rubrics=_JUDGE_RUBRICS, store=store)
            counts.append(_ask(ours, "count") - before)
        return counts[0], counts[1]
    finally:
        ours.send("stop")
        server.join(timeout=10)


def _ask(conn: Connection, message: str) -> Any:
    conn.send(message)
    return conn.recv()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--judge-trials", type=int, default=2_000)
    parser.add_argument("--workdir", type=Path, default=_ROOT / "bench" / "results" / "w5")
    parser.add_argument("--no-judge", action="store_true", help="time the rescore only")
    parser.add_argument(
        "--stale-scores", action="store_true", help="every stored score differs: all rewritten"
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    built = args.workdir / f"built-v{_GENERATOR_VERSION}-{args.trials}-{args.judge_trials}.db"
    if not built.exists():
        start = time.perf_counter()
        builder = multiprocessing.get_context("spawn").Process(
            target=build_store, args=(built, args.trials, args.judge_trials)
        )
        builder.start()
        builder.join()
        if builder.exitcode != 0:
            raise SystemExit(f"building the store failed (exit {builder.exitcode})")
        print(f"built {built.name} in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    store = args.workdir / "w5.db"
    for stale in (store, Path(f"{store}-wal"), Path(f"{store}-shm")):
        stale.unlink(missing_ok=True)
    shutil.copyfile(built, store)
    if args.stale_scores:
        with sqlite3.connect(store) as conn:  # a trailing space: the same score, other text
            conn.execute("UPDATE scores SET data = data || ' ' WHERE run_id = ?", (_RUN_ID,))

    start = time.perf_counter()
    run = agenteval.rescore(_RUN_ID, builtins=True, store=store)
    seconds = time.perf_counter() - start
    assert run.summary.trials == args.trials, run.summary.trials
    scorers = [name for name in BUILTIN_SCORERS if run.summary.scorers[name].scored]
    rescore_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    first = second = None
    if not args.no_judge:
        cache = args.workdir / "judge-cache.db"
        cache.unlink(missing_ok=True)  # a fresh cache: the first pass asks, the second must not
        first, second = _judge_passes(store, args.judge_trials, cache)
    print(
        json.dumps(
            {
                "workload": "W5",
                "trials": args.trials,
                "rescore_seconds": round(seconds, 3),
                "trials_per_second": round(args.trials / seconds),
                "stale_scores": args.stale_scores,
                "scorers": scorers,
                "judge_trials": None if args.no_judge else args.judge_trials,
                "judge_rubrics": None if args.no_judge else _JUDGE_RUBRICS,
                "judged": "a separate run of the first judge_trials trials",
                "first_pass_calls": first,
                "second_pass_calls": second,
                "peak_rss_mb": round(rescore_rss_mb, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
