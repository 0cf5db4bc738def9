"""TrialBuilder: the one shape of a framework agent's trial, and what a failed run keeps."""

from __future__ import annotations

import pytest

from agenteval.agents.frameworks import TrialBuilder, conversation
from agenteval.agents.recorder import TrialRecorder, recording
from agenteval.case import EvalCase, Invocation, Message
from agenteval.trace import ToolSpec, Usage


def test_parallel_calls_pair_with_their_results_by_id() -> None:
    builder = TrialBuilder(conversation(EvalCase(input="hi")), {})
    builder.call("weather", {"city": "Paris"}, "a")
    builder.call("weather", '{"city": "Rome"}', "b")
    builder.result("b", {"celsius": 20})
    builder.result("a", None, error="ValueError: no such city")
    builder.answer("done")
    trial = builder.build()
    assert [(c.arguments, c.result, c.error) for c in trial.tool_calls] == [
        ({"city": "Paris"}, None, "ValueError: no such city"),
        ({"city": "Rome"}, {"celsius": 20}, None),
    ]
    assert trial.output == "done"
    assert "turn_outputs" not in trial.metadata


def test_a_result_without_an_id_goes_to_the_earliest_open_call_of_its_tool() -> None:
    builder = TrialBuilder(conversation(EvalCase(input="hi")), {})
    builder.call("a", {})
    builder.call("b", {})
    builder.call("a", {"n": 2})
    assert builder.result(None, 1, name="a") is not None
    assert builder.result(None, 2, name="a") is not None
    assert builder.result(None, 3, name="c") is None
    assert [c.result for c in builder.build().tool_calls] == [1, None, 2]


def test_a_conversation_records_one_step_per_turn_and_its_answers() -> None:
    case = EvalCase(conversation=[Invocation(input="one"), Invocation(input="two")])
    talk = conversation(case)
    assert talk.turns == ("one", "two")
    builder = TrialBuilder(talk, {"t": ToolSpec(name="t")})
    for turn in talk.turns:
        builder.start_turn()
        builder.call("t", {"x": turn})
        builder.answer(f"said {turn}")
    builder.model_call("gpt-x", Usage(input_tokens=3, output_tokens=1))
    builder.visit("root")
    builder.visit("root")
    builder.visit("helper")
    trial = builder.build()
    assert [s.output for s in trial.steps] == ["said one", "said two"]
    assert trial.metadata["turn_outputs"] == ["said one", "said two"]
    assert [c.arguments for c in trial.tool_calls] == [{"x": "one"}, {"x": "two"}]
    assert trial.node_visits == ["root", "helper"]
    assert trial.tool_specs == {"t": ToolSpec(name="t")}
    assert trial.model_calls[0].usage.input_tokens == 3


def test_a_case_with_no_user_message_to_send_is_refused() -> None:
    with pytest.raises(ValueError, match="no user message"):
        conversation(EvalCase(input=[Message(role="assistant", content="hello")]))


def test_a_failed_run_hands_its_calls_to_the_trials_recorder() -> None:
    builder = TrialBuilder(conversation(EvalCase(input="hi")), {})
    recorder = TrialRecorder()
    with recording(recorder), pytest.raises(RuntimeError), builder.kept_on_failure():
        builder.call("charge", {"amount": 3}, "c1")
        raise RuntimeError("tool failed")
    assert [c.name for c in recorder.tool_calls] == ["charge"]
