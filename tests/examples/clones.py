"""A fresh clone of this repository at HEAD, for the tests that run an example from one (the
committed files only, as a new user gets them)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["ROOT", "fresh_clone", "git"]

ROOT = Path(__file__).resolve().parents[2]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=120
    ).stdout


def fresh_clone(tmp_path: Path) -> Path:
    """HEAD cloned under `tmp_path` (skips the test without git or a git checkout)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of agenteval")
    head = git("rev-parse", "HEAD", cwd=ROOT).strip()
    target = tmp_path / "agenteval"
    git("clone", "-q", "--no-hardlinks", "--no-checkout", str(ROOT), str(target), cwd=ROOT)
    git("checkout", "-q", head, cwd=target)
    return target
