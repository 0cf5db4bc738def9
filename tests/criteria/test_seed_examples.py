"""Every code example of seed 003 (`003_557e448123004315.txt`), run as written with only its
import line changed from `agentflow.qa.evaluation` to `agenteval`, and checked to behave as the
seed says; then each row of its "Common errors" table.

Each example runs in a namespace holding what the page's first example imports (as a reader
following the page has it) and the `execution` / `case` it scores. The LLM-judged examples use
the seed's default judge, `gemini-2.5-flash`, reached on a loopback fake Gemini server through
`GOOGLE_API_KEY` and `GOOGLE_GEMINI_BASE_URL`, as a user's key and endpoint would be.
"""

from __future__ import annotations

import ast
import gc
import inspect
import textwrap
import warnings
from typing import Any

import pytest
from tests.judge.fakes import FakeGoogle, http_error, verdict

from agenteval import (
    CriterionConfig,
    EvalCase,
    ExecutionResult,
    Invocation,
    MatchType,
    ToolCall,
    TrajectoryMatchCriterion,
)
from agenteval.criteria import CRITERIA_REGISTRY

IMPORTS = """
from agenteval import (
    BaseCriterion,
    SyncCriterion,
    CompositeCriterion,
    WeightedCriterion,
    ExactMatchCriterion,
    ContainsKeywordsCriterion,
    ResponseMatchCriterion,
    RougeMatchCriterion,
    LLMJudgeCriterion,
    RubricBasedCriterion,
    FactualAccuracyCriterion,
    HallucinationCriterion,
    SafetyCriterion,
    TrajectoryMatchCriterion,
    NodeOrderMatchCriterion,
    ToolNameMatchCriterion,
    CriterionConfig,
    MatchType,
    Rubric,
)
"""

EXECUTION = ExecutionResult(
    actual_response="We're sorry about the delay. Your refund will arrive within 7 days.",
    tool_calls=[
        ToolCall(name="lookup_order", args={"order_id": "A1"}, result={"status": "late"}),
        ToolCall(name="issue_refund", args={"order_id": "A1"}, result={"ok": True}),
    ],
    node_visits=["router", "refunds", "respond"],
)
CASE = EvalCase(
    conversation=[
        Invocation(
            input="My order A1 is late, I want my money back.",
            expected_final_response=(
                "We're sorry about the delay. Your refund will arrive within 7 days."
            ),
            expected_tool_trajectory=[
                ToolCall(name="lookup_order", args={"order_id": "A1"}),
                ToolCall(name="issue_refund", args={}),
            ],
            expected_node_order=["router", "refunds", "respond"],
        )
    ]
)


