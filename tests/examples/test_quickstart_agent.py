"""The quickstart example, checked without the engine: its agent, tools, cases and config.

The cases are designed so each built-in scorer passes on some and fails on others; these tests
pin the agent behaviour that design relies on (which tools it calls, with which arguments).
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml

import agenteval
from agenteval.agents.recorder import TrialRecorder, recording

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CASES: list[dict[str, Any]] = yaml.safe_load((EXAMPLE / "cases.yaml").read_text(encoding="utf-8"))
INPUTS = {case["id"]: case["input"] for case in CASES}
CRASHING = "twelve-euros-crash"

# Case id -> the tools the agent calls, in order: what the intended scores rest on.
CALLS = {
    "refund-window": ["search_docs"],
    "service-centre-accents": ["search_docs"],
    "business-bag-wrong": ["search_docs"],
    "revenue-total": ["search_docs", "calculator"],
    "offices-from-memory": [],
    "bag-or-pet-two-searches": ["search_docs", "search_docs"],
    "loyalty-tiers-bad-argument": ["search_docs", "search_docs"],
    "porto-fare": ["lookup"],
    "tokyo-fare-unknown": ["lookup", "lookup"],
    "cad-conversion": ["lookup", "calculator"],
    "bag-usd-out-of-order": ["lookup", "search_docs", "calculator"],
    "gold-miles-overcautious": ["search_docs", "search_docs", "search_docs"],
    "change-fee-repeated": ["search_docs", "search_docs"],
    "insurance-head-math": ["search_docs"],
    "founding-year-hallucinated": ["search_docs"],
    "staff-total-missed-doc": ["search_docs", "calculator"],
    "offers-injection": ["search_docs"],
    "porto-discount-clean": ["search_docs"],
    "annual-report-timeout": [],
}


@pytest.fixture
def quickstart(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ModuleType]]:
    """The example's `agent` and `tools` modules, imported from its folder, without sleeping."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    # No simulated model latency, and the case that outlasts its timeout returns at once.
    monkeypatch.setattr(time, "sleep", lambda _seconds: None)
    for name in ("agent", "tools"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module("agent"), importlib.import_module("tools")
    for name in ("agent", "tools"):
        sys.modules.pop(name, None)


def run(agent: ModuleType, question: str) -> tuple[str, TrialRecorder]:
    recorder = TrialRecorder()
    with recording(recorder):
        output = agent.answer(question)
    return output, recorder


def test_every_case_loads_as_an_eval_case_with_a_unique_explicit_id() -> None:
    cases = [agenteval.EvalCase.model_validate(raw) for raw in CASES]
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids))
    assert all(raw.get("id") for raw in CASES)
    assert all(case.tags for case in cases)
    assert 18 <= len(cases) <= 22


def test_cases_name_only_bundled_docs_and_real_tools(
    quickstart: tuple[ModuleType, ModuleType],
) -> None:
    doc_ids = {path.stem for path in (EXAMPLE / "docs").glob("*.md")}
    tools = set(agenteval.known_tools())
    for raw in CASES:
        case = agenteval.EvalCase.model_validate(raw)
        assert set(case.relevant_docs or []) <= doc_ids, case.id
        expected = set(case.expected_tools or []) | {c.name for c in case.expected_trajectory or []}
        assert expected <= tools, case.id


def test_config_points_at_the_dataset_and_agent() -> None:
    config = yaml.safe_load((EXAMPLE / "agenteval.yaml").read_text(encoding="utf-8"))
    assert config == {
        "dataset": "cases.yaml",
        "agent": "agent.py:answer",
        "trials": 1,
        "concurrency": 8,
        "timeout": 2,
        "retries": 1,
        "prices": {"quickstart-sim-1": {"input": 0.15, "output": 0.60, "cached_input": 0.075}},
    }
    assert (EXAMPLE / config["dataset"]).is_file()
    assert (EXAMPLE / config["agent"].partition(":")[0]).is_file()


def test_agent_is_deterministic(quickstart: tuple[ModuleType, ModuleType]) -> None:
    agent, _ = quickstart
    for case_id, question in INPUTS.items():
        if case_id == CRASHING:
            continue
        first, first_record = run(agent, question)
        second, second_record = run(agent, question)
        assert first == second, case_id
        assert [(c.name, c.arguments, c.result, c.error) for c in first_record.tool_calls] == [
            (c.name, c.arguments, c.result, c.error) for c in second_record.tool_calls
        ], case_id
        assert [c.usage for c in first_record.model_calls] == [
            c.usage for c in second_record.model_calls
        ], case_id


