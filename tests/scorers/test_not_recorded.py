"""A trace that does not record the answer or the tool calls (`Trial.not_recorded`) is never
judged on that absence: every scorer that reads the missing field gives no score, with why.

The first tests reproduce the false failure the issue reports (an openai-v2 trace without
content capture: `tool_selection` said "answered without calling any tool" of an agent that
called both its tools); they use nothing but the scoring interface, so they ran, and failed,
on the code before the fix.
"""

from __future__ import annotations

from typing import Any

import pytest

from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.scorers.base import prepare_scorer, run_scorer
from agenteval.trace import Failure, FailureCause, ToolCall, Trial

WHY_CALLS = (
    "the model asked for tools (finish_reasons tool_calls) and the instrumentation kept no "
    "message content; set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"
)
WHY_OUTPUT = "the model answered and the instrumentation kept no message content"

CASE = EvalCase(
    input="Weather and time in Paris?",
    expected_output="Sunny, 12:00",
    expected_tools=["get_weather", "get_time"],
    expected_trajectory=["get_weather", "get_time"],
    max_tool_calls=2,
    relevant_docs=["doc-1"],
    must_not_contain=["HACKED"],
    keywords=["sunny"],
    context="earlier the user lived in Paris",
)


def calls_unknown(output: str | None = "Sunny, 12:00") -> Trial:
    return Trial(output=output, not_recorded={"tool_calls": WHY_CALLS})


def output_unknown() -> Trial:
    calls = [
        ToolCall(name="get_weather", arguments={"city": "Paris"}, result="sunny"),
        ToolCall(name="get_time", arguments={"tz": "CET"}, result="12:00"),
    ]
    return Trial(tool_calls=calls, not_recorded={"output": WHY_OUTPUT})


async def score(scorer: Any, trial: Trial, case: EvalCase = CASE) -> Score:
    return await run_scorer(scorer, case, trial)


# --- the reported false failures -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["tool_selection", "trajectory_order", "step_efficiency", "tool_execution"]
)
async def test_a_tool_scorer_gives_no_score_when_the_trace_does_not_record_the_calls(
    name: str,
) -> None:
    from agenteval.scorers.builtin import builtin_scorer

    result = await score(builtin_scorer(name), calls_unknown())
    assert result.value is None and result.passed is None and result.error is None
    assert result.reason == f"not scored: the trace does not record the tool calls — {WHY_CALLS}"


async def test_exact_match_gives_no_score_when_the_trace_does_not_record_the_answer() -> None:
    from agenteval.scorers.builtin import builtin_scorer

    result = await score(builtin_scorer("exact_match"), output_unknown())
    assert result.value is None and result.error is None
    assert result.reason == f"not scored: the trace does not record the answer — {WHY_OUTPUT}"


async def test_no_tools_expected_is_not_a_vacuous_pass_when_the_calls_are_unknown() -> None:
    from agenteval.scorers.builtin import builtin_scorer

    none_needed = CASE.model_copy(
        update={"expected_tools": [], "expected_trajectory": [], "max_tool_calls": 0}
    )
    for name in ("tool_selection", "trajectory_order", "step_efficiency"):
        result = await score(builtin_scorer(name), calls_unknown(), none_needed)
        assert (name, result.value) == (name, None)
        assert "does not record the tool calls" in (result.reason or "")


async def test_a_scorer_the_case_does_not_call_for_says_so_not_that_it_was_not_recorded() -> None:
    # Only the scorers a case is judged by say "not scored" (a pytest test of the case is then
    # skipped, its trial undecided): the others give their ordinary "does not apply", as on a
    # trial whose trace records everything, or every case of such a trace would be undecided.
    from agenteval.judge.rubrics import JudgeRubric
    from agenteval.scorers.builtin import builtin_scorer
    from agenteval.scorers.recorded import is_not_recorded

    bare = EvalCase(input="Weather in Paris?")
    own = {
        "tool_selection": "no expected_tools in the case",
        "trajectory_order": "no expected_trajectory in the case",
        "step_efficiency": "no max_tool_calls, expected_trajectory or expected_tools in the case",
        "retrieval_recall": "no relevant_docs in the case",
    }
    for name, reason in own.items():
        result = await score(builtin_scorer(name), calls_unknown(), bare)
        assert (name, result.value, result.reason) == (name, None, reason)
        assert not is_not_recorded(result)
    answer_own = {
        "exact_match": "no expected_output in the case",
        "avoids_forbidden_text": "no must_not_contain in the case",
    }
    for name, reason in answer_own.items():
        result = await score(builtin_scorer(name), output_unknown(), bare)
        assert (name, result.reason) == (name, reason)
    # A judge rubric declines without asking a judge (there is none here to ask).
    result = await score(JudgeRubric("correctness"), output_unknown(), bare)
    assert result.reason == "no expected_output in the case"
    # The ones that judge whatever calls were made apply: the calls were made, and unknown.
    result = await score(builtin_scorer("tool_execution"), calls_unknown(), bare)
    assert is_not_recorded(result)


