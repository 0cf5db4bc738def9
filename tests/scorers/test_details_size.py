"""A score's details never copy the whole answer, a tool's arguments or its error: a 10 MB answer
is stored once (in the trial), not twice; details carry short excerpts and counts."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import agenteval
from agenteval import EvalCase
from agenteval.criteria import ExactMatchCriterion
from agenteval.scorers.answer import ExactMatch
from agenteval.scorers.grounding import ToolFaithfulness
from agenteval.scorers.tools import RedundantCalls, ToolExecution
from agenteval.trace import ToolCall, Trial

MB = 1_000_000
BIG = "word " * (2 * MB)  # 10 MB of text


@agenteval.tool
def fetch(query: str) -> str:
    """Returns a small page."""
    return "a small page"


def big_agent(question: str) -> str:
    fetch("x" * MB)
    fetch("x" * MB)  # the same 1 MB call again: redundant_calls reports it
    return BIG


def row_sizes(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        sizes = {"trial": conn.execute("SELECT max(length(data)) FROM trials").fetchone()[0]}
        for name, size in conn.execute("SELECT name, length(data) FROM scores"):
            sizes[name] = size
    return sizes


def test_a_10_mb_answer_is_stored_once(tmp_path: Path) -> None:
    case = EvalCase(id="c", input="q", expected_output="Paris", expected_tools=["fetch"])
    agenteval.evaluate(big_agent, [case], store=tmp_path / "s.db")
    sizes = row_sizes(tmp_path / "s.db")
    assert 10 * MB <= sizes.pop("trial") < 13 * MB  # the answer and the 2 MB of arguments
    assert "exact_match" in sizes and "redundant_calls" in sizes
    assert all(size < 4000 for size in sizes.values()), sizes


def letters(number: int) -> str:
    """A distinct word of letters only for each number: `baaa`, `caaa`, ..."""
    word = ""
    for _ in range(4):
        number, digit = divmod(number, 26)
        word += chr(ord("a") + digit)
    return "x" + word


def details_size(details: dict[str, Any]) -> int:
    return len(repr(details))


def test_each_built_in_keeps_its_details_short() -> None:
    case = EvalCase(id="c", input="q", expected_output="x" * MB)
    trial = Trial(output=BIG)
    exact = ExactMatch()(case, trial)
    assert exact.details["answer"] == BIG[:200] + "…"
    assert exact.details["answer_chars"] == len(BIG)
    assert exact.details["expected"] == "x" * 200 + "…"
    assert details_size(exact.details) < 1000

    huge = {"text": "y" * MB}
    calls = [ToolCall(name="t", arguments=huge), ToolCall(name="t", arguments=huge)]
    redundant = RedundantCalls()(case, Trial(output="a", tool_calls=calls))
    assert redundant.passed is False and details_size(redundant.details) < 1000

    failing = [ToolCall(name="t", error="E: " + "z" * MB)]
    execution = ToolExecution()(case, Trial(output="a", tool_calls=failing))
    assert execution.passed is False and details_size(execution.details) < 1000

    words = " ".join(letters(i) for i in range(200_000))
    grounded = ToolFaithfulness()(
        case, Trial(output=words, tool_calls=[ToolCall(name="t", result="nothing here")])
    )
    assert details_size(grounded.details) < 2000
    assert grounded.details["checked"] == 200_000

    criterion = ExactMatchCriterion().evaluate_sync(Trial(output=BIG), case)
    assert details_size(criterion.details) < 2000
