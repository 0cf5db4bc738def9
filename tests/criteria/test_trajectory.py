"""TrajectoryMatchCriterion, NodeOrderMatchCriterion and ToolNameMatchCriterion."""

from __future__ import annotations

import pytest

from agenteval import (
    CriterionConfig,
    EvalCase,
    ExecutionResult,
    Invocation,
    MatchType,
    NodeOrderMatchCriterion,
    ToolCall,
    ToolNameMatchCriterion,
    TrajectoryMatchCriterion,
)


def calls(*specs: str | tuple[str, dict[str, object]]) -> list[ToolCall]:
    return [
        ToolCall(name=s) if isinstance(s, str) else ToolCall(name=s[0], args=s[1]) for s in specs
    ]


def expecting(*turns: list[ToolCall]) -> EvalCase:
    return EvalCase(conversation=[Invocation(expected_tool_trajectory=t) for t in turns])


def trajectory(match_type: MatchType, check_args: bool = False) -> TrajectoryMatchCriterion:
    return TrajectoryMatchCriterion(
        config=CriterionConfig.trajectory(match_type=match_type, check_args=check_args)
    )


def ran(*specs: str | tuple[str, dict[str, object]]) -> ExecutionResult:
    return ExecutionResult(tool_calls=calls(*specs))


SEARCH_LOOKUP = expecting(calls("search", "lookup"))


@pytest.mark.parametrize(
    ("match_type", "actual", "score"),
    [
        (MatchType.EXACT, ("search", "lookup"), 1.0),
        (MatchType.EXACT, ("search", "lookup", "extra"), 2 / 3),  # an extra call costs
        (MatchType.EXACT, ("lookup", "search"), 0.0),  # moved
        (MatchType.EXACT, ("search",), 0.5),  # missing
        (MatchType.IN_ORDER, ("search", "extra", "lookup"), 1.0),
        (MatchType.IN_ORDER, ("lookup", "search"), 0.5),
        (MatchType.ANY_ORDER, ("lookup", "extra", "search"), 1.0),
        (MatchType.ANY_ORDER, ("lookup",), 0.5),
    ],
)
async def test_match_types(match_type: MatchType, actual: tuple[str, ...], score: float) -> None:
    result = await trajectory(match_type).evaluate(ran(*actual), SEARCH_LOOKUP)
    assert result.criterion == "tool_trajectory_avg_score"
    assert result.score == pytest.approx(score)


async def test_default_is_exact_without_arguments_at_threshold_0_8() -> None:
    criterion = TrajectoryMatchCriterion()
    assert criterion.config.match_type is MatchType.EXACT
    assert criterion.config.check_args is False
    assert criterion.threshold == 0.8
    result = await criterion.evaluate(ran(("search", {"q": "a"}), "lookup"), SEARCH_LOOKUP)
    assert (result.score, result.passed) == (1.0, True)


async def test_check_args_needs_equal_arguments_except_for_an_expected_call_without_any() -> None:
    expected = expecting(calls(("search", {"q": "refund", "limit": 3}), ("lookup", {})))
    criterion = trajectory(MatchType.IN_ORDER, check_args=True)
    exact = ran(("search", {"limit": 3.0, "q": "refund"}), ("lookup", {"id": 7}))
    assert (await criterion.evaluate(exact, expected)).score == 1.0
    more = ran(("search", {"q": "refund", "limit": 3, "page": 2}), ("lookup", {"id": 7}))
    result = await criterion.evaluate(more, expected)
    assert result.score == 0.5
    assert result.details["missing"] == ["search(q='refund', limit=3)"]


async def test_any_order_with_check_args_finds_the_pairing_greedy_misses() -> None:
    expected = expecting(calls(("search", {}), ("search", {"q": "x"})))
    actual = ran(("search", {"q": "x"}), ("search", {"q": "y"}))
    result = await trajectory(MatchType.ANY_ORDER, check_args=True).evaluate(actual, expected)
    assert result.score == 1.0
    assert result.details["pairs"] == [[0, 1], [1, 0]]


