"""`max_turns` counts every user message, the written ones included; a case that
writes more user messages than its `max_turns` allows is a mistake said when the case is read
(naming the case, the field and the fix), not a conversation silently played past its limit
and ended as `max_turns`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from agenteval import EvalCase


def test_written_turns_past_max_turns_are_refused() -> None:
    with pytest.raises(ValidationError, match="max_turns"):
        EvalCase(
            id="c",
            conversation=[{"input": "a"}, {"input": "b"}, {"input": "c"}],
            user_simulation={"goal": "g", "max_turns": 2},
        )
    with pytest.raises(ValidationError, match="max_turns"):
        EvalCase(
            id="c", input="a", user_simulation={"goal": "g", "starting_prompt": "b", "max_turns": 1}
        )


def test_written_turns_within_max_turns_are_accepted() -> None:
    EvalCase(
        id="c", input="a", user_simulation={"goal": "g", "starting_prompt": "b", "max_turns": 2}
    )
    EvalCase(id="c", input="a", user_simulation={"goal": "g", "max_turns": 1})


def test_the_case_file_says_where(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(
        "- id: refund\n"
        "  input: My order arrived broken.\n"
        "  user_simulation:\n"
        "    goal: Get a refund.\n"
        "    starting_prompt: Hello?\n"
        "    max_turns: 1\n"
    )
    (tmp_path / "agent.py").write_text("def answer(messages):\n    return 'ok'\n")
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "cases.yaml", "--agent", "agent.py:answer"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "cases.yaml" in done.stderr and "refund" in done.stderr
    assert "max_turns" in done.stderr
