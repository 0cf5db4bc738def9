"""W4, rate limit, on pydantic-evals; runs inside its venv (``bench/.venvs/pydantic-evals``).

    python pydantic_evals_w4.py [--rate 100] [--trials 1500] [--concurrency 64]

Starts agenteval's rate-limited loopback server (``bench/peers/w4_peer.py``), then evaluates a
dataset of N cases whose task is a pydantic-ai ``Agent`` on ``OpenAIChatModel`` with an
``OpenAIProvider(base_url=<server>, api_key="x")``: one chat completion per case, through
pydantic-ai's and the openai SDK's calling path as shipped.  That path's only retries are the
openai SDK's defaults: 2 retries of a 429, waiting what ``retry-after-ms`` says; pydantic-evals
runs no task retries unless ``retry_task`` is given (it is not).  ``max_concurrency=C``.
A case whose task raised, or which did not answer "Paris", is lost.  Only ``evaluate`` is
timed.  The last stdout line is the JSON of agenteval's W4 plus ``framework`` and ``version``.

Needs ``pydantic-ai-slim[openai]`` in the venv (``bench/run.py`` installs it for W4).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter

from w4_peer import ANSWER, loopback_only, parse_args, rate_limited_server, result_line

FRAMEWORK = "pydantic-evals"


async def run(url: str, trials: int, concurrency: int) -> tuple[int, float, Counter[str]]:
    """Evaluate N one-completion cases; return (succeeded, seconds, errors by first line)."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    model = OpenAIChatModel("w4-model", provider=OpenAIProvider(base_url=url, api_key="x"))
    agent = Agent(model)

    async def task(question: str) -> str:
        """The system under test: one chat completion, its text as the answer."""
        result = await agent.run(question)
        return result.output

    dataset = Dataset[str, str, None](
        name="agenteval-w4",
        cases=[
            Case(
                name=f"q{i}",
                inputs=f"What is the capital of France? ({i})",
                expected_output=ANSWER,
            )
            for i in range(trials)
        ],
        evaluators=[EqualsExpected()],
    )
    start = time.perf_counter()
    report = await dataset.evaluate(task, max_concurrency=concurrency, progress=False)
    seconds = time.perf_counter() - start
    errors = Counter(f.error_message.splitlines()[0][:120] for f in report.failures)
    succeeded = sum(case.output == ANSWER for case in report.cases)
    return succeeded, seconds, errors


def main(argv: list[str]) -> int:
    """Run W4 against a fresh server and print the JSON result last."""
    args = parse_args(__doc__.splitlines()[0], argv)
    loopback_only()
    with rate_limited_server(args.rate) as server:
        succeeded, seconds, errors = asyncio.run(run(server.url, args.trials, args.concurrency))
    for message, count in errors.most_common(3):
        print(f"{count} cases failed: {message}", file=sys.stderr)
    print(
        result_line(
            FRAMEWORK,
            args,
            succeeded,
            seconds,
            server,
            retries="openai SDK default: 2 per request, honouring retry-after-ms",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
