"""A case naming its simulator's model in `user_simulation.extra.model` (as an ADK
eval set's `user_simulator_config.model` is kept) that is not `provider:model` is said naming
the case and the field the user wrote, not as a `user_simulator` setting they never gave."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_named_model_that_is_not_provider_model_names_the_case(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def answer(messages):\n    return 'ok'\n")
    (tmp_path / "cases.yaml").write_text(
        "- id: refund\n"
        "  input: hi\n"
        "  user_simulation:\n"
        "    goal: Get a refund.\n"
        "    extra: {model: gpt-4o-mini}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "cases.yaml", "--agent", "agent.py:answer"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "refund" in done.stderr
    assert "extra.model" in done.stderr
    assert (
        not (tmp_path / ".agenteval" / "runs.db").exists()
        or b"refund" not in (tmp_path / ".agenteval" / "runs.db").read_bytes()
    )
