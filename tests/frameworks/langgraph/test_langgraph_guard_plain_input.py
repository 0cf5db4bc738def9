"""A mocked LangChain tool called from the agent's own code with a plain string input
(`tool.invoke("Oslo")`, as LangChain allows for a one-argument tool) is never run live: with no
argument names a `when` cannot match, so the guard refuses the call and fails the trial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenteval import EvalCase, FailureCause, evaluate

RAN: list[str] = []


def test_a_plain_input_call_of_a_mocked_tool_never_runs_live(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """The weather of a city."""
        RAN.append(city)
        return "LIVE"

    def lookup(state: dict[str, Any]) -> AIMessage:
        return AIMessage(content=str(get_weather.invoke(str(state["messages"][-1].content))))

    mocks = {"get_weather": [{"when": {"city": "Oslo"}, "error": "UnknownCityError: no"}]}
    RAN.clear()
    run = evaluate(
        RunnableLambda(lookup),
        [EvalCase(id="c", input="Oslo", tool_mocks=mocks)],
        store=tmp_path / "r.db",
    )
    (result,) = run.results
    assert RAN == []
    assert result.trial.failure is not None
    assert result.trial.failure.cause is FailureCause.UNMOCKED_TOOL
    assert "plain input" in result.trial.failure.message
