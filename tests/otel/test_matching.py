"""Matching recorded trials to cases: by the case they name; by order only when asked, never by
a silent guess; lone model-call traces said for what they are."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval import EvalCase, Trial
from agenteval.errors import DatasetError
from agenteval.otel import RecordedTrial, match_trials
from agenteval.otel.shape import TraceShape

CASES = [EvalCase(id=name, input=f"q {name}") for name in ("a", "b", "c")]
LONE = "a lone model call (one model-call span, no span of the app's own around it)"
WRAP = (
    '        with tracer.start_as_current_span("my-agent", attributes={"agenteval.case.id": '
    "case_id}):"
)


def recorded(key: str | None, output: str) -> RecordedTrial:
    return RecordedTrial(Trial(output=output), source=f"src {output}", key=key)


def traced(key: str | None, output: str, shape: TraceShape | None = None) -> RecordedTrial:
    """A trace (not a trial line): a whole trial unless `shape` says otherwise."""
    return RecordedTrial(
        Trial(output=output), source=f"t {output}", key=key, shape=shape or TraceShape()
    )


ASKS = TraceShape(lone_model_call=True, asks_for_tools=True)
FINAL = TraceShape(lone_model_call=True, continues=True)
ONE_CALL = TraceShape(lone_model_call=True)


def test_traces_naming_their_case_are_its_trials_in_the_order_read() -> None:
    matched = match_trials(
        [recorded("b", "b1"), recorded("a", "a1"), recorded("b", "b2"), recorded("c", "c1")],
        CASES,
    )
    assert [c.id for c in matched.cases] == ["a", "b", "c"]
    assert matched.trials_per_case == 2
    assert matched.trials[("b", 0)].output == "b1"
    assert matched.trials[("b", 1)].output == "b2"
    assert matched.trials[("b", 1)].case_id == "b" and matched.trials[("b", 1)].trial == 1
    assert not matched.by_order and not matched.unmatched and not matched.missing


def test_unknown_and_unnamed_traces_are_left_out_and_cases_without_a_trace_are_listed() -> None:
    matched = match_trials([recorded("a", "a1"), recorded("zzz", "z"), recorded(None, "n")], CASES)
    assert matched.unmatched == ["src z", "src n"]
    assert matched.missing == ["b", "c"]
    assert [c.id for c in matched.cases] == ["a"]


def test_traces_naming_no_known_case_are_an_error_naming_what_they_name() -> None:
    with pytest.raises(DatasetError, match="they name 'x', 'y'") as info:
        match_trials([recorded("x", "1"), recorded("y", "2")], CASES, source="t.jsonl")
    assert info.value.field == "agenteval.case.id"
    assert info.value.hint is not None and "--match-attribute" in info.value.hint


def test_by_order_one_pass_or_several_when_asked_and_said() -> None:
    one = match_trials([recorded(None, str(i)) for i in range(3)], CASES, by_order=True)
    assert one.by_order
    assert [one.trials[(c.id, 0)].output for c in CASES] == ["0", "1", "2"]
    assert one.notes == [
        "no trial names its case: the 3 trials are matched to the 3 cases by order, as asked "
        "(--match-by-order)"
    ]
    assert one.settings() == {
        "by": "order",
        "attribute": "agenteval.case.id",
        "recorded": 3,
        "left_out": 0,
        "cases_without_trials": 0,
        "lone_model_calls": 0,
    }
    two = match_trials([recorded(None, str(i)) for i in range(6)], CASES, by_order=True)
    assert two.trials_per_case == 2
    assert two.trials[("a", 1)].output == "3"
    fewer = match_trials([recorded(None, "0")], CASES, by_order=True)
    assert fewer.missing == ["b", "c"]
    assert fewer.notes[-1] == "2 cases have no trace and were left out: b, c"


def test_by_order_with_a_count_that_fits_no_pass_is_an_error() -> None:
    with pytest.raises(DatasetError, match="4 trials for 3 cases") as info:
        match_trials([recorded(None, str(i)) for i in range(4)], CASES, by_order=True)
    assert info.value.hint is not None and "(a multiple of 3)" in info.value.hint


def test_trial_lines_naming_no_case_are_an_error_naming_the_fix() -> None:
    with pytest.raises(DatasetError) as info:
        match_trials([recorded(None, str(i)) for i in range(3)], CASES, source="t.jsonl")
    assert str(info.value) == (
        "t.jsonl, field 'case_id': none of the 3 trials names its case (no case_id); pairing "
        "them with the 3 cases by order would be a guess\n"
        "  hint: give each trial line its case_id; or pass --match-by-order "
        "(match_by_order=True in Python) if the file holds one trial per case, in case order"
    )
    with pytest.raises(DatasetError, match="the one trial names no case"):
        match_trials([recorded(None, "0")], CASES)


def test_lone_model_call_traces_naming_no_case_are_an_error_saying_so() -> None:
    calls = [traced(None, str(i), ASKS if i % 2 == 0 else FINAL) for i in range(6)]
    with pytest.raises(DatasetError) as info:
        match_trials(calls, CASES, source="calls.jsonl")
    error = info.value
    assert (error.file, error.field) == ("calls.jsonl", "agenteval.case.id")
    assert error.message == (
        "none of the 6 traces names its case (no span carries 'agenteval.case.id'), and each "
        f"is {LONE}: unless the agent makes one model call per trial, each trial's model calls "
        "are split over several traces; pairing them with the 3 cases by order would be a guess"
    )
    assert error.hint is not None
    assert error.hint.startswith(
        "wrap each trial in one span of the app's own that names its case, so its model and "
        "tool calls make one trace; in Python:\n"
        '        tracer = opentelemetry.trace.get_tracer("my-agent")\n' + WRAP + "\n"
        "            answer = my_agent(question)\n"
        "    (in JavaScript or another SDK: start an active span around each trial with the "
        "attribute agenteval.case.id set to the case id, and run the agent inside it)"
    )
    assert error.hint.endswith(
        "; or pass --match-attribute NAME if the traces carry the case id under another "
        "attribute; or pass --match-by-order (match_by_order=True in Python) if the file holds "
        "one trace per trial, in case order"
    )


def test_whole_traces_naming_no_case_are_an_error_without_the_lone_call_clause() -> None:
    some_lone = [traced(None, "0"), traced(None, "1", ONE_CALL), traced(None, "2")]
    with pytest.raises(DatasetError) as info:
        match_trials(some_lone, CASES, attribute="session.case")
    assert info.value.message == (
        "none of the 3 traces names its case (no span carries 'session.case'), and 1 of the 3 "
        f"traces is {LONE}: a trial's model calls may be split over several traces; "
        "pairing them with the 3 cases by order would be a guess"
    )
    assert info.value.hint is not None and '{"session.case": case_id}' in info.value.hint
    whole = [traced(None, str(i)) for i in range(3)]
    with pytest.raises(DatasetError) as info:
        match_trials(whole, CASES)
    assert info.value.message == (
        "none of the 3 traces names its case (no span carries 'agenteval.case.id'); pairing "
        "them with the 3 cases by order would be a guess"
    )


def test_by_order_refuses_traces_that_go_on_from_one_another() -> None:
    calls = [traced(None, str(i), ASKS if i % 2 == 0 else FINAL) for i in range(6)]
    with pytest.raises(DatasetError) as info:
        match_trials(calls, CASES, by_order=True)
    assert info.value.message == (
        f"--match-by-order pairs one trace with each trial, but 3 of these 6 traces are each "
        f"{LONE} going on from tool results an earlier call asked for: a trial's model calls "
        "are split over several traces"
    )
    assert info.value.hint is not None and WRAP in info.value.hint


def test_by_order_over_lone_calls_with_no_proof_of_a_split_says_they_are_scored_as_trials() -> None:
    calls = [traced(None, str(i), ONE_CALL) for i in range(3)]
    matched = match_trials(calls, CASES, by_order=True)
    assert matched.notes == [
        "no trace names its case: the 3 traces are matched to the 3 cases by order, as asked "
        f"(--match-by-order); 3 of them are each {LONE}, scored as a whole trial"
    ]
    assert matched.settings()["lone_model_calls"] == 3


def test_partly_named_traces_never_pair_the_unnamed_ones_by_order() -> None:
    items = [traced("a", "a1"), traced(None, "n1", ONE_CALL), traced(None, "n2"), traced("q", "q")]
    for by_order in (False, True):
        matched = match_trials(items, CASES, by_order=by_order)
        assert not matched.by_order
        assert list(matched.trials) == [("a", 0)]
        assert matched.unmatched == ["t n1", "t n2", "t q"]
        assert matched.notes[0].startswith(
            "2 of the 4 traces name no case (no span carries 'agenteval.case.id'), left out: "
            f"t n1, t n2; 1 of them is {LONE}, perhaps a part of a trial the span naming "
            "its case did not wrap: wrap each trial"
        )
        assert matched.notes[1:] == [
            "1 of the 4 traces names a case the case file does not have ('q'), left out: t q",
            "2 cases have no trace and were left out: b, c",
        ]
        assert matched.settings()["left_out"] == 3


def test_one_trials_calls_split_over_traces_naming_its_case_are_an_error() -> None:
    items = [traced("a", "a1", ASKS), traced("a", "a2", FINAL), traced("b", "b1", ASKS)]
    items += [traced("b", "b2", FINAL), traced("c", "c1")]
    with pytest.raises(DatasetError) as info:
        match_trials(items, CASES, source="stamped.jsonl")
    error = info.value
    assert (error.file, error.case, error.field) == ("stamped.jsonl", "a", "agenteval.case.id")
    assert error.message == (
        f"2 traces naming this case are each {LONE}, and 1 of them goes on from tool results an "
        "earlier call asked for: one trial's model calls are split over several traces, and "
        "scoring each as a trial would be wrong (cases 'b' too)"
    )
    assert error.hint is not None and WRAP in error.hint
    assert error.hint.endswith(
        "; a span processor that copies agenteval.case.id onto every span (or the id in the "
        "process's resource) makes each model call look like a trial: set it on that one span "
        "instead"
    )


def test_several_lone_calls_of_a_case_with_no_proof_of_a_split_are_a_warning() -> None:
    # A one-call agent's trials look like this; so do a split trial's calls without content.
    items = [traced("a", "a1", ASKS), traced("a", "a2", ONE_CALL), traced("b", "b1", ONE_CALL)]
    items += [traced("b", "b2", ONE_CALL), traced("c", "c", ONE_CALL)]
    matched = match_trials(items, CASES)
    assert matched.trials_per_case == 2
    [note] = matched.notes
    assert note.startswith(
        f"2 cases have several traces that are each {LONE}: 'a' (2), 'b' (2); each is scored as "
        "a trial of one model call, though 1 of them ends asking for tool calls, as a call does "
        "when its trial goes on in another trace. If a trial makes several model calls, they are "
        "split over traces: wrap each trial in one span"
    )
    # Calls that all go on from tool results (a conversation given as the input) prove nothing.
    given = [traced("a", "1", FINAL), traced("a", "2", FINAL)]
    assert len(match_trials(given, CASES).trials) == 2


def test_nothing_recorded_is_an_error() -> None:
    with pytest.raises(DatasetError, match="no traces"):
        match_trials([], CASES)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=20), st.randoms())
def test_every_named_trace_goes_to_its_case_and_keeps_its_order(
    keys: list[str], rng: random.Random
) -> None:
    items = [recorded(key, f"{key}-{n}") for n, key in enumerate(keys)]
    rng.shuffle(items)
    matched = match_trials(items, CASES)
    for case in matched.cases:
        mine = [i.trial.output for i in items if i.key == case.id]
        assert [matched.trials[(case.id, n)].output for n in range(len(mine))] == mine
    assert len(matched.trials) == len(keys)
    assert matched.trials_per_case == max(keys.count(k) for k in "abc")


def test_every_case_answered_by_each_of_two_processes_is_a_warning_only_then() -> None:
    def by(process: str, key: str) -> RecordedTrial:
        return traced(key, f"{process}{key}", TraceShape(process=process))

    two = match_trials([by(p, k) for p in ("p1", "p2") for k in "abc"], CASES)
    assert two.trials_per_case == 2
    assert two.notes == [
        "the traces come from 2 processes (service.instance.id) that each answered every case, "
        "scored as one run with each answer a trial of its case; if they are separate "
        "recordings (before and after a change, say: a trace file the Collector appends to "
        "keeps both), score their traces apart"
    ]
    # Workers sharing the cases, or one process's several trials: no warning.
    shared = [by("p1", "a"), by("p1", "b"), by("p2", "c"), by("p3", "a"), by("p3", "a")]
    assert not any("processes" in note for note in match_trials(shared, CASES).notes)
