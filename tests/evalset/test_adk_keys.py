"""A key ADK does not know is an error naming the file, the line, the key and the key most
likely meant: read silently, `final_respons` drops the expected answer and a wrong agent passes.

Every key ADK's own models accept stays accepted: the reader's tables are checked against the
installed google-adk, and every ADK file of Google's own repositories in `data/adk_corpus` is read
as ADK reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval import DatasetError
from agenteval.evalset import EvalSet
from agenteval.evalset.adk_keys import LEVELS, camel

adk_eval_set = pytest.importorskip("google.adk.evaluation.eval_set")
adk_eval_case = pytest.importorskip("google.adk.evaluation.eval_case")
adk_rubrics = pytest.importorskip("google.adk.evaluation.eval_rubrics")
genai_types = pytest.importorskip("google.genai.types")
adk_personas = pytest.importorskip("google.adk.evaluation.simulation.user_simulator_personas")
adk_simulator = pytest.importorskip("google.adk.evaluation.simulation.llm_backed_user_simulator")

CORPUS = Path(__file__).parent / "data" / "adk_corpus"
EVAL_FILES = sorted(p for p in CORPUS.glob("*.json") if p.name != "test_config.json")

# Values that hold the user's own data, whose keys are not ADK's to check.
FREE_FORM = {
    "args",
    "response",
    "state",
    "final_session_state",
    "metadata",
    "tool_input",
    "mock_tool_output",
    "initial_session",
    "partial_args",
}


def adk_accepts(data: Any) -> bool:
    try:
        adk_eval_set.EvalSet.model_validate(data)
    except ValueError:
        return False
    return True


# --- the tables are ADK's


@pytest.mark.parametrize(
    ("level", "model"),
    [
        ("an eval set", "EvalSet"),
        ("an eval case", "EvalCase"),
        ("an invocation", "Invocation"),
        ("intermediate_data", "IntermediateData"),
        ("intermediate_data", "InvocationEvents"),
        ("an invocation event", "InvocationEvent"),
        ("session_input", "SessionInput"),
        ("a rubric", "Rubric"),
        ("rubric_content", "RubricContent"),
        ("a content", "Content"),
        ("a part", "Part"),
        ("a tool use", "FunctionCall"),
        ("a tool response", "FunctionResponse"),
        ("a conversation scenario", "ConversationScenario"),
        ("a user persona", "UserPersona"),
        ("a user behavior", "UserBehavior"),
        ("user_simulator_config", "LlmBackedUserSimulatorConfig"),
    ],
)
def test_every_field_of_adks_model_is_taken_by_the_reader(level: str, model: str) -> None:
    cls = next(
        getattr(module, model)
        for module in (
            adk_eval_set,
            adk_eval_case,
            adk_rubrics,
            genai_types,
            adk_personas,
            adk_simulator,
        )
        if hasattr(module, model)
    )
    fields = set(cls.model_fields)
    assert fields <= set(LEVELS[level].fields)
    # ADK strict where the reader is strict, tolerant where it is tolerant.
    assert (cls.model_config.get("extra") == "forbid") == LEVELS[level].strict or model in (
        "EvalSet",
        "InvocationEvent",
    )
    aliases = {camel(f) for f in fields}
    assert aliases <= LEVELS[level].names


# --- Google's own files


@pytest.mark.parametrize("path", EVAL_FILES, ids=lambda p: p.name)
def test_every_file_adk_accepts_is_read(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not adk_accepts(data):
        # ADK 2.13 refuses it (a legacy key inside an invocation); so does agenteval, saying
        # where the key goes in an eval set.
        assert path.name == "compliance_check.test.json"
        with pytest.raises(DatasetError, match="expected_tool_use") as caught:
            EvalSet.load(path)
        assert caught.value.line == 25
        assert caught.value.hint and "tool_uses" in caught.value.hint
        return
    eval_set = EvalSet.load(path)
    assert [case.id for case in eval_set.cases] == [c["eval_id"] for c in data["eval_cases"]]
    for case, written in zip(eval_set.cases, data["eval_cases"], strict=True):
        # ADK's simulated users: a scenario is the case's user_simulation
        assert (case.user_simulation is not None) == ("conversation_scenario" in written)


def schema_keys(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every key of ADK's schema in `value` (not keys inside the user's data)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*path, key)
            if key not in FREE_FORM:
                yield from schema_keys(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from schema_keys(inner, (*path, index))


def misspelt(data: Any, path: tuple[str | int, ...], wrong: str) -> Any:
    copy = json.loads(json.dumps(data))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    parent[wrong] = parent.pop(path[-1])
    return copy


READABLE = [p for p in EVAL_FILES if p.name != "compliance_check.test.json"]
MISSPELLINGS = [
    (path, key_path)
    for path in READABLE
    for key_path in schema_keys(json.loads(path.read_text(encoding="utf-8")))
]


@pytest.mark.parametrize(
    ("path", "key_path"),
    MISSPELLINGS,
    ids=[f"{p.name}:{'.'.join(map(str, k))}" for p, k in MISSPELLINGS],
)
def test_every_key_of_googles_files_misspelt_is_an_error_naming_it(
    tmp_path: Path, path: Path, key_path: tuple[str | int, ...]
) -> None:
    key = str(key_path[-1])
    wrong = key[:-1]  # the last letter lost: `final_respons`, `arg`, `tool_use`
    data = misspelt(json.loads(path.read_text(encoding="utf-8")), key_path, wrong)
    target = tmp_path / path.name
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")

    with pytest.raises(DatasetError) as caught:
        EvalSet.load(target)
    error = caught.value
    said = f"{error.message} {error.hint}"
    assert repr(wrong) in said
    assert key in said  # the key meant
    assert error.file == str(target)
    assert error.line is not None
    assert f'"{wrong}"' in target.read_text(encoding="utf-8").splitlines()[error.line - 1]


# --- the keys of the issue, at each level


def eval_set(**turn: Any) -> dict[str, Any]:
    invocation = {
        "invocation_id": "i-1",
        "user_content": {"role": "user", "parts": [{"text": "Book it"}]},
        "final_response": {"role": "model", "parts": [{"text": "Booked."}]},
        "intermediate_data": {"tool_uses": [{"name": "book", "args": {"day": "mon"}}]},
        **turn,
    }
    return {
        "eval_set_id": "travel",
        "eval_cases": [
            {
                "eval_id": "book",
                "conversation": [invocation],
                "session_input": {"app_name": "a", "user_id": "u", "state": {}},
                "rubrics": [{"rubric_id": "r", "rubric_content": {"text_property": "Polite."}}],
            }
        ],
    }


def test_final_respons_is_refused_with_the_key_meant(tmp_path: Path) -> None:
    data = eval_set()
    turn = data["eval_cases"][0]["conversation"][0]
    turn["final_respons"] = turn.pop("final_response")
    path = tmp_path / "travel.evalset.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)

    error = caught.value
    assert error.message == "unknown key 'final_respons' in an invocation"
    assert error.hint == "did you mean 'final_response'?"
    assert (error.case, error.field) == ("book", "eval_cases.0.conversation.0.final_respons")
    assert '"final_respons"' in path.read_text().splitlines()[(error.line or 0) - 1]
    assert not adk_accepts(data)  # ADK refuses it too


def test_arg_for_args_in_camel_case_is_refused_with_the_camel_key_meant(tmp_path: Path) -> None:
    data = eval_set()
    data["eval_cases"][0]["conversation"][0]["intermediateData"] = {
        "toolUses": [{"name": "book", "arg": {"day": "mon"}}]
    }
    del data["eval_cases"][0]["conversation"][0]["intermediate_data"]
    path = tmp_path / "travel.evalset.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    with pytest.raises(DatasetError, match="unknown key 'arg' in a tool use") as caught:
        EvalSet.load(path)
    assert caught.value.hint == "did you mean 'args'?"


def test_a_misspelt_key_where_adk_takes_extra_keys_is_still_refused(tmp_path: Path) -> None:
    """ADK keeps unknown keys of an eval case, so `final_session_stat` would check nothing."""
    data = eval_set()
    data["eval_cases"][0]["final_session_stat"] = {"booked": True}
    path = tmp_path / "travel.evalset.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    with pytest.raises(DatasetError, match="'final_session_stat' in an eval case") as caught:
        EvalSet.load(path)
    assert caught.value.hint == "did you mean 'final_session_state'?"


def test_a_key_unlike_any_where_adk_takes_extra_keys_is_read_as_adk_reads_it(
    tmp_path: Path,
) -> None:
    data = eval_set()
    data["eval_cases"][0]["notes"] = "written by hand"
    data["eval_cases"][0]["session_input"]["locale"] = "fr"
    data["eval_cases"][0]["conversation"][0]["intermediate_data"] = {
        "invocation_events": [{"author": "bot", "invocationIndex": 0}]
    }
    path = tmp_path / "travel.evalset.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert adk_accepts(data)

    case = EvalSet.load(path).case("book")
    assert case.metadata["session_input"]["locale"] == "fr"


@pytest.mark.parametrize(
    ("place", "wrong", "meant"),
    [
        ("invocation", "intermediate_dat", "intermediate_data"),
        ("content", "part", "parts"),
        ("part", "txt", "text"),
        ("intermediate", "tool_use", "tool_uses"),
        ("session", "user_di", "user_id"),
        ("rubric", "rubric_contents", "rubric_content"),
        ("rubric_content", "text_propery", "text_property"),
        ("case", "sesion_input", "session_input"),
        ("set", "descripton", "description"),
    ],
)
def test_a_misspelt_key_at_each_level_names_the_key_meant(
    tmp_path: Path, place: str, wrong: str, meant: str
) -> None:
    data = eval_set()
    case = data["eval_cases"][0]
    turn = case["conversation"][0]
    holder = {
        "invocation": turn,
        "content": turn["user_content"],
        "part": turn["user_content"]["parts"][0],
        "intermediate": turn["intermediate_data"],
        "session": case["session_input"],
        "rubric": case["rubrics"][0],
        "rubric_content": case["rubrics"][0]["rubric_content"],
        "case": case,
        "set": data,
    }[place]
    holder[wrong] = holder.pop(meant, "x")
    path = tmp_path / "travel.evalset.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    with pytest.raises(DatasetError, match=f"unknown key '{wrong}'") as caught:
        EvalSet.load(path)
    assert caught.value.hint == f"did you mean '{meant}'?"


def test_legacy_test_turn_keys_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "home.test.json"
    path.write_text(
        json.dumps(
            [{"query": "Lights off", "expected_tool_use": [{"tool_nam": "off", "tool_input": {}}]}],
            indent=2,
        )
    )
    with pytest.raises(DatasetError, match="'tool_nam' in a legacy tool use") as caught:
        EvalSet.load(path)
    assert caught.value.hint == "did you mean 'tool_name'?"