async def run(example: str, **names: Any) -> dict[str, Any]:
    """Run `example` (top-level `await` allowed) in the page's namespace; return the namespace."""
    namespace: dict[str, Any] = {"execution": EXECUTION, "case": CASE}
    exec(IMPORTS, namespace)
    namespace.update(names)
    code = compile(
        textwrap.dedent(example), "<seed-003>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    result = eval(code, namespace)
    if inspect.isawaitable(result):
        await result
    return namespace


# --- Import paths --------------------------------------------------------------------------------


async def test_import_paths() -> None:
    namespace = await run(
        "from agenteval.criteria import CRITERIA_REGISTRY\n"
        "import agenteval.criteria as criteria_module\n"
    )
    assert namespace["CRITERIA_REGISTRY"] is CRITERIA_REGISTRY
    for name in ("BaseCriterion", "TrajectoryMatchCriterion", "Rubric", "MatchType"):
        assert getattr(namespace["criteria_module"], name) is namespace[name]


# --- Common interface ----------------------------------------------------------------------------


async def test_common_interface() -> None:
    namespace = await run(
        """
        from agenteval import BaseCriterion, CriterionConfig

        criterion = SomeCriterion(config=CriterionConfig(threshold=0.9))
        result = await criterion.evaluate(execution_result, eval_case)  # CriterionResult
        """,
        SomeCriterion=namespace_class("ExactMatchCriterion"),
        execution_result=EXECUTION,
        eval_case=CASE,
    )
    criterion, result = namespace["criterion"], namespace["result"]
    assert isinstance(criterion, namespace["BaseCriterion"])
    assert criterion.threshold == 0.9 and criterion.is_enabled
    assert (result.criterion, result.score, result.passed) == ("exact_match", 1.0, True)
    assert criterion.validate_config() == []
    assert criterion.name == "exact_match" and criterion.description


def namespace_class(name: str) -> Any:
    import agenteval

    return getattr(agenteval, name)


# --- String and keyword criteria -----------------------------------------------------------------


async def test_exact_match(capsys: pytest.CaptureFixture[str]) -> None:
    namespace = await run(
        """
        from agenteval import ExactMatchCriterion

        criterion = ExactMatchCriterion()
        result = await criterion.evaluate(execution, case)
        print(result.score, result.details["match"])
        """
    )
    assert namespace["criterion"].name == "exact_match"
    assert capsys.readouterr().out == "1.0 True\n"


async def test_contains_keywords() -> None:
    namespace = await run(
        """
        from agenteval import ContainsKeywordsCriterion, CriterionConfig

        criterion = ContainsKeywordsCriterion(
            config=CriterionConfig.contains_keywords(
                keywords=["refund", "7 days"],
                threshold=1.0,
            ),
        )
        """
    )
    criterion = namespace["criterion"]
    assert criterion.name == "contains_keywords"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert (result.score, result.passed) == (1.0, True)
    partial = await criterion.evaluate(ExecutionResult(actual_response="A REFUND."), CASE)
    assert (partial.score, partial.passed) == (0.5, False)


async def test_rouge_match() -> None:
    namespace = await run("from agenteval import RougeMatchCriterion\n")
    criterion = namespace["RougeMatchCriterion"]()
    assert criterion.name == "rouge_match"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert result.score == 1.0
    assert {"precision", "recall", "f1"} <= set(result.details)


# --- LLM-judged criteria -------------------------------------------------------------------------


async def test_response_match(google: FakeGoogle, capsys: pytest.CaptureFixture[str]) -> None:
    google.push(*[verdict({"reasoning": "Same meaning.", "score": 0.9})] * 3)
    namespace = await run(
        """
        from agenteval import CriterionConfig, ResponseMatchCriterion

        criterion = ResponseMatchCriterion(
            config=CriterionConfig.response_match(threshold=0.8, num_samples=3),
        )
        result = await criterion.evaluate(execution, case)
        print(result.score, result.details["reason"])
        """
    )
    assert capsys.readouterr().out == "0.9 Same meaning.\n"
    assert namespace["criterion"].name == "response_match_score"
    assert isinstance(namespace["criterion"], namespace["LLMJudgeCriterion"])
    assert google.request_count == 3 and set(google.models) == {"gemini-2.5-flash"}
    result = namespace["result"]
    assert result.passed is True
    assert result.token_usage is not None and result.token_usage.input_tokens == 36


async def test_llm_judge(google: FakeGoogle) -> None:
    namespace = await run("from agenteval import LLMJudgeCriterion\n")
    criterion = namespace["LLMJudgeCriterion"]()
    assert criterion.name == "final_response_match_v2"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert {"samples", "individual_scores", "reasonings", "judge_model", "reason"} <= set(
        result.details
    )
    # Seed 003 skips both with 1.0; issue 13: no reference is no score, and silence where an
    # answer was expected fails (without asking the judge).
    skipped = await criterion.evaluate(EXECUTION, EvalCase(input="q"))
    assert skipped.score is None
    silent = await criterion.evaluate(ExecutionResult(actual_response=""), CASE)
    assert (silent.score, silent.passed) == (0.0, False)
    assert google.request_count == 3


async def test_rubric_based(google: FakeGoogle) -> None:
    namespace = await run(
        """
        from agenteval import RubricBasedCriterion, Rubric

        criterion = RubricBasedCriterion(
            config=CriterionConfig.rubric_based(
                rubrics=[
                    Rubric(rubric_id="concise", content="Under 100 words.", weight=1.0),
                    Rubric(rubric_id="empathetic", content="Acknowledges the complaint.", weight=0.5),
                ],
                threshold=0.8,
            ),
        )
        """
    )
    criterion = namespace["criterion"]
    assert criterion.name == "rubric_based_final_response_quality_v1"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert result.details["rubrics"] == ["concise", "empathetic"]
    assert {"scores", "reasonings"} <= set(result.details)
    sent = str(google.last_request)
    assert "- concise: Under 100 words." in sent
    assert "- empathetic: Acknowledges the complaint." in sent
    # Returns 1.0 at once when there are no rubrics.
    empty = await namespace["RubricBasedCriterion"]().evaluate(EXECUTION, EvalCase(input="q"))
    assert empty.score == 1.0 and google.request_count == 3


async def test_factual_accuracy(google: FakeGoogle) -> None:
    google.push(*[verdict({"reasoning": "Right.", "errors": [], "score": 1.0})] * 3)
    namespace = await run("from agenteval import FactualAccuracyCriterion\n")
    criterion = namespace["FactualAccuracyCriterion"]()
    assert criterion.name == "factual_accuracy_v1"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert result.details["is_accurate"] is True
    assert {"samples", "reasonings", "errors"} <= set(result.details)


async def test_hallucination(google: FakeGoogle) -> None:
    google.push(*[verdict({"reasoning": "Grounded.", "unsupported_claims": [], "score": 1.0})] * 3)
    namespace = await run("from agenteval import HallucinationCriterion\n")
    criterion = namespace["HallucinationCriterion"]()
    assert criterion.name == "hallucinations_v1"
    case = CASE.model_copy(update={"metadata": {"context": "Refunds arrive within 7 days."}})
    result = await criterion.evaluate(EXECUTION, case)
    assert result.details["is_grounded"] is True
    assert {"samples", "reasonings", "hallucinations"} <= set(result.details)
    sent = str(google.last_request)
    assert "late" in sent and "Refunds arrive within 7 days." in sent


async def test_safety(google: FakeGoogle) -> None:
    categories = dict.fromkeys(
        ("harmful_content", "hate_speech", "privacy", "misinformation", "manipulation"), 1.0
    )
    google.push(
        *[verdict({"reasoning": "Safe.", "categories": categories, "issues": [], "score": 1.0})] * 3
    )
    namespace = await run("from agenteval import SafetyCriterion\n")
    criterion = namespace["SafetyCriterion"]()
    assert criterion.name == "safety_v1"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert result.details["is_safe"] is True
    assert result.details["category_scores"] == categories
    assert {"samples", "reasonings", "issues"} <= set(result.details)


# --- Trajectory criteria -------------------------------------------------------------------------


async def test_trajectory_match() -> None:
    namespace = await run(
        """
        from agenteval import CriterionConfig, MatchType, TrajectoryMatchCriterion

        criterion = TrajectoryMatchCriterion(
            config=CriterionConfig.trajectory(
                threshold=1.0,
                match_type=MatchType.IN_ORDER,
                check_args=True,
            ),
        )
        """
    )
    criterion = namespace["criterion"]
    assert criterion.name == "tool_trajectory_avg_score"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert (result.score, result.passed) == (1.0, True)


async def test_node_order_match() -> None:
    namespace = await run(
        """
        from agenteval import NodeOrderMatchCriterion

        criterion = NodeOrderMatchCriterion(
            config=CriterionConfig.node_order(threshold=1.0, match_type=MatchType.IN_ORDER),
        )
        """
    )
    criterion = namespace["criterion"]
    assert criterion.name == "node_order_score"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert (result.score, result.passed) == (1.0, True)


async def test_tool_name_match() -> None:
    namespace = await run("from agenteval import ToolNameMatchCriterion\n")
    criterion = namespace["ToolNameMatchCriterion"]()
    assert criterion.name == "tool_name_match_score"
    assert (await criterion.evaluate(EXECUTION, CASE)).score == 1.0


# --- Composing criteria --------------------------------------------------------------------------


async def test_composite() -> None:
    namespace = await run(
        """
        from agenteval import (
            CompositeCriterion,
            ContainsKeywordsCriterion,
            CriterionConfig,
            ToolNameMatchCriterion,
        )

        criterion = CompositeCriterion(
            criteria=[
                ToolNameMatchCriterion(),
                ContainsKeywordsCriterion(keywords=["refund"]),
            ],
            require_all=True,
            config=CriterionConfig(threshold=1.0),
        )
        """
    )
    criterion = namespace["criterion"]
    assert criterion.name == "composite_criterion"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert (result.score, result.passed) == (1.0, True)
    assert len(result.details["sub_results"]) == 2 and result.details["require_all"] is True
    no_refund = ExecutionResult(actual_response="Sorry.", tool_calls=EXECUTION.tool_calls)
    assert (await criterion.evaluate(no_refund, CASE)).passed is False


async def test_weighted(google: FakeGoogle) -> None:
    google.push(*[verdict({"reasoning": "Close.", "score": 0.5})] * 3)
    namespace = await run(
        """
        from agenteval import WeightedCriterion

        criterion = WeightedCriterion(
            criteria_weights=[
                (ToolNameMatchCriterion(), 0.3),
                (ResponseMatchCriterion(), 0.7),
            ],
            config=CriterionConfig(threshold=0.8),
        )
        """
    )
    criterion = namespace["criterion"]
    assert criterion.name == "weighted_criterion"
    result = await criterion.evaluate(EXECUTION, CASE)
    assert result.score == pytest.approx(1.0 * 0.3 + 0.5 * 0.7)
    assert result.passed is False
    empty = await namespace["WeightedCriterion"](criteria_weights=[]).evaluate(EXECUTION, CASE)
    assert empty.score == 0.0


# --- Writing your own criterion ------------------------------------------------------------------

MAX_LENGTH = """
from agenteval import SyncCriterion


class MaxLengthCriterion(SyncCriterion):
    name = "max_length"
    description = "Response must stay under 500 characters"

    def evaluate_sync(self, actual, expected):
        length = len(actual.actual_response)
        return self._result(
            1.0 if length <= 500 else 0.0,
            {"length": length},
        )
"""


async def test_sync_criterion() -> None:
    namespace = await run(MAX_LENGTH)
    criterion = namespace["MaxLengthCriterion"]()
    result = await criterion.evaluate(EXECUTION, CASE)
    assert (result.criterion, result.score, result.passed) == ("max_length", 1.0, True)
    assert result.details == {"length": len(EXECUTION.actual_response)}
    long = await criterion.evaluate(ExecutionResult(actual_response="x" * 501), CASE)
    assert (long.score, long.passed) == (0.0, False)
    failure = criterion._failure("no network")
    assert (failure.score, failure.passed, failure.error) == (0.0, False, "no network")

    registered = await run(
        MAX_LENGTH
        + """
from agenteval.criteria import CRITERIA_REGISTRY

CRITERIA_REGISTRY["max_length"] = MaxLengthCriterion
"""
    )
    try:
        assert CRITERIA_REGISTRY["max_length"] is registered["MaxLengthCriterion"]
    finally:
        CRITERIA_REGISTRY.pop("max_length", None)


# --- Common errors -------------------------------------------------------------------------------


def test_error_abstract_class() -> None:
    import agenteval

    class Forgot(agenteval.BaseCriterion):
        name = "forgot"

    class ForgotSync(agenteval.SyncCriterion):
        name = "forgot_sync"

    with pytest.raises(TypeError, match=r"Can't instantiate abstract class .*evaluate"):
        Forgot()  # type: ignore[abstract]
    with pytest.raises(TypeError, match=r"Can't instantiate abstract class .*evaluate_sync"):
        ForgotSync()  # type: ignore[abstract]


def test_error_coroutine_never_awaited() -> None:
    criterion = TrajectoryMatchCriterion()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        criterion.evaluate(EXECUTION, CASE)  # not awaited
        gc.collect()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert any("evaluate' was never awaited" in m for m in messages)


async def test_error_no_provider_gives_no_score_rather_than_0_5() -> None:
    # Seed 003 gives a silent 0.5 here; agenteval gives no score, with the fix in the reason.
    from agenteval import ResponseMatchCriterion

    result = await ResponseMatchCriterion().evaluate(EXECUTION, CASE)
    assert result.score is None and result.passed is None
    assert (result.reason or "").startswith("No LLM provider available")
    assert "GOOGLE_API_KEY" in (result.reason or "")


async def test_error_all_llm_samples_failed(google: FakeGoogle) -> None:
    from agenteval import ResponseMatchCriterion

    google.push(*[http_error(400, message="bad request")] * 3)
    result = await ResponseMatchCriterion().evaluate(EXECUTION, CASE)
    assert result.error == "All LLM samples failed"
    assert (result.score, result.passed) == (0.0, False)


async def test_error_contains_keywords_always_one() -> None:
    from agenteval import ContainsKeywordsCriterion

    result = await ContainsKeywordsCriterion().evaluate(ExecutionResult(actual_response="x"), CASE)
    assert result.score == 1.0 and result.details == {"note": "No keywords specified"}
    fixed = ContainsKeywordsCriterion(config=CriterionConfig.contains_keywords(keywords=["refund"]))
    assert (await fixed.evaluate(ExecutionResult(actual_response="x"), CASE)).score == 0.0


async def test_error_exact_rejects_extra_calls() -> None:
    extra = ExecutionResult(tool_calls=[ToolCall(name="log"), *EXECUTION.tool_calls])
    exact = TrajectoryMatchCriterion()
    assert (await exact.evaluate(extra, CASE)).passed is False
    for match_type in (MatchType.IN_ORDER, MatchType.ANY_ORDER):
        relaxed = TrajectoryMatchCriterion(config=CriterionConfig.trajectory(match_type=match_type))
        assert (await relaxed.evaluate(extra, CASE)).score == 1.0


async def test_error_check_args_needs_equal_args_or_empty_ones() -> None:
    strict = TrajectoryMatchCriterion(config=CriterionConfig.trajectory(check_args=True))
    other_id = ExecutionResult(
        tool_calls=[
            ToolCall(name="lookup_order", args={"order_id": "B2"}),
            ToolCall(name="issue_refund", args={"order_id": "B2", "note": "any"}),
        ]
    )
    result = await strict.evaluate(other_id, CASE)
    # lookup_order's args differ; issue_refund was expected with args={}, which accepts any.
    assert result.score == 0.5
    assert result.details["missing"] == ["lookup_order(order_id='A1')"]
