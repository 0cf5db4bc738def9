"""Write an Inspect AI log of N small samples for `bench/view.py`; runs in Inspect's venv.

    python inspect_view_log.py --samples 100000 --log-dir DIR

The log is made with Inspect's own log API, each sample as small as the viewer bench's
agenteval trials: an input, the output "Paris", one score. `write_eval_log` itself is what
`_write_eval_log_with_recorder` does (log_init, log_start, log_sample each, log_finish) but
that buffers every sample and compares each new one with all those buffered (quadratic: 2,000
samples take 5 s, 100,000 would take hours), so this does the same steps with the recorder's
`flush` every 1,000 samples, as an `eval` with its default log buffer does. Prints one JSON
line: the log's path and the seconds the writing took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

FLUSH_EVERY = 1_000


async def _write(log: Any, output_file: str, log_dir: str) -> None:
    """`write_eval_log`'s own steps (inspect_ai/log/_recorders/eval.py), flushed as it goes."""
    from inspect_ai.log._condense import condense_sample
    from inspect_ai.log._recorders.eval import EvalRecorder

    recorder = EvalRecorder(log_dir)
    await recorder.log_init(log.eval, output_file, clean=True)
    await recorder.log_start(log.eval, log.plan)
    for number, sample in enumerate(log.samples, start=1):
        await recorder.log_sample(log.eval, condense_sample(sample))
        if number % FLUSH_EVERY == 0:
            await recorder.flush(log.eval)
    await recorder.log_finish(log.eval, log.status, log.stats, log.results, log.reductions)


def main() -> None:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--log-dir", type=Path, required=True)
    args = parser.parse_args()

    samples = [
        EvalSample(
            id=f"case-{i:06d}",
            epoch=1,
            input=f"question number {i}: what is the capital of France?",
            target="Paris",
            output=ModelOutput.from_content(model="mockllm/model", content="Paris"),
            scores={"exact": Score(value="C" if i % 5 else "I", answer="Paris")},
        )
        for i in range(args.samples)
    ]
    now = "2026-12-02T00:00:00+00:00"
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created=now,
            task="agenteval_view_bench",
            dataset=EvalDataset(name="bench", samples=args.samples),
            model="mockllm/model",
            config=EvalConfig(),
        ),
        results=EvalResults(
            total_samples=args.samples,
            completed_samples=args.samples,
            scores=[EvalScore(name="exact", scorer="exact")],
        ),
        stats=EvalStats(started_at=now, completed_at=now),
        samples=samples,
    )
    args.log_dir.mkdir(parents=True, exist_ok=True)
    path = args.log_dir / "2026-12-02T00-00-00+00-00_agenteval-view-bench_bench.eval"
    start = time.perf_counter()
    asyncio.run(_write(log, str(path), str(args.log_dir)))
    print(json.dumps({"log": str(path), "write_s": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
