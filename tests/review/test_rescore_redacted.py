"""Rescoring from the store compares redacted text: two different secrets of the same shape
become the same `sk-proj-[REDACTED]`, so a wrong answer matches the expected one.

A case asks which key to configure and expects key A; the agent answers with key B. The live
run fails the trial. `agenteval rescore` reads the stored case and trial, where both keys were
masked to `sk-proj-[REDACTED]`, and passes it (exit 0): the stored verdict is now a pass. The
README says a rescore reads the stored, redacted values (for tool arguments); a scorer that
compares redacted text with redacted text cannot tell a match, and must say so (no score, or
the live verdict kept), never pass.

The same holds for a judge, in a live run too: everything sent to it is redacted, so it sees
the expected and the actual key as the same text.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.review.cli import agenteval, project

KEY_A = "sk-proj-Q7vX2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0HxVbT"
KEY_B = "sk-proj-ZZZZ2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0Hxyyy"

AGENT = f"""
def answer(question):
    return "configure {KEY_B}"
"""


def test_rescore_never_turns_a_wrong_secret_into_a_pass(tmp_path: Path) -> None:
    cases = [{"id": "which-key", "input": "which key?", "expected_output": f"configure {KEY_A}"}]
    folder = project(tmp_path / "p", AGENT, cases, "retries: 0\n")
    live = agenteval(folder, "run", ".", "--store", "runs.db", "--json", "live.json")
    assert live.returncode == 0, live.stderr
    (result,) = json.loads((folder / "live.json").read_text())["results"]
    assert result["scores"]["exact_match"]["passed"] is False  # the live verdict: wrong key
    again = agenteval(folder, "rescore", "latest", "--store", "runs.db", "--json", "again.json")
    assert again.returncode == 0, again.stderr
    (rescored,) = json.loads((folder / "again.json").read_text())["results"]
    assert rescored["scores"]["exact_match"]["passed"] is not True
    # The live verdict is kept (a failure), saying why: the store cannot tell the keys apart.
    assert rescored["scores"]["exact_match"]["passed"] is False
    assert (
        "cannot be decided from the store"
        in rescored["scores"]["exact_match"]["details"]["agenteval.kept"]
    )