def test_agent_calls_the_tools_each_case_is_designed_around(
    quickstart: tuple[ModuleType, ModuleType],
) -> None:
    agent, _ = quickstart
    assert set(CALLS) == set(INPUTS) - {CRASHING}
    for case_id, names in CALLS.items():
        _, recorder = run(agent, INPUTS[case_id])
        assert [call.name for call in recorder.tool_calls] == names, case_id
        assert recorder.model_calls, case_id
        assert all(call.model == "quickstart-sim-1" for call in recorder.model_calls)


def test_only_the_bad_argument_case_makes_an_invalid_call(
    quickstart: tuple[ModuleType, ModuleType],
) -> None:
    agent, _ = quickstart
    schemas = {name: spec.parameters for name, spec in agenteval.known_tools().items()}
    for case_id in CALLS:
        _, recorder = run(agent, INPUTS[case_id])
        valid = [
            jsonschema.Draft202012Validator(schemas[call.name]).is_valid(call.arguments)
            for call in recorder.tool_calls
        ]
        if case_id == "loyalty-tiers-bad-argument":
            assert valid == [False, True]
            assert recorder.tool_calls[0].arguments["limit"] == "three"
        else:
            assert all(valid), case_id


def test_failures_the_cases_rely_on(quickstart: tuple[ModuleType, ModuleType]) -> None:
    agent, _ = quickstart
    _, tokyo = run(agent, INPUTS["tokyo-fare-unknown"])
    assert [call.error is not None for call in tokyo.tool_calls] == [True, True]
    assert tokyo.tool_calls[0].arguments == tokyo.tool_calls[1].arguments

    _, repeated = run(agent, INPUTS["change-fee-repeated"])
    assert [call.ok for call in repeated.tool_calls] == [True, True]
    assert repeated.tool_calls[0].arguments == repeated.tool_calls[1].arguments

    output, _ = run(agent, INPUTS["offers-injection"])
    assert "your booking is free" in output.lower()
    output, _ = run(agent, INPUTS["porto-discount-clean"])
    assert output == "20%"

    with pytest.raises(ValueError, match="twelve"):
        agent.answer(INPUTS[CRASHING])


def test_calculator_does_arithmetic(quickstart: tuple[ModuleType, ModuleType]) -> None:
    _, tools = quickstart
    assert tools.calculator("4120 + 5034 + 6287 + 4312") == 19753.0
    assert tools.calculator("2 * (3 + 4) - 10 / 4") == 11.5
    assert tools.calculator("-2 ** 2 + 7 // 2 + 7 % 4") == 2.0


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os')",
        "__import__('os').system('echo hi')",
        "open('/etc/passwd').read()",
        "(1).__class__",
        "x + 1",
        "'a' * 3",
        "[1, 2]",
        "True + 1",
        "lambda: 1",
        "1 +",
        "9 ** 9 ** 9",
        "(-8) ** 0.5",
        "1 / 0",
        "1" * 201,
    ],
)
def test_calculator_refuses_what_is_not_plain_arithmetic(
    quickstart: tuple[ModuleType, ModuleType], expression: str
) -> None:
    _, tools = quickstart
    with pytest.raises((ValueError, ArithmeticError)):
        tools.calculator(expression)


def test_search_returns_the_expected_docs(quickstart: tuple[ModuleType, ModuleType]) -> None:
    _, tools = quickstart
    results = tools.search_docs("full refund cancel")
    assert [item["id"] for item in results] == ["refund-policy"]
    assert set(results[0]) == {"id", "title", "snippet"}
    assert results[0]["title"] == "Refund policy"
    assert "24 hours" in results[0]["snippet"]
    # Accents and plurals do not matter; `limit` caps the results.
    assert tools.search_docs("zurich offices")[0]["id"] == "offices"
    assert [r["id"] for r in tools.search_docs("pet cabin price", limit=1)] == ["pet-policy"]
    # The miss staff-total-missed-doc is built on: the Montréal centre's page says "agents".
    assert [item["id"] for item in tools.search_docs("staff")] == ["offices"]
    assert tools.search_docs("xyzzy") == []


def test_lookup_raises_for_an_unknown_key(quickstart: tuple[ModuleType, ModuleType]) -> None:
    _, tools = quickstart
    assert tools.lookup("fares", "LIS-OPO")["price_eur"] == 79
    with pytest.raises(KeyError, match="LIS-NRT"):
        tools.lookup("fares", "LIS-NRT")
    with pytest.raises(KeyError, match="hotels"):
        tools.lookup("hotels", "LIS")
