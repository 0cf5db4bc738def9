"""Reading Google ADK eval sets and test files into `EvalSet` / `EvalCase`, and writing them back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.python_json import decode_error

from agenteval import DatasetError, EvalCase, Invocation, ToolCall, load_cases
from agenteval.evalset import EvalSet
from agenteval.evalset.adk import ADK_METADATA, FINAL_SESSION_STATE, SESSION_INPUT

DATA = Path(__file__).parent / "data"


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def one_turn(text: str = "Hi") -> dict[str, Any]:
    return {"user_content": {"role": "user", "parts": [{"text": text}]}}


# --- the current format


def test_an_adk_eval_set_becomes_an_eval_set_of_conversations() -> None:
    eval_set = EvalSet.load(DATA / "weather.evalset.json")

    assert eval_set.id == "weather_agent"
    assert eval_set.name == "Weather agent"
    assert [case.id for case in eval_set.cases] == ["paris_then_umbrella", "greeting"]

    paris = eval_set.case("paris_then_umbrella")
    assert paris.conversation is not None
    first, second = paris.conversation
    assert first.input == "What's the weather in Paris?"
    assert first.expected_final_response == "It is 18°C and raining in Paris."
    assert first.expected_tool_trajectory == [
        ToolCall(
            name="get_weather",
            arguments={"city": "Paris"},
            id="call-1",
            result={"temp_c": 18, "sky": "rain"},
        )
    ]
    # A thought part is the model thinking, not its answer.
    assert second.expected_final_response == "Yes, take an umbrella."
    assert second.expected_tool_trajectory == []


def test_rubrics_of_every_turn_and_of_the_case_are_kept() -> None:
    paris = EvalSet.load(DATA / "weather.evalset.json").case("paris_then_umbrella")
    assert paris.conversation is not None

    assert [[r.rubric_id for r in turn.rubrics] for turn in paris.conversation] == [
        ["gives_temperature"],
        ["answers_yes_or_no"],
    ]
    assert paris.conversation[0].rubrics[0].content == "The answer states the temperature."
    assert [r.rubric_id for r in paris.rubrics or []] == ["polite"]


def test_session_state_and_other_adk_fields_go_to_metadata() -> None:
    paris = EvalSet.load(DATA / "weather.evalset.json").case("paris_then_umbrella")

    assert paris.metadata[SESSION_INPUT] == {
        "app_name": "weather",
        "user_id": "u-42",
        "state": {"units": "metric"},
    }
    assert paris.metadata[FINAL_SESSION_STATE] == {"units": "metric", "last_city": "Paris"}
    assert paris.metadata[ADK_METADATA] == {
        "invocation_ids": ["e-1", "e-2"],
        "intermediate_responses": [
            [{"author": "router", "text": "Routing to the weather agent."}],
            [],
        ],
    }


def test_camel_case_keys_and_invocation_events_read_the_same() -> None:
    booking = EvalSet.load(DATA / "booking_camel.evalset.json")

    assert booking.id == "booking"
    case = booking.case("book_london")
    assert case.conversation is not None
    turn = case.conversation[0]
    assert turn.input == "Book a flight to London on 2026-05-15."
    assert [(c.name, c.arguments, c.result) for c in turn.expected_tool_trajectory] == [
        ("search_flights", {"to": "LON"}, {"flights": ["BA303"]}),
        ("book_flight", {"flight": "BA303", "date": "2026-05-15"}, None),
    ]
    assert case.metadata[SESSION_INPUT] == {
        "app_name": "travel",
        "user_id": "u-7",
        "session_id": "s-1",
        "state": {},
    }
    # ADK's default final state ({}) expects nothing.
    assert FINAL_SESSION_STATE not in case.metadata
    assert case.metadata[ADK_METADATA]["intermediate_responses"] == [
        [{"author": "planner", "text": "Looking for flights."}]
    ]


def test_load_cases_and_the_cli_path_read_adk_files() -> None:
    cases = load_cases(DATA / "weather.evalset.json")
    assert [case.id for case in cases] == ["paris_then_umbrella", "greeting"]
    assert all(case.turns for case in cases)


# --- the legacy formats


def test_a_legacy_test_file_is_one_multi_turn_case_with_its_session_file() -> None:
    eval_set = EvalSet.load(DATA / "legacy" / "home.test.json")

    assert eval_set.id == "home"
    (case,) = eval_set.cases
    assert case.id == "home"
    assert case.turns == ["Turn off device_2 in the Bedroom.", "What's the status of device_2?"]
    assert case.conversation is not None
    first, second = case.conversation
    assert first.expected_final_response == "I have set the device_2 status to off."
    assert first.expected_tool_trajectory == [
        ToolCall(
            name="set_device_info",
            arguments={"location": "Bedroom", "device_id": "device_2", "status": "OFF"},
        )
    ]
    assert second.expected_tool_trajectory[0].result == {"status": "OFF"}
    # initial.session.json beside the file is ADK's session file.
    assert case.metadata[SESSION_INPUT] == {
        "app_name": "home_automation",
        "user_id": "test_user",
        "state": {"home": "flat-3"},
    }


def test_an_initial_session_can_be_given(tmp_path: Path) -> None:
    path = write(tmp_path, "q.test.json", [{"query": "Hi", "reference": "Hello"}])

    case = EvalSet.load(path, initial_session={"state": {"lang": "fr"}}).cases[0]
    assert case.metadata[SESSION_INPUT] == {"state": {"lang": "fr"}}

    no_session = EvalSet.load(path).cases[0]
    assert SESSION_INPUT not in no_session.metadata


def test_the_legacy_eval_set_list_format() -> None:
    (case,) = EvalSet.load(DATA / "old_format.evalset.json").cases

    assert case.id == "roll_dice_twice"
    assert case.conversation is not None
    assert [c.name for c in case.conversation[1].expected_tool_trajectory] == [
        "roll_die",
        "roll_die",
    ]
    assert case.metadata[SESSION_INPUT]["app_name"] == "hello_world"


def test_a_folder_is_every_adk_file_under_it() -> None:
    eval_set = EvalSet.load(DATA / "folder")

    assert eval_set.id == "folder"
    assert sorted(case.id for case in eval_set.cases) == ["b", "one"]


def test_an_adk_eval_set_under_another_name_is_recognised(tmp_path: Path) -> None:
    copy = write(tmp_path, "weather.json", (DATA / "weather.evalset.json").read_text())
    assert EvalSet.load(copy) == EvalSet.load(DATA / "weather.evalset.json")


def test_other_case_files_load_as_a_set(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.yaml", "- id: q1\n  input: Hi\n")
    eval_set = EvalSet.load(path)
    assert (eval_set.id, [c.id for c in eval_set.cases]) == ("cases", ["q1"])


# --- writing and reading back


@pytest.mark.parametrize(
    "name", ["weather.evalset.json", "booking_camel.evalset.json", "old_format.evalset.json"]
)
def test_writing_an_eval_set_and_reading_it_back_gives_the_same_set(
    tmp_path: Path, name: str
) -> None:
    original = EvalSet.load(DATA / name)

    written = original.save(tmp_path / "copy.evalset.json")

    assert EvalSet.load(written) == original


def test_written_files_use_adk_field_names(tmp_path: Path) -> None:
    eval_set = EvalSet(
        id="demo",
        cases=[
            EvalCase(
                id="c1",
                conversation=[
                    Invocation(
                        input="Weather in Rome?",
                        expected_final_response="Sunny.",
                        expected_tool_trajectory=[ToolCall(name="get_weather", args={"c": "Rome"})],
                        expected_node_order=["router", "weather"],
                    )
                ],
                metadata={FINAL_SESSION_STATE: {"city": "Rome"}, "owner": "qa"},
                tags=["smoke"],
            )
        ],
    )
    data = eval_set.to_adk()

    case = data["eval_cases"][0]
    turn = case["conversation"][0]
    assert turn["user_content"] == {"role": "user", "parts": [{"text": "Weather in Rome?"}]}
    assert turn["final_response"] == {"role": "model", "parts": [{"text": "Sunny."}]}
    assert turn["intermediate_data"]["tool_uses"] == [
        {"name": "get_weather", "args": {"c": "Rome"}}
    ]
    assert case["final_session_state"] == {"city": "Rome"}
    assert EvalSet.from_adk(data) == eval_set


def test_only_what_a_turn_states_is_expected_and_that_survives_writing(tmp_path: Path) -> None:
    data = {
        "eval_set_id": "s",
        "eval_cases": [
            {
                "eval_id": "c",
                "conversation": [
                    one_turn("No tool expectations here"),
                    {**one_turn("Expect no tools"), "intermediate_data": {"tool_uses": []}},
                ],
            }
        ],
    }
    for eval_set in (
        EvalSet.from_adk(data),
        EvalSet.load(EvalSet.from_adk(data).save(tmp_path / "s.evalset.json")),
    ):
        unstated, empty = eval_set.cases[0].conversation or []
        # The criteria skip a trajectory nobody stated, and hold an explicit [] to "no calls".
        assert "expected_tool_trajectory" not in unstated.model_fields_set
        assert "expected_tool_trajectory" in empty.model_fields_set
        assert empty.expected_tool_trajectory == []


def test_single_input_cases_are_written_as_one_turn() -> None:
    case = EvalCase(id="q", input="2+2?", expected_output="4", expected_trajectory=["calculator"])
    data = EvalSet(id="s", cases=[case]).to_adk()

    (turn,) = data["eval_cases"][0]["conversation"]
    assert turn["user_content"]["parts"] == [{"text": "2+2?"}]
    assert turn["final_response"]["parts"] == [{"text": "4"}]
    assert turn["intermediate_data"]["tool_uses"] == [{"name": "calculator", "args": {}}]


texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(
    str.strip
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
calls = st.builds(
    ToolCall,
    name=texts,
    arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=3),
)
invocations = st.builds(
    Invocation,
    input=texts,
    expected_final_response=st.none() | texts,
    expected_tool_trajectory=st.lists(calls, max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(
    conversations=st.lists(st.lists(invocations, min_size=1, max_size=3), min_size=1, max_size=3)
)
def test_any_conversation_survives_the_adk_format(
    conversations: list[list[Invocation]],
) -> None:
    eval_set = EvalSet(
        id="prop",
        cases=[EvalCase(id=f"c{i}", conversation=turns) for i, turns in enumerate(conversations)],
    )
    through_json = json.loads(json.dumps(eval_set.to_adk()))
    assert EvalSet.from_adk(through_json) == eval_set


# --- mistakes, each with file, line, case, field and hint


def test_a_turn_without_user_content_names_the_case_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.evalset.json",
        {
            "eval_set_id": "s",
            "eval_cases": [
                {"eval_id": "c1", "conversation": [{"final_response": {"parts": [{"text": "Hi"}]}}]}
            ],
        },
    )
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    error = caught.value
    assert (error.file, error.case, error.field) == (str(path), "c1", "eval_cases.0.conversation.0")
    assert error.line is not None
    assert "no user_content" in error.message
    assert error.hint and "user_content" in error.hint


def test_a_typo_in_eval_cases_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.evalset.json", {"eval_set_id": "s", "eval_case": []})
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    assert caught.value.hint == "rename 'eval_case' to 'eval_cases'"


def test_a_legacy_turn_without_query(tmp_path: Path) -> None:
    path = write(tmp_path, "t.test.json", [{"query": "ok"}, {"reference": "x"}])
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    assert caught.value.message == "turn 2 has no query"
    assert caught.value.case == "t"
    assert caught.value.line == 1 + 1 + 3  # the second object of the list


def test_wrong_types_say_what_was_found(tmp_path: Path) -> None:
    bad = {
        "eval_set_id": "s",
        "eval_cases": [
            {
                "eval_id": "c",
                "conversation": [
                    {
                        "user_content": {"parts": [{"text": "hi"}]},
                        "intermediate_data": {"tool_uses": [{"name": "f", "args": "city=Paris"}]},
                    }
                ],
            }
        ],
    }
    path = write(tmp_path, "bad.evalset.json", bad)
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    assert caught.value.field == "eval_cases.0.conversation.0.intermediate_data.tool_uses.0.args"
    assert "got the text 'city=Paris'" in caught.value.message


def test_a_scenario_without_its_plan_is_refused_clearly(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "sim.test.json",
        {
            "eval_set_id": "s",
            "eval_cases": [
                {"eval_id": "CS-1", "conversation_scenario": {"starting_prompt": "Hello"}}
            ],
        },
    )
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    assert "conversation_scenario" in caught.value.message
    assert caught.value.case == "CS-1"


def test_duplicate_eval_ids_and_keys(tmp_path: Path) -> None:
    twice = write(
        tmp_path,
        "twice.evalset.json",
        {
            "eval_set_id": "s",
            "eval_cases": [
                {"eval_id": "c", "conversation": [one_turn()]},
                {"eval_id": "c", "conversation": [one_turn()]},
            ],
        },
    )
    with pytest.raises(DatasetError, match="also used by case 1"):
        EvalSet.load(twice)

    key_twice = write(tmp_path, "k.evalset.json", '{"eval_set_id": "a", "eval_set_id": "b"}')
    with pytest.raises(DatasetError, match="given twice") as caught:
        EvalSet.load(key_twice)
    assert caught.value.line == 1


def test_invalid_json_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="invalid JSON") as caught:
        EvalSet.load(write(tmp_path, "x.evalset.json", '{"eval_set_id": "s",\n}'))
    # The line the reader names: 2 on 3.11 and 3.12, the comma's 1 on 3.13.
    assert caught.value.line == decode_error('{"eval_set_id": "s",\n}').lineno
    with pytest.raises(DatasetError, match="empty"):
        EvalSet.load(write(tmp_path, "e.evalset.json", "  "))
    with pytest.raises(DatasetError, match="no eval cases"):
        load_cases(write(tmp_path, "n.evalset.json", {"eval_set_id": "s", "eval_cases": []}))


def test_a_single_case_instead_of_a_set(tmp_path: Path) -> None:
    path = write(tmp_path, "one.evalset.json", {"eval_id": "c", "conversation": [one_turn()]})
    with pytest.raises(DatasetError, match="single eval case") as caught:
        EvalSet.load(path)
    assert caught.value.hint is not None and "eval_cases" in caught.value.hint
