"""`agenteval show --verbose` shows each simulated conversation turn by turn, run as a user
runs it (a subprocess on a stored run): every user message marked by who wrote it, the tool
calls of its turn, the agent's answer, how the conversation ended and the user's word on it;
message text printed as text (no console markup, no escape sequence), secrets redacted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.report.simulated_runs import CASES, simulated_run

from agenteval import EndReason, EvalCase, UserReply

SHAPED = "sk-proj-Zq81mXvT4kLpW29sQeRt7uYiOp0aSdFh"


def tricky_user(messages: list[dict[str, str]]) -> str | UserReply:
    """Says things a terminal could misread, then stops with a secret in its word."""
    if not messages:
        return "[bold red]shout[/bold red] \x1b[31mred\x1b[0m my order is 8812"
    return UserReply(stop=EndReason.USER_GAVE_UP, detail=f"my key {SHAPED} did not help")


def _show(store: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "show", *args, "--store", str(store)],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "200",
            # The code under test (a worktree's, when PYTHONPATH names it).
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_show_verbose_prints_each_conversation_turn_by_turn(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = simulated_run(store)
    text = _show(store, run.run_id, "--verbose")
    assert "Simulated conversations, turn by turn" in text
    block = text[text.index("written-first #0  user") :]
    lines = [line.strip() for line in block.splitlines()[:8]]
    assert lines == [
        "written-first #0  user openai:gpt-4o-mini  ·  2 user turns",
        "goal: Get the refund",
        "1. user [written] My order 8812 arrived broken",
        "tools: look_up_broken_order",
        "agent: Found it. What is your email?",
        "2. user [simulated] ana@example.com",
        "agent: Refund issued for order 8812.",
        "ended: goal_achieved (the user's goal was met) · the user: refund confirmed",
    ]
    assert "1. user [scripted] I do not remember." in text
    assert "ended: max_turns (the conversation reached max_turns)" in text
    assert "ended: trial_failed (the trial failed mid-conversation) · failure: agent_error" in text
    # The summary's section, in the same output.
    assert "turns to goal: mean 2.0, median 2.0" in text


def test_show_without_verbose_prints_the_summary_not_the_turns(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = simulated_run(store)
    text = _show(store, run.run_id)
    assert "Simulated conversations" in text
    assert "turn by turn" not in text
    assert "[written]" not in text


def test_messages_print_as_text_and_secrets_stay_out(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    case = EvalCase(
        id="tricky", user_simulation={"script": "tests.test_cli_show_simulation:tricky_user"}
    )
    run = simulated_run(store, [case])
    text = _show(store, run.run_id, "-v")
    assert "[bold red]shout[/bold red] \\x1b[31mred\\x1b[0m my order is 8812" in text
    assert "\x1b" not in text
    assert "user_gave_up" in text
    assert SHAPED not in text
    assert "my key" in text  # the user's word is shown, its secret redacted


def test_show_verbose_of_a_run_without_simulated_users_says_nothing_of_them(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    run = simulated_run(store, [case for case in CASES if case.user_simulation is None])
    text = _show(store, run.run_id, "--verbose")
    assert "simulat" not in text.lower()
