"""Benchmark workload for Inspect AI; runs inside its venv (``bench/.venvs/inspect-ai``).

Protocol shared by every peer runner::

    python inspect_workload.py --cases N --latency-ms L --concurrency C --workdir DIR

The system under test is Inspect's ``mockllm/model`` driven by an async callable that
awaits ``asyncio.sleep(L / 1000)`` (no sleep at all when L is 0) and answers ``"Paris"``
(with a ``usage``, so no tiktoken download); the task's solver is ``generate()`` and its one
scorer ``exact()``.  ``eval`` runs with ``max_samples = max_connections = C`` (fixed, not
adaptive), ``log_realtime=False``, no display, logs and ``XDG_DATA_HOME`` inside DIR.  Only
``eval`` is timed.  The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

ANSWER = "Paris"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line every peer runner shares."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args(argv)
    if args.cases < 1 or args.concurrency < 1 or args.latency_ms < 0:
        parser.error("--cases and --concurrency must be >= 1, --latency-ms >= 0")
    return args


def run(cases: int, latency_ms: float, concurrency: int, log_dir: Path) -> tuple[int, float]:
    """Evaluate the fake agent on ``cases`` samples; return (samples passed, seconds in ``eval``)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import exact
    from inspect_ai.solver import generate

    delay = latency_ms / 1000

    async def agent(*_request: Any) -> ModelOutput:
        """The system under test: wait the fake latency, then answer (with token usage set)."""
        if delay:
            await asyncio.sleep(delay)
        output = ModelOutput.from_content(model="mockllm/model", content=ANSWER)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    task = Task(
        name="agenteval_bench",
        dataset=MemoryDataset(
            [Sample(id=f"case-{i}", input=f"case-{i}", target=ANSWER) for i in range(cases)]
        ),
        solver=generate(),
        scorer=exact(),
    )
    model = get_model("mockllm/model", custom_outputs=agent)
    start = time.perf_counter()
    logs = eval(
        task,
        model=model,
        max_samples=concurrency,
        max_connections=concurrency,
        log_realtime=False,
        log_dir=str(log_dir),
        display="none",
        fail_on_error=True,
    )
    seconds = time.perf_counter() - start
    (log,) = logs
    if log.status != "success":
        raise RuntimeError(f"eval ended with status {log.status}: {log.error}")
    # From the log header: touching ``log.samples`` would load every sample back from the
    # .eval file (lazily) and add ~50 KB/sample to the peak RSS, which Inspect's run never needs.
    if log.results is None or not log.results.scores:
        raise RuntimeError("eval returned no scores")
    metrics = log.results.scores[0].metrics  # exact() reports its "mean" (older: "accuracy")
    fraction = next(metrics[name].value for name in ("mean", "accuracy") if name in metrics)
    passed = round(fraction * log.results.completed_samples)
    return passed, seconds


def main(argv: list[str]) -> int:
    """Run the workload with all of Inspect's files in DIR; print the JSON result last."""
    args = parse_args(argv)
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)
    # Inspect's traces and buffers go under XDG_DATA_HOME/inspect_ai; set before it is imported.
    os.environ["XDG_DATA_HOME"] = str(workdir / "xdg-data")
    os.environ["INSPECT_LOG_DIR"] = str(workdir / "logs")
    try:
        passed, seconds = run(args.cases, args.latency_ms, args.concurrency, workdir / "logs")
    except Exception as error:
        print(f"inspect-ai workload failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(f"passed {passed}/{args.cases}")
    result = {
        "framework": "inspect-ai",
        "version": version("inspect-ai"),
        "cases": args.cases,
        "passed": passed,
        "seconds": seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "persists": ".eval log (~1.9 KB/sample) plus a trace under XDG_DATA_HOME",
    }
    print(json.dumps(result))
    if passed != args.cases:
        print(f"inspect-ai workload: only {passed} of {args.cases} cases passed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