async def test_a_declines_that_raises_leaves_the_trial_not_scored() -> None:
    from agenteval.scorers import reads
    from agenteval.scorers.recorded import is_not_recorded

    @reads("output")
    class Picky:
        name = "picky"

        def declines(self, case: EvalCase) -> str | None:
            raise RuntimeError("boom")

        def __call__(self, case: EvalCase, trial: Trial) -> float:
            return 1.0

    assert is_not_recorded(await score(Picky(), output_unknown()))


# --- every door declares what it reads -------------------------------------------------------


def _builtins() -> list[Any]:
    from agenteval.scorers.builtin import BUILTIN_SCORERS, builtin_scorer

    return [builtin_scorer(name) for name in BUILTIN_SCORERS]


READS = {
    "exact_match": {"output"},
    "tool_selection": {"tool_calls"},
    "tool_arguments_valid": {"tool_calls", "tool_arguments"},
    "tool_execution": {"tool_calls", "tool_results"},
    "trajectory_order": {"tool_calls", "tool_arguments"},
    "step_efficiency": {"tool_calls"},
    "redundant_calls": {"tool_calls", "tool_arguments"},
    "tool_faithfulness": {"output", "tool_calls", "tool_results"},
    "retrieval_recall": {"tool_calls", "tool_results"},
    "avoids_forbidden_text": {"output"},
    "state_match": {"state"},
}


def test_every_built_in_scorer_declares_what_it_reads() -> None:
    assert {s.name: set(prepare_scorer(s).reads) for s in _builtins()} == READS


def test_the_judge_rubrics_read_what_their_templates_show() -> None:
    from agenteval.judge.rubrics import RUBRICS, JudgeRubric

    reads = {name: set(prepare_scorer(JudgeRubric(name)).reads) for name in RUBRICS}
    assert reads == {
        "correctness": {"output"},
        "groundedness": {"output", "tool_calls", "tool_results"},
        "answer_relevance": {"output"},
        "context_relevance": {"tool_calls", "tool_results"},
    }


def test_every_built_in_criterion_and_evaluator_declares_what_it_reads() -> None:
    from agenteval.criteria.registry import BUILTIN_CRITERIA
    from agenteval.evaluators.catalog import EVALUATORS

    criteria = {name: set(prepare_scorer(cls()).reads) for name, cls in BUILTIN_CRITERIA.items()}
    assert criteria == {
        "exact_match": {"output"},
        "contains_keywords": {"output"},
        "rouge_match": {"output"},
        "response_match_score": {"output"},
        "final_response_match_v2": {"output"},
        "rubric_based_final_response_quality_v1": {"output"},
        "factual_accuracy_v1": {"output"},
        "hallucinations_v1": {"output", "tool_calls", "tool_results"},
        "safety_v1": {"output"},
        "tool_trajectory_avg_score": {"tool_calls", "tool_arguments"},
        "node_order_score": set(),  # graph nodes: not a field a trace leaves out
        "tool_name_match_score": {"tool_calls"},
        "rubric_based_tool_use_quality_v1": {"tool_calls", "tool_arguments"},
        "multi_turn_task_success_v1": {"output", "tool_calls"},
        "multi_turn_trajectory_quality_v1": {"output", "tool_calls"},
        "multi_turn_tool_use_quality_v1": {"output", "tool_calls", "tool_arguments"},
        "rubric_based_multi_turn_trajectory_quality_v1": {"output", "tool_calls"},
        "per_turn_user_simulator_quality_v1": {"output"},
        # Measurements: one the trace cannot give is None with its reason, never undecided.
        "tool_call_count_v1": set(),
        "inference_call_count_v1": set(),
        "token_usage_v1": set(),
        "invocation_duration_v1": set(),
    }
    evaluators = {name: set(prepare_scorer(cls()).reads) for name, cls in EVALUATORS.items()}
    assert evaluators == {
        "tool_call_accuracy": {"tool_calls", "tool_arguments"},
        "tool_argument_accuracy": {"tool_calls", "tool_arguments"},
        "tool_call_necessity": {"tool_calls"},
        "trajectory_efficiency": {"output", "tool_calls"},
        "plan_quality": {"output", "tool_calls"},
        "task_completion": {"output", "tool_calls"},
        "step_faithfulness": {"output", "tool_calls"},
        "agent_memory_eval": {"output"},
    }


