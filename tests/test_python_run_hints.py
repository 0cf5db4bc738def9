"""A run made from Python (`agenteval.evaluate`, target `python:NAME`) is completed from Python:
no hint may suggest `agenteval run python:NAME --resume`, which cannot work (there is no such
target on the command line), and a pytest session's run is never resumed from Python either."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli

import agenteval
from agenteval import EvalCase
from agenteval.errors import AgentEvalError
from agenteval.run import how_to_complete


def answer(question: str) -> str:
    return "Paris"


def lose_a_trial(store: Path, run_id: str) -> None:
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM scores WHERE run_id = ? AND case_id = 'b'", (run_id,))
        db.execute("DELETE FROM trials WHERE run_id = ? AND case_id = 'b'", (run_id,))


def test_the_hint_for_a_python_run_is_a_python_call() -> None:
    hint = how_to_complete("python:answer", "20261201-000000-abcd")
    assert "agenteval run" not in hint
    assert 'resume="20261201-000000-abcd"' in hint


def test_show_of_a_python_run_with_a_lost_trial_suggests_nothing_that_cannot_work(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id="a", input="q", expected_output="Paris"), EvalCase(id="b", input="q")]
    run = agenteval.evaluate(answer, cases, store=store)
    lose_a_trial(store, run.run_id)

    shown = agenteval_cli(tmp_path, "show", run.run_id, "--store", str(store))

    assert "agenteval run python:" not in shown.stdout + shown.stderr
    assert f'resume="{run.run_id}"' in shown.stdout + shown.stderr
    # And the hint is true: resuming from Python runs the lost trial.
    again = agenteval.evaluate(answer, cases, store=store, resume=run.run_id)
    assert again.run_id == run.run_id and again.complete


def test_evaluate_refuses_to_resume_a_pytest_sessions_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(answer, [EvalCase(id="a", input="q")], store=store)
    with sqlite3.connect(store) as db:
        db.execute(
            "UPDATE runs SET target = ?1, status = 'partial', info = json_set(info,"
            " '$.target', ?1, '$.status', 'partial') WHERE run_id = ?2",
            ("pytest:tests/test_x.py::test_y", run.run_id),
        )
    with pytest.raises(AgentEvalError, match="pytest session"):
        agenteval.evaluate(answer, [EvalCase(id="a", input="q")], store=store, resume=run.run_id)


def test_resuming_a_python_run_on_the_command_line_says_how_python_resumes_it(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id="a", input="q", expected_output="Paris"), EvalCase(id="b", input="q")]
    run = agenteval.evaluate(answer, cases, store=store)
    lose_a_trial(store, run.run_id)
    (tmp_path / "cases.yaml").write_text("- {id: a, input: q}\n")
    (tmp_path / "x.py").write_text("def f(question):\n    return 'Paris'\n")

    done = agenteval_cli(
        tmp_path,
        "run",
        "cases.yaml",
        "--agent",
        "x.py:f",
        "--resume",
        run.run_id,
        "--store",
        str(store),
    )

    assert done.returncode == 2
    assert "agenteval run python:" not in done.stdout + done.stderr
    assert f'resume="{run.run_id}"' in done.stderr


@pytest.mark.parametrize("command", ["rescore", "score"])
def test_a_misspelt_scorer_flag_is_named_by_every_command(tmp_path: Path, command: str) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(answer, [EvalCase(id="a", input="q")], store=store)
    (tmp_path / "cases.yaml").write_text("- {id: a, input: q}\n")
    (tmp_path / "traces.jsonl").write_text("")
    first = run.run_id if command == "rescore" else "traces.jsonl"
    extra = ["--cases", "cases.yaml"] if command == "score" else []

    done = agenteval_cli(
        tmp_path, command, first, *extra, "--scorer", "exact_mach", "--store", str(store)
    )

    assert done.returncode == 2
    assert "--scorer: no scorer named 'exact_mach'" in done.stderr
    assert "did you mean 'exact_match'?" in done.stderr
