"""tool_faithfulness and retrieval_recall: answers grounded in tool results, documents found."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.scorers.grounding import RetrievalRecall, ToolFaithfulness, returned_doc_ids
from agenteval.trace import Failure, FailureCause, ToolCall, Trial


def call(name: str, result: Any = None, error: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments, result=result, error=error)


def trial(*calls: ToolCall, output: str | None = "done", **fields: Any) -> Trial:
    return Trial(output=output, tool_calls=list(calls), **fields)


def assert_not_applied(score: Score, reason_part: str) -> None:
    assert score.value is None
    assert score.passed is None
    assert score.reason is not None
    assert reason_part in score.reason


# --- tool_faithfulness: numbers ----------------------------------------------------------------

faithful = ToolFaithfulness()
question = EvalCase(input="How many people live in Springfield?")


def test_a_number_from_a_result_is_supported() -> None:
    score = faithful(
        question,
        trial(
            call("search", {"city": "Springfield", "population": 19753}),
            output="Springfield has 19,753 people.",
        ),
    )
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["rule"] == "numbers"
    assert score.details["unsupported"] == []


def test_a_number_no_result_holds_is_unsupported() -> None:
    score = faithful(
        question,
        trial(
            call("search", {"population": 19753}),
            output="Springfield has 19,700 people and 12 parks.",
        ),
    )
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["unsupported"] == ["19,700", "12"]
    assert score.reason is not None
    assert "19,700, 12" in score.reason


def test_the_value_is_the_share_of_numbers_supported() -> None:
    score = faithful(
        question,
        trial(
            call("search", {"population": 19753, "area": "12.5 km2"}),
            output="19,753 people on 12.5 km² and 40 parks.",
        ),
    )
    assert score.value == pytest.approx(2 / 3)
    assert score.passed is False


@pytest.mark.parametrize(
    "result",
    [
        19753,
        "19753",
        "The population was 19,753 in 2020.",
        {"data": [{"value": 19753.004}]},
        [["x", {"nested": {"deep": "about 19753.0"}}]],
        {"19753": "keys count too"},
    ],
)
def test_numbers_are_found_anywhere_in_a_result(result: Any) -> None:
    score = faithful(question, trial(call("search", result), output="19,753"))
    assert score.passed is True


def test_numbers_that_echo_the_input_are_not_checked() -> None:
    sum_case = EvalCase(input="What is 3 + 4?")
    echoed = faithful(sum_case, trial(call("calculator", 7), output="3 + 4 = 7"))
    assert echoed.passed is True
    assert (echoed.details["checked"], echoed.details["echoed"]) == (1, ["3", "4"])
    assert echoed.reason == (
        "all 1 numbers in the answer appear in tool results; "
        "not checked, as they echo the input: 3, 4"
    )
    from_memory = faithful(sum_case, trial(call("calculator", "ok"), output="3 + 4 = 7"))
    assert from_memory.passed is False
    assert from_memory.details["unsupported"] == ["7"]
    assert from_memory.value == 0.0


def test_numbers_in_a_conversation_are_echoes_too() -> None:
    chat = EvalCase(conversation=[{"input": "Add 3 and 4"}, {"input": "Now double it"}])
    score = faithful(chat, trial(call("calculator", 14), output="3 + 4 doubled is 14"))
    assert score.passed is True
    assert score.details["echoed"] == ["3", "4"]


REVENUE = EvalCase(input="What was revenue in 2024?")


def test_an_answer_whose_only_number_echoes_the_input_is_checked_by_its_words() -> None:
    # The review's case: the year only repeats the question, so it proves nothing; the words
    # of the answer are checked instead, and the Martian colonies are in no result.
    score = faithful(
        REVENUE,
        trial(
            call("finance", {"quarter": "Q1", "status": "ok"}),
            output="In 2024 revenue grew tenfold thanks to Martian colonies",
        ),
    )
    assert score.details["rule"] == "words"
    assert score.details["echoed"] == ["2024"]
    assert score.details["unsupported"] == ["grew", "tenfold", "thanks", "martian", "colonies"]
    assert score.value == pytest.approx(1 / 6)
    assert score.passed is False
    assert score.reason == (
        "1 of 6 content words of the answer appear in tool results or the input (17%, needs 80%); "
        "not found: grew, tenfold, thanks, martian, colonies; "
        "not checked, as they echo the input: 2024"
    )


def test_an_echoed_number_is_not_checked_even_when_a_result_holds_it() -> None:
    score = faithful(
        REVENUE,
        trial(call("finance", {"year": 2024, "revenue": "flat"}), output="2024 revenue: flat"),
    )
    assert (score.details["rule"], score.value, score.passed) == ("words", 1.0, True)


def test_an_echo_next_to_a_new_number_leaves_the_new_one_to_check() -> None:
    score = faithful(
        REVENUE,
        trial(call("finance", {"revenue": 5}), output="In 2024 revenue was 7 million."),
    )
    assert score.details["rule"] == "numbers"
    assert (score.details["checked"], score.details["unsupported"]) == (1, ["7"])
    assert score.details["echoed"] == ["2024"]
    assert score.reason == (
        "1 of 1 numbers in the answer appear in no tool result: 7; "
        "not checked, as they echo the input: 2024"
    )
    assert score.passed is False


def test_an_answer_of_echoes_alone_is_not_scored() -> None:
    score = faithful(REVENUE, trial(call("finance", {"revenue": 5}), output="2024."))
    assert_not_applied(score, "nothing to check")
    assert score.reason == (
        "nothing to check: the answer has only numbers that echo the input and no content words"
    )
    assert score.details == {"echoed": ["2024"]}


def test_a_percentage_echoing_a_fraction_of_the_input_is_an_echo() -> None:
    growth = EvalCase(input="Is a growth of 0.12 good?")
    score = faithful(growth, trial(call("stats", {"growth": "good"}), output="12% is good."))
    assert (score.details["rule"], score.details["echoed"]) == ("words", ["12%"])


@given(
    st.integers(min_value=0, max_value=10**6),
    st.lists(st.sampled_from(["martian", "colonies", "tenfold", "unicorns"]), min_size=1),
)
def test_echoing_the_input_never_makes_invented_words_faithful(
    number: int, invented: list[str]
) -> None:
    case = EvalCase(input=f"What was revenue in {number}?")
    answer = f"In {number} revenue came from " + " ".join(invented)
    score = faithful(case, trial(call("finance", {"status": "ok"}), output=answer))
    assert score.passed is False


def test_a_percentage_is_supported_by_its_fraction() -> None:
    score = faithful(question, trial(call("stats", {"growth": 0.123}), output="It grew 12.3%."))
    assert score.passed is True
    wrong = faithful(question, trial(call("stats", {"growth": 0.13}), output="It grew 12.3%."))
    assert wrong.passed is False


def test_signs_are_ignored() -> None:
    score = faithful(question, trial(call("stats", {"change": -200}), output="a loss of 200"))
    assert score.passed is True


def test_a_right_answer_from_the_models_head_fails() -> None:
    # Faithfulness to sources, not truth.
    score = faithful(question, trial(call("search", "no results"), output="19,753"))
    assert score.passed is False


# --- tool_faithfulness: words ------------------------------------------------------------------


def test_words_of_the_answer_found_in_results_pass() -> None:
    capital = EvalCase(input="What is the capital of France?")
    score = faithful(
        capital,
        trial(call("lookup", {"capital": "Paris"}), output="The capital of France is Paris."),
    )
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["rule"] == "words"
    assert score.details["checked"] == 3


def test_words_not_in_results_are_listed() -> None:
    capital = EvalCase(input="What is the capital of France?")
    score = faithful(
        capital,
        trial(
            call("lookup", {"capital": "Paris"}),
            output="Paris, famous for the Eiffel tower and croissants.",
        ),
    )
    assert score.details["unsupported"] == ["famous", "eiffel", "tower", "croissants"]
    assert score.value == pytest.approx(1 / 5)
    assert score.passed is False
    assert score.reason is not None
    assert "not found: famous, eiffel, tower, croissants" in score.reason


def test_words_pass_at_eighty_percent() -> None:
    result = {"text": "alpha bravo charlie delta"}
    four_of_five = faithful(
        question, trial(call("s", result), output="alpha bravo charlie delta echo")
    )
    assert (four_of_five.value, four_of_five.passed) == (0.8, True)
    three_of_four = faithful(question, trial(call("s", result), output="alpha bravo charlie echo"))
    assert (three_of_four.value, three_of_four.passed) == (0.75, False)


def test_words_ignore_case_and_accents() -> None:
    score = faithful(question, trial(call("s", "Sao Paulo"), output="SÃO PAULO"))
    assert score.passed is True


def test_words_match_whole_words_only() -> None:
    # "cat" is inside "category", but it is not a word of the result.
    score = faithful(question, trial(call("s", "a category"), output="Cat."))
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["unsupported"] == ["cat"]


def test_an_answer_with_nothing_to_check_is_not_scored() -> None:
    score = faithful(question, trial(call("s", "anything"), output="Yes, it is."))
    assert_not_applied(score, "nothing to check")


def test_faithfulness_does_not_apply_without_an_answer() -> None:
    assert_not_applied(faithful(question, trial(call("s", 1), output=None)), "no answer")


def test_faithfulness_without_an_answer_names_the_agents_failure() -> None:
    crashed = trial(
        call("s", 1), output=None, failure=Failure(cause=FailureCause.AGENT_ERROR, message="boom")
    )
    score = faithful(question, crashed)
    assert (score.value, score.reason) == (None, "the trial gave no answer (agent_error: boom)")


def test_faithfulness_does_not_judge_an_infrastructure_failure() -> None:
    cut_short = trial(
        call("s", 1),
        output="19,753",
        failure=Failure(cause=FailureCause.PROVIDER_ERROR, message="HTTP 503"),
    )
    score = faithful(question, cut_short)
    assert (score.value, score.passed) == (None, None)
    assert score.reason == (
        "not judged: the trial failed for an infrastructure reason (provider_error: HTTP 503)"
    )


def test_faithfulness_does_not_apply_without_a_result() -> None:
    score = faithful(question, trial(call("s", None, error="Timeout"), output="19,753"))
    assert_not_applied(score, "no tool call returned a result")
    assert_not_applied(faithful(question, trial(output="19,753")), "no tool call returned")


def test_faithfulness_details_are_json() -> None:
    score = faithful(question, trial(call("s", {"n": 1}), output="2"))
    json.dumps(score.details)


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_any_integer_from_a_result_is_supported_however_written(number: int) -> None:
    score = faithful(
        question, trial(call("s", {"value": number}), output=f"The value is {number:,}.")
    )
    assert score.passed is True


# --- retrieval_recall --------------------------------------------------------------------------

recall = RetrievalRecall()


def docs_case(*docs: str) -> EvalCase:
    return EvalCase(input="Who wrote the report?", relevant_docs=list(docs))


@pytest.mark.parametrize(
    "result",
    [
        [{"id": "doc-1"}, {"id": "doc-2"}],
        [{"doc_id": "doc-1"}, {"doc_id": "doc-2"}],
        [{"url": "doc-1"}, {"url": "doc-2"}],
        ["doc-1", "doc-2"],
        {"results": [{"id": "doc-1", "score": 0.9}, {"id": "doc-2"}]},
        {"documents": ["doc-1", "doc-2"]},
        {"docs": [{"doc_id": "doc-1"}, "doc-2"]},
        {"items": [{"id": "doc-1"}, {"url": "doc-2"}]},
        json.dumps([{"id": "doc-1"}, {"id": "doc-2"}]),
    ],
)
def test_recall_reads_documents_from_search_results(result: Any) -> None:
    score = recall(docs_case("doc-1", "doc-2"), trial(call("search", result)))
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["found"] == ["doc-1", "doc-2"]
    assert score.details["source"] == "search calls"


def test_recall_is_the_share_found() -> None:
    score = recall(
        docs_case("doc-1", "doc-2", "doc-3"),
        trial(call("web_search", [{"id": "doc-1"}]), call("retrieve_docs", ["doc-3", "doc-9"])),
    )
    assert score.value == pytest.approx(2 / 3)
    assert score.passed is False
    assert score.details["found"] == ["doc-1", "doc-3"]
    assert score.details["missed"] == ["doc-2"]
    assert score.details["search_calls"] == 2
    assert score.reason == "2 of 3 relevant documents returned; missed doc-2"


def test_recall_prefers_id_over_doc_id_over_url() -> None:
    assert returned_doc_ids([{"url": "u", "doc_id": "d", "id": "i"}]) == ["i"]
    assert returned_doc_ids([{"url": "u", "doc_id": "d"}]) == ["d"]
    assert returned_doc_ids({"id": "single"}) == ["single"]
    assert returned_doc_ids("plain-id") == ["plain-id"]
    assert returned_doc_ids([{"title": "no id"}, 7, None]) == ["7"]


def test_only_search_tools_count() -> None:
    score = recall(docs_case("doc-1"), trial(call("calculator", ["doc-1"])))
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == "no search tool was called (tool names containing 'search' or 'retriev')"


def test_search_tool_patterns_are_configurable() -> None:
    scorer = RetrievalRecall(search_tools=("lookup",), doc_keys=("key",))
    score = scorer(docs_case("doc-1"), trial(call("KB_Lookup", [{"key": "doc-1"}])))
    assert score.passed is True


def test_retrieved_docs_reported_by_the_agent_win() -> None:
    score = recall(
        docs_case("doc-1", "doc-2"),
        trial(call("search", ["doc-1", "doc-2"]), retrieved_docs=["doc-2"]),
    )
    assert score.value == 0.5
    assert score.details["source"] == "retrieved_docs"


def test_recall_does_not_apply_without_relevant_docs() -> None:
    assert_not_applied(recall(EvalCase(input="?"), trial(call("search", []))), "no relevant_docs")
    assert_not_applied(recall(docs_case(), trial(call("search", []))), "no relevant_docs")


def test_recall_is_not_judged_after_an_infrastructure_failure() -> None:
    rate_limited = Trial(
        tool_calls=[call("search", ["doc-1"])], failure=Failure(cause=FailureCause.RATE_LIMITED)
    )
    score = recall(docs_case("doc-1"), rate_limited)
    assert (score.value, score.passed) == (None, None)
    assert (
        score.reason == "not judged: the trial failed for an infrastructure reason (rate_limited)"
    )


@pytest.mark.parametrize(
    "cause",
    [FailureCause.AGENT_ERROR, FailureCause.NO_RESPONSE, FailureCause.INVALID_OUTPUT],
)
def test_recall_judges_a_trial_the_agent_failed(cause: FailureCause) -> None:
    searched = Trial(
        tool_calls=[call("search", ["doc-1"])], failure=Failure(cause=cause, message="boom")
    )
    assert recall(docs_case("doc-1", "doc-2"), searched).value == 0.5
    gave_up = Trial(failure=Failure(cause=cause, message="boom"))
    score = recall(docs_case("doc-1"), gave_up)
    assert (score.value, score.passed) == (0.0, False)
    assert score.reason == "no search tool was called (tool names containing 'search' or 'retriev')"


def test_returned_doc_ids_reads_a_json_object_string() -> None:
    assert returned_doc_ids('{"results": [{"id": "doc-1"}]}') == ["doc-1"]
    assert returned_doc_ids("{not json") == ["{not json"]