def _every_scorer() -> list[Any]:
    from agenteval.criteria.registry import BUILTIN_CRITERIA
    from agenteval.evaluators.catalog import EVALUATORS
    from agenteval.judge.rubrics import RUBRICS, JudgeRubric

    return [
        *_builtins(),
        *(JudgeRubric(name) for name in RUBRICS),
        *(cls() for cls in BUILTIN_CRITERIA.values()),
        *(cls() for cls in EVALUATORS.values()),
    ]


@pytest.mark.parametrize("field", ["output", "tool_calls"])
async def test_every_scorer_reading_an_unrecorded_field_gives_no_score_and_is_not_called(
    field: str,
) -> None:
    # Not called: the judged ones would otherwise ask a judge (none here) and say so instead.
    from agenteval.scorers.recorded import NOT_RECORDED, is_not_recorded

    trial = calls_unknown() if field == "tool_calls" else output_unknown()
    readers = [s for s in _every_scorer() if field in prepare_scorer(s).reads]
    assert len(readers) > 10
    for scorer in readers:
        result = await score(scorer, trial)
        assert is_not_recorded(result), (result.name, result.reason)
        assert result.details == {NOT_RECORDED: [field]}
        assert result.reason is not None and result.reason.startswith("not scored: the trace")


async def test_a_scorer_is_called_as_usual_when_what_it_reads_is_recorded() -> None:
    from agenteval.scorers.builtin import builtin_scorer

    # The answer is recorded; only the calls are not: exact_match judges the answer.
    result = await score(builtin_scorer("exact_match"), calls_unknown(output="Rainy"))
    assert (result.value, result.passed) == (0.0, False)
    result = await score(builtin_scorer("exact_match"), calls_unknown())
    assert (result.value, result.passed) == (1.0, True)


async def test_both_fields_unknown_are_named_in_one_reason() -> None:
    from agenteval.scorers.builtin import builtin_scorer

    trial = Trial(not_recorded={"output": WHY_OUTPUT, "tool_calls": WHY_CALLS})
    result = await score(builtin_scorer("tool_faithfulness"), trial)
    assert result.reason == (
        f"not scored: the trace does not record the answer — {WHY_OUTPUT}; "
        f"the tool calls — {WHY_CALLS}"
    )


# --- what stays as it was ---------------------------------------------------------------------


@pytest.mark.parametrize("cause", [c for c in FailureCause if c.is_infrastructure])
async def test_an_infrastructure_failure_keeps_its_own_reason(cause: FailureCause) -> None:
    from agenteval.scorers.builtin import builtin_scorer

    trial = Trial(
        failure=Failure(cause=cause, message="gave up"), not_recorded={"tool_calls": WHY_CALLS}
    )
    result = await score(builtin_scorer("tool_selection"), trial)
    assert result.value is None
    assert result.reason == (
        f"not judged: the trial failed for an infrastructure reason ({cause.value}: gave up)"
    )


async def test_a_users_scorer_is_called_unless_it_declares_what_it_reads() -> None:
    from agenteval.scorers import reads

    def said_sunny(case: EvalCase, trial: Trial) -> bool:
        return "sunny" in (trial.output or "").lower()

    result = await score(said_sunny, output_unknown())
    assert (result.value, result.passed) == (0.0, False)  # called: its own business

    @reads("output")
    def said_sunny_honestly(case: EvalCase, trial: Trial) -> bool:
        return "sunny" in (trial.output or "").lower()

    result = await score(said_sunny_honestly, output_unknown())
    assert result.value is None
    assert result.reason == f"not scored: the trace does not record the answer — {WHY_OUTPUT}"
    result = await score(said_sunny_honestly, calls_unknown())
    assert (result.value, result.passed) == (1.0, True)


