"""Declaring `Exception` (or `BaseException`) under `infrastructure_errors:` makes every bug
an agent has an infrastructure failure: retried, and never scored. Before, it was accepted
without a word, and a run whose every trial raised a plain `ValueError` showed no failing
score, exit 0 (and `agenteval gate` then passes it). Such a declaration is refused, naming the
file and line, as a reference that does not load is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.review.cli import agenteval as agenteval_cli
from tests.review.cli import project

import agenteval
from agenteval import EvalCase
from agenteval.errors import ConfigError

BUGGY = """
def answer(question):
    raise ValueError("a plain bug in the agent")
"""

CASES = [{"id": f"c{i}", "input": f"q{i}", "expected_output": "right"} for i in range(3)]


@pytest.mark.parametrize(
    "ref", ["builtins:Exception", "builtins.BaseException", "builtins:BaseException"]
)
def test_the_cli_refuses_a_catch_all_infrastructure_class(tmp_path: Path, ref: str) -> None:
    config = f"retries: 0\ninfrastructure_errors:\n  - {ref}\n"
    folder = project(tmp_path / "p", BUGGY, CASES, config)
    done = agenteval_cli(folder, "run", ".", "--store", "runs.db")
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr
    assert "agenteval.yaml:5" in done.stderr and "infrastructure" in done.stderr
    assert not done.stdout.startswith("run ")  # refused before a run starts


@pytest.mark.parametrize("cls", [Exception, BaseException])
def test_evaluate_refuses_a_catch_all_infrastructure_class(
    tmp_path: Path, cls: type[BaseException]
) -> None:
    def agent(question: str) -> str:
        raise ValueError("a plain bug in the agent")

    with pytest.raises(ConfigError, match="every"):
        agenteval.evaluate(
            agent,
            [EvalCase(id="c", input="q", expected_output="right")],
            store=tmp_path / "runs.db",
            infrastructure_errors=[cls],
        )
