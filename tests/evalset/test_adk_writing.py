"""What agenteval writes as an ADK eval set, google-adk's own models accept, and agenteval reads
it back as it was.

ADK's models refuse extra keys below an eval case, so what ADK's schema has no place for (a
turn's `expected_node_order`, a rubric's weight) goes under the case's `agenteval` key, which
ADK keeps. A tool result that is not an object is written `{"result": value}`, as ADK's tools
return it; a session without `app_name` or `user_id` gets "" for them, as ADK's converter does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenteval import EvalCase, Invocation, Rubric, ToolCall
from agenteval.case import ExpectedCall
from agenteval.evalset import EvalSet
from agenteval.evalset.adk import AGENTEVAL_KEY, CASE_ONLY, FINAL_SESSION_STATE, SESSION_INPUT
from agenteval.evalset.adk_keys import LEVELS

adk_eval_set = pytest.importorskip("google.adk.evaluation.eval_set")

DATA = Path(__file__).parent / "data"

texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(
    str.strip
)
names = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
results = st.none() | json_values | st.dictionaries(st.text(max_size=5), json_values, max_size=3)
calls = st.builds(
    ToolCall,
    name=names,
    arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=3),
    id=st.none() | names,
    result=results,
)
rubrics = st.builds(
    Rubric,
    rubric_id=st.text(max_size=6),
    content=texts,
    weight=st.sampled_from([1.0, 0.5, 2.0, 3.0]),
)


@st.composite
def invocations(draw: st.DrawFn) -> Invocation:
    fields: dict[str, Any] = {"input": draw(texts)}
    if draw(st.booleans()):
        fields["expected_final_response"] = draw(texts)
    if draw(st.booleans()):
        # A result is matched to its call by id (by name alone two calls of one tool are
        # ambiguous, in ADK too): a call with a result has an id of its own.
        fields["expected_tool_trajectory"] = [
            call.model_copy(update={"id": f"call-{i}"}) if call.result is not None else call
            for i, call in enumerate(draw(st.lists(calls, max_size=3)))
        ]
    if draw(st.booleans()):
        fields["expected_node_order"] = draw(st.lists(names, max_size=3))
    if draw(st.booleans()):
        fields["rubrics"] = draw(st.lists(rubrics, min_size=1, max_size=2))
    return Invocation(**fields)


@st.composite
def cases(draw: st.DrawFn, index: int) -> EvalCase:
    metadata: dict[str, Any] = {}
    if draw(st.booleans()):
        session: dict[str, Any] = {"state": draw(st.dictionaries(names, json_values, max_size=2))}
        for key in ("app_name", "user_id", "session_id"):
            if draw(st.booleans()):
                session[key] = draw(names)
        metadata[SESSION_INPUT] = session
    if draw(st.booleans()):
        metadata[FINAL_SESSION_STATE] = draw(st.dictionaries(names, json_values, min_size=1))
    if draw(st.booleans()):
        metadata["owner"] = draw(names)
    return EvalCase(
        id=f"c{index}",
        conversation=draw(st.lists(invocations(), min_size=1, max_size=3)),
        rubrics=draw(st.none() | st.lists(rubrics, min_size=1, max_size=2)),
        tags=draw(st.lists(names, max_size=2, unique=True)),
        metadata=metadata,
    )


@st.composite
def eval_sets(draw: st.DrawFn) -> EvalSet:
    count = draw(st.integers(min_value=1, max_value=3))
    return EvalSet(
        id=draw(names),
        name=draw(st.none() | texts),
        description=draw(st.none() | texts),
        cases=[draw(cases(i)) for i in range(count)],
    )


def as_adk_writes_it(eval_set: EvalSet) -> EvalSet:
    """The set as it reads back: non-object tool results as `{"result": value}`, a session's
    missing `app_name` and `user_id` as ""."""
    changed = []
    for case in eval_set.cases:
        turns = [
            turn.model_copy(
                update={
                    "expected_tool_trajectory": [
                        call.model_copy(
                            update={
                                "result": call.result
                                if call.result is None or isinstance(call.result, dict)
                                else {"result": call.result}
                            }
                        )
                        for call in turn.expected_tool_trajectory
                    ]
                }
            )
            if "expected_tool_trajectory" in turn.model_fields_set
            else turn
            for turn in case.conversation or []
        ]
        metadata = dict(case.metadata)
        if SESSION_INPUT in metadata:
            metadata[SESSION_INPUT] = {"app_name": "", "user_id": "", **metadata[SESSION_INPUT]}
        changed.append(case.model_copy(update={"conversation": turns, "metadata": metadata}))
    return eval_set.model_copy(update={"cases": changed})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eval_set=eval_sets())
def test_adks_models_accept_every_eval_set_agenteval_writes(eval_set: EvalSet) -> None:
    text = json.dumps(eval_set.to_adk())

    adk_eval_set.EvalSet.model_validate_json(text)  # raises on a key or value ADK refuses

    assert EvalSet.from_adk(json.loads(text)) == as_adk_writes_it(eval_set)


@pytest.mark.parametrize(
    "name",
    [
        "weather.evalset.json",
        "booking_camel.evalset.json",
        "old_format.evalset.json",
        "folder/a.evalset.json",
        "folder/sub/b.test.json",
        "legacy/home.test.json",
        "adk_corpus/bigquerybench_eval.json",
        "adk_corpus/basic.evalset.json",
        "adk_corpus/inspire.test.json",
        "adk_corpus/elicitation_flow.test.json",
        "adk_corpus/crypto_payroll_eval_set.evalset.json",
    ],
)
def test_every_file_read_and_saved_is_accepted_by_adk(tmp_path: Path, name: str) -> None:
    written = EvalSet.load(DATA / name).save(tmp_path / "copy.evalset.json")
    adk_eval_set.EvalSet.model_validate_json(written.read_text(encoding="utf-8"))


def test_node_order_and_weights_go_under_the_agenteval_key_and_come_back(tmp_path: Path) -> None:
    turn = Invocation(
        input="Weather in Rome?",
        expected_node_order=["router", "weather"],
        rubrics=[Rubric(rubric_id="short", content="Short.", weight=2.0)],
    )
    case = EvalCase(
        id="c1", conversation=[turn], rubrics=[Rubric(rubric_id="p", content="Polite", weight=3)]
    )
    eval_set = EvalSet(id="demo", cases=[case])

    path = eval_set.save(tmp_path / "demo.evalset.json")
    data = json.loads(path.read_text(encoding="utf-8"))

    written = data["eval_cases"][0]
    assert "expected_node_order" not in written["conversation"][0]
    assert "weight" not in written["conversation"][0]["rubrics"][0]
    assert written[AGENTEVAL_KEY] == {
        "turns": [{"expected_node_order": ["router", "weather"], "rubric_weights": [2.0]}],
        "rubric_weights": [3.0],
    }
    adk_eval_set.EvalSet.model_validate(data)
    assert EvalSet.load(path) == eval_set


def test_files_agenteval_wrote_before_still_read(tmp_path: Path) -> None:
    """Earlier versions wrote `expected_node_order` on the invocation and `weight` on the
    rubric (which ADK refuses): agenteval still reads them."""
    path = tmp_path / "old.evalset.json"
    path.write_text(
        json.dumps(
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {
                        "eval_id": "c",
                        "conversation": [
                            {
                                "user_content": {"parts": [{"text": "Hi"}]},
                                "expected_node_order": ["a", "b"],
                                "rubrics": [
                                    {
                                        "rubric_id": "r",
                                        "rubric_content": {"text_property": "Kind."},
                                        "weight": 2,
                                    }
                                ],
                            }
                        ],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    (turn,) = EvalSet.load(path).cases[0].conversation or []
    assert turn.expected_node_order == ["a", "b"]
    assert turn.rubrics[0].weight == 2.0


def test_case_fields_adk_has_no_place_for_are_kept_under_the_agenteval_key(
    tmp_path: Path,
) -> None:
    case = EvalCase(
        id="sum",
        input="2+2?",
        expected_output="4",
        expected_tools=["calculator"],
        max_tool_calls=2,
        relevant_docs=["arithmetic.md"],
        must_not_contain=["five"],
        keywords=["4"],
        context="Grade school maths.",
    )
    path = EvalSet(id="maths", cases=[case]).save(tmp_path / "maths.evalset.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    adk_eval_set.EvalSet.model_validate(data)

    (read,) = EvalSet.load(path).cases
    # A single-input case comes back as a one-turn conversation, its other fields kept.
    for field in CASE_ONLY:
        assert getattr(read, field) == getattr(case, field), field
    assert read.conversation is not None
    assert read.conversation[0].expected_final_response == "4"


def test_the_reader_takes_every_case_field_the_writer_puts_there() -> None:
    assert LEVELS["an agenteval case"].fields == CASE_ONLY


@st.composite
def single_input_cases(draw: st.DrawFn) -> EvalCase:
    fields: dict[str, Any] = {"id": draw(names), "input": draw(texts)}
    optional = {
        "expected_output": texts,
        "expected_trajectory": st.lists(
            st.builds(
                ExpectedCall,
                name=names,
                arguments=st.dictionaries(names, json_values, max_size=2),
            ),
            max_size=3,
        ),
        "expected_tools": st.lists(names, max_size=3),
        "max_tool_calls": st.integers(min_value=0, max_value=5),
        "relevant_docs": st.lists(texts, max_size=2),
        "must_not_contain": st.lists(texts, min_size=1, max_size=2),
        "keywords": st.lists(texts, min_size=1, max_size=2),
        "context": texts,
        "rubrics": st.lists(rubrics, min_size=1, max_size=2),
        "tags": st.lists(names, max_size=2, unique=True),
    }
    for field, strategy in optional.items():
        if draw(st.booleans()):
            fields[field] = draw(strategy)
    return EvalCase(**fields)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=single_input_cases())
def test_adks_models_accept_every_single_input_case_written(case: EvalCase) -> None:
    text = json.dumps(EvalSet(id="s", cases=[case]).to_adk())

    adk_eval_set.EvalSet.model_validate_json(text)

    (read,) = EvalSet.from_adk(json.loads(text)).cases
    # It comes back as a one-turn conversation, nothing it expects lost.
    for field in (*CASE_ONLY, "id", "tags", "rubrics"):
        assert getattr(read, field) == getattr(case, field), field
    (turn,) = read.conversation or []
    assert turn.input == case.input
    assert turn.expected_final_response == case.expected_output
    if case.expected_trajectory is not None:
        assert [(c.name, c.arguments) for c in turn.expected_tool_trajectory] == [
            (c.name, c.arguments) for c in case.expected_trajectory
        ]