async def test_a_users_scorer_object_may_declare_a_reads_attribute() -> None:
    class Counts:
        name = "counts"
        reads = ("tool_calls",)

        def __call__(self, case: EvalCase, trial: Trial) -> float:
            return min(1.0, len(trial.tool_calls) / 2)

    assert (await score(Counts(), calls_unknown())).value is None
    assert (await score(Counts(), output_unknown())).value == 1.0

    class Unrelated:  # a `reads` that is no declaration of fields is left alone
        name = "unrelated"
        reads = 3

        def __call__(self, case: EvalCase, trial: Trial) -> float:
            return 0.5

    assert (await score(Unrelated(), calls_unknown())).value == 0.5


def test_reads_names_a_misspelt_field() -> None:
    from agenteval.errors import ScorerError
    from agenteval.scorers import reads

    with pytest.raises(ScorerError, match="'outptu' is not a trial field"):
        reads("outptu")
    with pytest.raises(ScorerError, match="name at least one field"):
        reads()


async def test_an_error_stays_an_error_where_the_scorer_is_called() -> None:
    from agenteval.scorers import reads

    @reads("output")
    def broken(case: EvalCase, trial: Trial) -> float:
        raise RuntimeError("boom")

    result = await score(broken, calls_unknown())  # the answer is recorded: called, and fails
    assert result.error == "RuntimeError: boom"


async def test_a_renamed_scorer_reads_what_its_scorer_reads() -> None:
    from agenteval.scorers.base import RenamedScorer
    from agenteval.scorers.builtin import builtin_scorer

    renamed = RenamedScorer(builtin_scorer("tool_selection"), "tool_selection_2")
    result = await score(renamed, calls_unknown())
    assert result.name == "tool_selection_2" and result.value is None


async def test_a_composite_criterion_reads_what_its_enabled_parts_read() -> None:
    from agenteval.criteria import (
        CompositeCriterion,
        CriterionConfig,
        ExactMatchCriterion,
        NodeOrderMatchCriterion,
        TrajectoryMatchCriterion,
        WeightedCriterion,
    )

    both = CompositeCriterion([ExactMatchCriterion(), TrajectoryMatchCriterion()])
    assert both.reads == {"output", "tool_calls", "tool_arguments"}
    assert (await score(both, calls_unknown())).value is None
    disabled = TrajectoryMatchCriterion(config=CriterionConfig(enabled=False))
    answer_only = CompositeCriterion([ExactMatchCriterion(), disabled])
    assert answer_only.reads == {"output"}
    weighted = WeightedCriterion([(NodeOrderMatchCriterion(), 1.0)])
    assert weighted.reads == frozenset()


async def test_a_reads_that_raises_declares_nothing_and_the_scorer_reports_its_own_error() -> None:
    from agenteval.judge.rubrics import JudgeRubric

    missing = JudgeRubric("no_such_rubric")  # its template cannot be loaded
    assert prepare_scorer(missing).reads == frozenset()
    result = await score(missing, calls_unknown())
    assert result.error is not None and "no_such_rubric" in result.error


async def test_calls_named_without_their_arguments_leave_only_argument_checks_unscored() -> None:
    # pydantic-ai with include_content=False: the calls and their ids are on the spans, the
    # arguments are not. Which tools were called is still known; what they were given is not.
    from agenteval.scorers.tools import ToolArgumentsValid, ToolSelection
    from agenteval.trace import ToolSpec

    spec = ToolSpec(
        name="get_weather",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    )
    trial = Trial(
        output="sunny",
        tool_calls=[ToolCall(name="get_weather", arguments={})],
        not_recorded={"tool_arguments": "include_content=False"},
        tool_specs={"get_weather": spec},
    )
    case = EvalCase(input="weather?", expected_tools=["get_weather"])
    selected = await score(ToolSelection(), trial, case)
    assert selected.value == 1.0
    checked = await score(ToolArgumentsValid(), trial, case)
    assert checked.value is None
    assert "the tool calls' arguments" in checked.reason
    assert "include_content=False" in checked.reason
