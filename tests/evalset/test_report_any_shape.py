"""`EvalReport.to_json()` of an evaluation whose agent recorded deep, circular or secret data:
written, cut as the store cuts it, with values under secret-named keys masked, never a
serialization error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agenteval import EvalCase, ToolCall, Trial
from agenteval.evalset import AgentEvaluator
from agenteval.jsonsafe import CIRCULAR, DEEP
from agenteval.redaction import REDACTED

PASSWORD = "correct horse battery staple"


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def agent(question: Any) -> Trial:
    loop: dict[str, Any] = {"plan": "Pro"}
    loop["self"] = loop
    return Trial(
        output="You are on the Pro plan.",
        tool_calls=[
            ToolCall(
                name="login",
                arguments={"user": "ada", "password": PASSWORD},
                result={"session_cookie": "plainwords123", "deep": nested(3_000)},
            ),
            ToolCall(name="plan", result=loop),
        ],
    )


async def test_to_json_writes_deep_circular_and_secret_data_safely(tmp_path: Path) -> None:
    case = EvalCase(id="plan", input="What is my plan?", expected_output="You are on the Pro plan.")
    report = await AgentEvaluator(agent, store=tmp_path / "runs.db").evaluate([case])
    text = json.dumps(report.to_json())
    assert PASSWORD not in text and "plainwords123" not in text
    assert REDACTED in text and DEEP in text and CIRCULAR in text
    assert "You are on the Pro plan." in text
