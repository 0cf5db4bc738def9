"""What `agenteval.evaluate()` returns, as the README's Python API shows it: a `Run` that prints
its summary (`print(run)`, `run.print_summary()`), writes its HTML report (`run.to_html(path)`),
and has its id (`run.run_id`); and a run made from Python is listed by `agenteval runs` under
its agent's name."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import cli_env

import agenteval
from agenteval import EvalCase
from agenteval.store import RunStore

CASES = [
    EvalCase(id="capital", input="Capital of France?", expected_output="Paris"),
    EvalCase(id="sum", input="2+2?", expected_output="5"),
]


def capital_agent(question: str) -> str:
    return "Paris" if "France" in question else "4"


@pytest.fixture
def run(tmp_path: Path) -> agenteval.Run:
    return agenteval.evaluate(capital_agent, CASES, store=tmp_path / "runs.db")


def test_print_run_prints_its_summary(
    run: agenteval.Run, capsys: pytest.CaptureFixture[str]
) -> None:
    print(run)
    out = capsys.readouterr().out
    assert f"run {run.run_id}" in out
    assert "exact_match" in out and "Trials passing" in out
    assert "\x1b[" not in out  # plain text: fit for a log or a notebook


def test_print_summary_prints_the_terminal_summary(
    run: agenteval.Run, capsys: pytest.CaptureFixture[str]
) -> None:
    run.print_summary()
    out = capsys.readouterr().out
    assert f"run {run.run_id}" in out and "exact_match" in out


def test_to_html_writes_the_report(run: agenteval.Run, tmp_path: Path) -> None:
    written = run.to_html(tmp_path / "out" / "report.html")
    assert written == tmp_path / "out" / "report.html"
    page = written.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
    assert run.run_id in page and "capital" in page


def test_run_id_is_documented_and_names_the_stored_run(run: agenteval.Run) -> None:
    assert agenteval.Run.run_id.__doc__
    with RunStore(run.store_path, create=False) as store:
        assert store.get_info(run.run_id).run_id == run.run_id


def test_a_run_made_from_python_is_listed_under_its_agents_name(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    agenteval.evaluate(capital_agent, CASES, store=store)
    agenteval.evaluate(functools.partial(capital_agent), CASES[:1], store=store)
    listed = subprocess.run(
        [sys.executable, "-m", "agenteval", "runs", "--store", str(store)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if "2/2" in line or "1/1" in line]
    assert len(rows) == 2
    assert all("python:capital_agent" in row for row in rows), listed.stdout