async def test_in_order_partial_score_is_the_best_achievable() -> None:
    expected = expecting(calls("charge", "search", "lookup"))
    result = await trajectory(MatchType.IN_ORDER).evaluate(
        ran("search", "lookup", "charge"), expected
    )
    assert result.score == pytest.approx(2 / 3)
    assert result.details["missing"] == ["charge"]


@pytest.mark.parametrize(
    ("match_type", "called", "score"),
    [
        (MatchType.EXACT, False, 1.0),
        (MatchType.EXACT, True, 0.0),
        (MatchType.IN_ORDER, True, 1.0),
        (MatchType.ANY_ORDER, True, 1.0),
    ],
)
async def test_no_expected_tools(match_type: MatchType, called: bool, score: float) -> None:
    actual = ran("search") if called else ran()
    result = await trajectory(match_type).evaluate(actual, expecting(calls()))
    assert result.score == score


async def test_expected_calls_are_concatenated_across_turns() -> None:
    expected = expecting(calls("search"), calls(), calls("book", "confirm"))
    result = await trajectory(MatchType.EXACT).evaluate(ran("search", "book", "confirm"), expected)
    assert result.score == 1.0
    assert [c["name"] for c in result.details["expected"]] == ["search", "book", "confirm"]


async def test_a_single_turn_case_is_read_from_expected_trajectory() -> None:
    expected = EvalCase(
        input="q", expected_trajectory=["search", {"name": "book", "arguments": {"id": 1}}]
    )
    criterion = trajectory(MatchType.EXACT, check_args=True)
    assert (await criterion.evaluate(ran("search", ("book", {"id": 1})), expected)).score == 1.0
    assert (await criterion.evaluate(ran("search", ("book", {"id": 2})), expected)).score == 0.5


async def test_a_turn_stating_no_calls_is_read_over_expected_trajectory() -> None:
    expected = EvalCase(
        expected_trajectory=["search"],
        conversation=[Invocation(input="hi", expected_tool_trajectory=[])],
    )
    assert (await trajectory(MatchType.EXACT).evaluate(ran(), expected)).score == 1.0


# --- node order ----------------------------------------------------------------------------------


async def test_node_order_matches_visited_nodes() -> None:
    expected = EvalCase(
        conversation=[
            Invocation(expected_node_order=["router", "search"]),
            Invocation(expected_node_order=["answer"]),
        ]
    )
    visits = ExecutionResult(node_visits=["router", "search", "retry", "answer"])
    in_order = NodeOrderMatchCriterion(
        config=CriterionConfig.node_order(threshold=1.0, match_type=MatchType.IN_ORDER)
    )
    result = await in_order.evaluate(visits, expected)
    assert (result.criterion, result.score, result.passed) == ("node_order_score", 1.0, True)
    exact = await NodeOrderMatchCriterion().evaluate(visits, expected)
    assert exact.score == pytest.approx(2 / 4)
    assert exact.details["extra"] == ["retry", "answer"]


# --- tool names ----------------------------------------------------------------------------------


async def test_tool_names_are_a_multiset() -> None:
    expected = expecting(calls("search", "search", "book"))
    criterion = ToolNameMatchCriterion()
    result = await criterion.evaluate(ran("book", "search", ("search", {"q": 1})), expected)
    assert (result.criterion, result.score) == ("tool_name_match_score", 1.0)
    result = await criterion.evaluate(ran("book", "search", "other"), expected)
    assert result.score == pytest.approx(2 / 3)
    assert result.details["missing"] == {"search": 1}


async def test_tool_names_with_nothing_expected() -> None:
    criterion = ToolNameMatchCriterion()
    assert (await criterion.evaluate(ran(), expecting(calls()))).score == 1.0
    assert (await criterion.evaluate(ran("search"), expecting(calls()))).score == 0.5


async def test_tool_names_fall_back_on_expected_tools() -> None:
    expected = EvalCase(input="q", expected_tools=["search", "calculator"])
    assert (await ToolNameMatchCriterion().evaluate(ran("search"), expected)).score == 0.5
