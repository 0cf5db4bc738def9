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

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from protocol import ANSWER, parse_args, report


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
    args = parse_args(__doc__.splitlines()[0], argv)
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)
    # Inspect's traces and buffers go under XDG_DATA_HOME/inspect_ai; set before it is imported.
    os.environ["XDG_DATA_HOME"] = str(workdir / "xdg-data")
    os.environ["INSPECT_LOG_DIR"] = str(workdir / "logs")
    return report(
        "inspect-ai",
        args.cases,
        ".eval log (~1.9 KB/sample) plus a trace under XDG_DATA_HOME",
        lambda: run(args.cases, args.latency_ms, args.concurrency, workdir / "logs"),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
