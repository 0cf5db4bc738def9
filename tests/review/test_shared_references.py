"""Data whose size comes from shared references: a YAML alias bomb ("billion laughs") in a
case file, and an agent that returns (or a tool that records) a value in which one list is
referenced many times at every level. Shallow (12 levels, far below the 64 limit) and small in
memory, but 9**12 leaves when walked as a tree.

Before: the case file loads (the depth check passes), the run starts, and storing the case
walks every leaf (`jsonsafe._free_fits`, then pydantic's serializer): the run hangs at full CPU.
The agent's value hangs the store writer the same way, in the event loop, where no time limit
can reach it; a tool's result hangs the agent's own call (`@tool` copies it). The promise
("anything an agent returns is stored, whatever its shape"; "a case file ... one error, never
a traceback") needs a size budget: a case file whose aliases expand past it is refused with
file and line, and a record past it is stored cut, with a marker.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.review.cli import environment, project

# Only stops a hang (which never ends): a fixed version takes about a second, but a loaded 2-core
# machine running the suite in parallel once took over 20 s, so the guard is generous.
GUARD_S = 300

BOMB_LEVELS = 12


def _bomb_yaml() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, BOMB_LEVELS):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    body = "\n".join("      " + line for line in lines)
    return f"- id: bomb\n  input: hi\n  metadata:\n    laughs:\n{body}\n"


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            [sys.executable, "-m", "agenteval", "run", *args, "--store", "runs.db"],
            cwd=folder,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=GUARD_S,
        )
    except subprocess.TimeoutExpired:
        return None


def test_a_yaml_alias_bomb_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(_bomb_yaml())
    (tmp_path / "agent.py").write_text("def answer(q):\n    return q\n")
    done = _run(tmp_path, "cases.yaml", "--agent", "agent.py:answer")
    assert done is not None, f"agenteval run hung for {GUARD_S} s on an alias bomb"
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cases.yaml" in done.stderr


SHARED_AGENT = """
import agenteval

def laughs(levels):
    value = ["lol"]
    for _ in range(levels):
        value = [value] * 9  # the same list, nine times, at every level
    return value

@agenteval.tool
def fetch(query: str) -> list:
    return laughs(12)

def answer(question):
    if question == "tool":
        fetch(question)
        return "A"
    return {"output": "A", "metadata": {"laughs": laughs(12)}}
"""


@pytest.mark.parametrize("where", ["metadata", "tool"])
def test_an_agents_value_of_shared_references_is_stored_not_hung_on(
    tmp_path: Path, where: str
) -> None:
    cases = [{"id": "c", "input": where, "expected_output": "A"}]
    folder = project(tmp_path / "p", SHARED_AGENT, cases, "retries: 0\ntimeout: 5\n")
    done = _run(folder, ".")
    assert done is not None, f"agenteval run hung for {GUARD_S} s on a shared-reference value"
    assert done.returncode == 0, done.stderr
