"""Varied stored runs for the rescoring A/B tests: failures, retries, gaps, judge scores, flaky
cases, priced and unpriced model calls, simulated users, several trials a case, and stored
scores some of which a rescore gives again byte for byte and some it changes.

`build(path, seed)` writes the same store every time for a seed. `snapshot(path, run_id)` is
what a rescore must leave the same: every stored score row (in rowid order) and the summary.
`python tests/engine/rescore_runs.py tests/engine/golden` writes the golden files the tests compare with; they
were made by main before the rescoring changes of issue 21 (`golden/`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

from agenteval import EvalCase, ModelCall, RunInfo, RunStore, Score, ToolCall, Trial, Usage
from agenteval.agents.tools import ToolSpec
from agenteval.engine.scheduler import score_trial
from agenteval.run import RunStatus, TrialResult
from agenteval.score import JudgeRecord
from agenteval.scorers import default_scorers
from agenteval.trace import Failure, FailureCause, SimulatedConversation, UserTurn

RUN_ID = "varied"
SEEDS = (1, 2, 3)

TOOLS = {
    "lookup": ToolSpec(
        name="lookup",
        description="Look a number up.",
        parameters={
            "type": "object",
            "properties": {"key": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["key"],
        },
    )
}


def _case(rng: random.Random, i: int) -> EvalCase:
    value = 1_000 + rng.randrange(90_000)
    extra: dict[str, Any] = {}
    if i % 4 == 0:
        extra["relevant_docs"] = [f"doc-{i}", f"doc-{i}-b"]
    if i % 3 == 0:
        extra["expected_trajectory"] = [{"name": "lookup", "arguments": {"key": f"k{i}"}}]
    return EvalCase(
        id=f"case-{i:03d}",
        input=f"What is the value of k{i} in 2024?",
        expected_output=f"{value}",
        expected_tools=["lookup"] if i % 2 else None,
        must_not_contain=["forbidden"] if i % 5 == 0 else None,
        max_tool_calls=2 if i % 6 == 0 else None,
        **extra,
    )


def _trial(rng: random.Random, case: EvalCase, t: int) -> Trial:
    i = int(case.id.split("-")[1])
    value = int(str(case.expected_output))
    right = rng.random() < 0.6
    output = f"{value:,}" if right else f"{value + rng.randrange(1, 500)}"
    call = ToolCall(
        name="lookup",
        arguments={"key": f"k{i}", "year": 2024} if rng.random() < 0.8 else {"year": "x"},
        result={"value": value, "docs": [{"id": f"doc-{i}"}]},
        duration_s=0.001 * rng.randrange(1, 30),
    )
    calls = [call] * rng.randrange(0, 4)
    models = [
        ModelCall(
            model=rng.choice(["gpt-4o-mini", "gpt-4o", "no-such-model"]),
            usage=Usage(
                input_tokens=rng.randrange(1, 900),
                output_tokens=rng.randrange(0, 90),
                cached_tokens=rng.randrange(0, 3) * 7,
                reasoning_tokens=rng.randrange(0, 2) * 5,
            ),
        )
        for _ in range(rng.randrange(0, 3))
    ]
    usage = Usage()
    for m in models:
        usage = usage + m.usage
    extra: dict[str, Any] = {}
    roll = rng.random()
    if roll < 0.1:
        extra["failure"] = Failure(cause=FailureCause.TIMEOUT, message="took too long")
        output = None
    elif roll < 0.15:
        extra["failure"] = Failure(cause=FailureCause.AGENT_ERROR, message="boom")
        output = None
    if rng.random() < 0.2:
        extra["retries"] = {rng.choice(["rate_limit", "server_error"]): rng.randrange(1, 3)}
        extra["attempts"] = 2
    if rng.random() < 0.15:
        extra["not_recorded"] = {
            rng.choice(["usage", "tool_calls"]): rng.choice(["no spans", "adapter said so"])
        }
    if i % 7 == 0:
        extra["simulation"] = SimulatedConversation(
            user="scripted",
            turns=[UserTurn(user="hi", source="scripted"), UserTurn(user="ok", source="written")],
            end_reason="goal_achieved" if rng.random() < 0.5 else "user_gave_up",
            cost_usd=0.001 * rng.randrange(0, 5) if rng.random() < 0.7 else None,
        )
    return Trial(
        case_id=case.id,
        trial=t,
        output=output,
        tool_calls=calls,
        retrieved_docs=[f"doc-{i}"] if rng.random() < 0.5 else None,
        model_calls=models,
        usage=usage,
        latency_s=round(rng.uniform(0.1, 3.0), 6) if rng.random() < 0.9 else None,
        working_latency_s=round(rng.uniform(0.05, 2.0), 6) if rng.random() < 0.5 else None,
        **extra,
    )


def _judge_score(rng: random.Random) -> Score:
    value = rng.choice([0.0, 0.25, 0.5, 1.0])
    return Score(
        name="correctness",
        value=value,
        passed=value >= 0.5,
        reason="judged",
        usage=Usage(input_tokens=rng.randrange(10, 99), output_tokens=rng.randrange(1, 9)),
        judge=JudgeRecord(
            judge="openai:gpt-4o-mini",
            model="gpt-4o-mini",
            template="correctness",
            template_version=1,
            retries={"rate_limit": 1} if rng.random() < 0.2 else {},
            cost_usd=0.0001 * rng.randrange(1, 9) if rng.random() < 0.8 else None,
        ),
    )


def build(path: Path, seed: int, cases: int = 40, trials: int = 3) -> None:
    """A finished run of `cases` x `trials` stored trials, scored by the built-ins (and a
    judge rubric on some); about a third of the stored built-in scores then made stale."""
    rng = random.Random(seed)
    scorers = default_scorers(TOOLS)
    info = RunInfo(
        run_id=RUN_ID, target="varied", trials=trials, scorers=[], builtins=True, tools=TOOLS
    )
    all_cases = [_case(rng, i) for i in range(cases)]
    with RunStore(path) as store:
        store.create_run(info, all_cases)

        async def scored() -> list[TrialResult]:
            results = []
            for case in all_cases:
                for t in range(trials):
                    trial = _trial(rng, case, t)
                    scores = await score_trial(scorers, case, trial)
                    if rng.random() < 0.3:
                        scores["correctness"] = _judge_score(rng)
                    results.append(TrialResult(case=case, trial=trial, scores=scores))
            return results

        store.add_results(RUN_ID, asyncio.run(scored()))
        store.set_status(RUN_ID, RunStatus.FINISHED)
    with sqlite3.connect(path) as conn:
        conn.execute(  # stale text (the same score, written again) and a changed value
            "UPDATE scores SET data = data || ' ' WHERE rowid % 3 = 0 AND name != 'correctness'"
        )
        conn.execute(
            "UPDATE scores SET data = replace(data, '\"passed\":true', '\"passed\":false')"
            " WHERE rowid % 11 = 0 AND name = 'exact_match'"
        )


def snapshot(path: Path, summary: Any) -> dict[str, Any]:
    """What a rescore leaves: every score row in rowid order, and the summary's JSON."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT rowid, run_id, case_id, trial, name, data FROM scores ORDER BY rowid"
        ).fetchall()
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    return {
        "rows": len(rows),
        "rows_sha256": digest,
        "summary": json.loads(summary.model_dump_json()),
    }


if __name__ == "__main__":
    import agenteval

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for seed in SEEDS:
        db = out / f"varied-{seed}.db"
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            leftover.unlink(missing_ok=True)
        build(db, seed)
        run = agenteval.rescore(RUN_ID, builtins=True, store=db)
        (out / f"rescored-{seed}.json").write_text(
            json.dumps(snapshot(db, run.summary), sort_keys=True, indent=1) + "\n"
        )
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            leftover.unlink(missing_ok=True)
