"""W4, rate limit, on Inspect AI; runs inside its venv (``bench/.venvs/inspect-ai``).

    python inspect_w4.py [--rate 100] [--trials 1500] [--concurrency 64] [--adaptive]

Starts agenteval's rate-limited loopback server (``bench/peers/w4_peer.py``), then evals a
task of N samples whose solver is ``generate()`` and scorer ``exact()`` (target "Paris", what
the server answers), on Inspect's OpenAI-compatible provider pointed at the server:
``get_model("openai-api/w4/w4-model", base_url=<server>, api_key="x")``.  Its calling path
as shipped: the openai SDK's own 2 retries of a 429 (waiting ``retry-after-ms``), then
Inspect's retries, unlimited (no ``max_retries`` or ``timeout``), with exponential backoff
from 3 s plus jitter that does not read ``Retry-After``.  ``max_connections = max_samples = C``,
which turns Inspect's adaptive connections off; ``--adaptive`` instead passes
``adaptive_connections=C`` (Inspect's own controller, at most C connections, scaling down on
429s) and ``max_samples=C``.  A sample is lost when it errored or did not score correct.
``log_realtime=False``, no display, logs and ``XDG_DATA_HOME`` in a temporary directory.  Only
``eval`` is timed.  The last stdout line is the JSON of agenteval's W4 plus ``framework``
and ``version``.

Needs the ``openai`` package in the venv (``bench/run.py`` installs it for W4).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from w4_peer import ANSWER, loopback_only, parse_args, rate_limited_server, result_line

FRAMEWORK = "inspect-ai"


def run(
    url: str, trials: int, concurrency: int, adaptive: bool, log_dir: Path
) -> tuple[int, float, Counter[str]]:
    """Eval N one-generate samples; return (succeeded, seconds, errors by first line)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import CORRECT, exact
    from inspect_ai.solver import generate

    task = Task(
        name="agenteval_w4",
        dataset=MemoryDataset(
            [
                Sample(id=f"q{i}", input=f"What is the capital of France? ({i})", target=ANSWER)
                for i in range(trials)
            ]
        ),
        solver=generate(),
        scorer=exact(),
    )
    model = get_model("openai-api/w4/w4-model", base_url=url, api_key="x")
    connections = {"adaptive_connections": concurrency} if adaptive else {}
    start = time.perf_counter()
    (log,) = eval(
        task,
        model=model,
        max_samples=concurrency,
        max_connections=None if adaptive else concurrency,
        **connections,
        log_realtime=False,
        log_dir=str(log_dir),
        display="none",
        fail_on_error=False,
    )
    seconds = time.perf_counter() - start
    if log.status == "error":
        raise RuntimeError(f"eval ended with status {log.status}: {log.error}")
    errors: Counter[str] = Counter()
    succeeded = 0
    for sample in log.samples or []:
        if sample.error is not None:
            errors[sample.error.message.splitlines()[0][:120]] += 1
        elif sample.scores and all(s.value == CORRECT for s in sample.scores.values()):
            succeeded += 1
    return succeeded, seconds, errors


def main(argv: list[str]) -> int:
    """Run W4 against a fresh server, Inspect's files in a scratch directory; print JSON last."""
    args = parse_args(__doc__.splitlines()[0], argv, adaptive_option=True)
    loopback_only()
    with tempfile.TemporaryDirectory(prefix="inspect-w4-") as workdir:
        # Inspect's traces and buffers go under XDG_DATA_HOME/inspect_ai: keep them in scratch.
        os.environ["XDG_DATA_HOME"] = str(Path(workdir) / "xdg-data")
        os.environ["INSPECT_LOG_DIR"] = str(Path(workdir) / "logs")
        os.chdir(workdir)
        with rate_limited_server(args.rate) as server:
            succeeded, seconds, errors = run(
                server.url, args.trials, args.concurrency, args.adaptive, Path(workdir) / "logs"
            )
        os.chdir(Path(__file__).parent)
    for message, count in errors.most_common(3):
        print(f"{count} samples failed: {message}", file=sys.stderr)
    retries = (
        "openai SDK default (2, honouring retry-after-ms), then Inspect's unlimited "
        "exponential backoff from 3 s"
    )
    print(
        result_line(
            FRAMEWORK,
            args,
            succeeded,
            seconds,
            server,
            adaptive=args.adaptive,
            retries=retries,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
