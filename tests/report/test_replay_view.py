"""A replaying run says in its HTML report, as in the terminal summary, which stored run's tool
results it replayed and how; a run that replayed nothing says nothing of it."""

from __future__ import annotations

from pathlib import Path

import agenteval
from agenteval import EvalCase

CALLS: list[str] = []


@agenteval.tool
def lookup_stock(sku: str) -> dict[str, int]:
    CALLS.append(sku)
    return {"in_stock": 3}


def stock_agent(prompt: str) -> str:
    return f"{lookup_stock(prompt)['in_stock']} left"


def test_the_report_names_the_replayed_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id="a", input="SKU-1", expected_output="3 left")]
    recorded = agenteval.evaluate(stock_agent, cases, store=store, target="stock")
    CALLS.clear()
    replayed = agenteval.evaluate(
        stock_agent,
        cases,
        store=store,
        target="stock",
        replay_tools=recorded.info.run_id,
        replay_match="any-order",
    )
    assert CALLS == []  # replayed: the tool never ran
    page = tmp_path / "replayed.html"
    replayed.to_html(page)
    text = page.read_text()
    assert f"tool calls replayed from run {recorded.info.run_id} (any order;" in text
    plain = tmp_path / "recorded.html"
    recorded.to_html(plain)
    assert "tool calls replayed from run" not in plain.read_text()
