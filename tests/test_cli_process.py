"""A child process started with `CHECKOUT_SRC` as its PYTHONPATH runs this checkout's
agenteval, not the installed one (an editable install of another tree, say)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli_process import CHECKOUT_SRC


def test_a_child_imports_this_checkouts_agenteval() -> None:
    child = subprocess.run(
        [sys.executable, "-c", "import agenteval; print(agenteval.__file__)"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": CHECKOUT_SRC},
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    here = Path(__file__).resolve().parents[1] / "src" / "agenteval" / "__init__.py"
    assert Path(child.stdout.strip()).resolve() == here
