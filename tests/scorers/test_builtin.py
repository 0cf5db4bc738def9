"""The built-in scorers by name, and the default set a run applies."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from agenteval.agents.tools import ToolSpec
from agenteval.case import EvalCase
from agenteval.errors import ScorerError
from agenteval.score import Score
from agenteval.scorers.base import run_scorer, scorer_name
from agenteval.scorers.builtin import BUILTIN_SCORERS, builtin_scorer, default_scorers
from agenteval.scorers.tools import ToolArgumentsValid, ToolExecution
from agenteval.trace import ToolCall, Trial

SEED_ORDER = [
    "exact_match",
    "tool_selection",
    "tool_arguments_valid",
    "tool_execution",
    "trajectory_order",
    "step_efficiency",
    "redundant_calls",
    "tool_faithfulness",
    "retrieval_recall",
    "avoids_forbidden_text",
    "state_match",
]

TOOLS = {"search": ToolSpec(name="search", parameters={"type": "object"})}


def test_builtin_scorers_are_named_in_the_seed_order() -> None:
    assert list(BUILTIN_SCORERS) == SEED_ORDER


def test_each_class_is_a_frozen_dataclass_named_by_its_key() -> None:
    for name, cls in BUILTIN_SCORERS.items():
        scorer = cls()
        assert scorer.name == name
        assert 0.0 <= scorer.threshold <= 1.0
        assert dataclasses.is_dataclass(scorer)
        with pytest.raises(dataclasses.FrozenInstanceError):
            scorer.name = "other"  # type: ignore[misc]
        assert cls.__doc__


def test_default_scorers_make_one_of_each_in_order() -> None:
    scorers = default_scorers(TOOLS)
    assert [scorer_name(scorer) for scorer in scorers] == SEED_ORDER
    by_name = {scorer_name(scorer): scorer for scorer in scorers}
    arguments_valid = by_name["tool_arguments_valid"]
    execution = by_name["tool_execution"]
    assert isinstance(arguments_valid, ToolArgumentsValid)
    assert isinstance(execution, ToolExecution)
    assert arguments_valid.tools is TOOLS
    assert execution.tools is TOOLS


def test_default_scorers_work_without_tools() -> None:
    assert len(default_scorers()) == len(SEED_ORDER)


def test_builtin_scorer_builds_one_by_name() -> None:
    scorer = builtin_scorer("tool_arguments_valid", TOOLS)
    assert isinstance(scorer, ToolArgumentsValid)
    assert scorer.tools is TOOLS


def test_an_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(ScorerError) as raised:
        builtin_scorer("exact_mach")
    assert raised.value.message == "no built-in scorer named 'exact_mach'"
    assert raised.value.hint == "did you mean 'exact_match'?"


def test_an_unknown_name_far_from_any_lists_them_all() -> None:
    with pytest.raises(ScorerError) as raised:
        builtin_scorer("zzz")
    assert raised.value.hint is not None
    assert raised.value.hint.startswith("built-in scorers: exact_match, tool_selection")


def test_every_scorer_gives_a_named_score_for_a_bare_case() -> None:
    # A case that expects nothing: every scorer says why it did not apply, none says 0 or 1.
    case = EvalCase(input="Hello?")
    trial = Trial(output="Hi.", tool_calls=[ToolCall(name="search", result="x")])
    for scorer in default_scorers(TOOLS):
        score = scorer(case, trial)
        assert isinstance(score, Score)
        assert score.name == scorer_name(scorer)
        if scorer_name(scorer) in {
            "tool_arguments_valid",
            "tool_execution",
            "redundant_calls",
            "tool_faithfulness",
        }:
            continue  # these look at the calls themselves
        assert score.value is None, score.name
        assert score.reason, score.name


def test_scores_come_through_run_scorer_unchanged() -> None:
    case = EvalCase(input="?", expected_output="19,753")
    trial = Trial(output="19753.0")
    score = asyncio.run(run_scorer(builtin_scorer("exact_match"), case, trial))
    assert (score.name, score.value, score.passed, score.error) == (
        "exact_match",
        1.0,
        True,
        None,
    )
