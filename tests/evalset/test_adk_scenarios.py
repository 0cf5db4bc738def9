"""ADK's `conversation_scenario` (a simulated user) read into a case's `user_simulation`, with
the `user_simulator_config` of the `test_config.json` beside the file (or of an `EvalConfig`).

ADK's own two files (`data/adk_simulation`, see its README) load; a mistake in a scenario is one
message naming the file, the line, the case and the field.
"""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval import DatasetError, EvalCase, load_cases
from agenteval.errors import ConfigError
from agenteval.evalset import EvalConfig, EvalSet

DATA = Path(__file__).parent / "data" / "adk_simulation"


def write(folder: Path, name: str, data: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def scenario_set(scenario: dict[str, Any], **case: Any) -> dict[str, Any]:
    return {
        "eval_set_id": "s",
        "eval_cases": [{"eval_id": "CS-1", "conversation_scenario": scenario, **case}],
    }


# --- ADK's own files


def test_adks_conversation_scenario_file_loads_with_its_test_config() -> None:
    eval_set = EvalSet.load(DATA / "conversation_scenario.test.json")
    [case] = eval_set.cases
    assert case.id == "CS-1"
    assert not case.conversation and case.input is None
    simulation = case.user_simulation
    assert simulation is not None
    assert simulation.starting_prompt == "Hello"
    assert simulation.goal == "Ask the agent to do something"
    assert simulation.persona is None
    # test_config.json beside it: "max_allowed_invocations": 10, "model": "gemini-2.5-flash"
    assert simulation.max_turns == 10
    assert simulation.extra["model"] == "google:gemini-2.5-flash"
    assert simulation.extra["user_simulator_config"] == {
        "model": "gemini-2.5-flash",
        "max_allowed_invocations": 10,
    }
    # `agenteval run FILE` reads the same cases
    assert load_cases(DATA / "conversation_scenario.test.json") == eval_set.cases


def test_adks_live_sample_loads_with_the_prebuilt_persona() -> None:
    registry = pytest.importorskip("google.adk.evaluation.simulation.pre_built_personas")
    novice = registry.get_default_persona_registry().get_persona("NOVICE")
    eval_set = EvalSet.load(DATA / "live" / "live_non_blocking_tool_agent.evalset.json")
    scenario, scripted = eval_set.cases
    assert scenario.id == "background_task_scenario"
    simulation = scenario.user_simulation
    assert simulation is not None
    assert simulation.starting_prompt.startswith("Hi, can you kick off")
    assert simulation.goal is not None and "index my documents" in simulation.goal
    # the persona, as ADK's registry has it: its description and behaviours in the text...
    assert simulation.persona is not None
    assert novice.description in simulation.persona
    for behavior in novice.behaviors:
        assert behavior.description.split("{{")[0][:40] in simulation.persona
    # ...and its structure kept as given by the registry
    assert simulation.extra["user_persona"] == novice.model_dump(mode="json")
    # no test_config.json beside it: ADK's default limit of 20 invocations
    assert simulation.max_turns == 20
    assert "model" not in simulation.extra
    assert scripted.user_simulation is None and len(scripted.conversation) == 2
    assert scenario.metadata["session_input"]["app_name"] == "live_non_blocking_tool_agent"


# --- a scenario written by hand


def test_a_persona_object_becomes_the_persona_text(tmp_path: Path) -> None:
    persona = {
        "id": "terse",
        "description": "Writes very short messages.",
        "behaviors": [
            {
                "name": "short",
                "description": "Answers in a few words.",
                "behavior_instructions": ["Never write more than ten words."],
                "violation_rubrics": ["The reply is longer than ten words."],
            }
        ],
    }
    path = write(
        tmp_path,
        "p.evalset.json",
        scenario_set(
            {"startingPrompt": "hi", "conversationPlan": "Book a table.", "userPersona": persona}
        ),
    )
    [case] = EvalSet.load(path).cases
    simulation = case.user_simulation
    assert simulation is not None
    assert simulation.persona is not None
    for text in ("Writes very short messages.", "Answers in a few words.", "ten words."):
        assert text in simulation.persona
    assert "longer than ten words" not in simulation.persona  # a rubric judges, it is no rule
    assert simulation.extra["user_persona"] == persona
    assert simulation.max_turns == 20


def test_an_unknown_persona_id_names_the_known_ones(tmp_path: Path) -> None:
    pytest.importorskip("google.adk.evaluation.simulation.pre_built_personas")
    path = write(
        tmp_path,
        "p.evalset.json",
        scenario_set({"starting_prompt": "hi", "conversation_plan": "x", "user_persona": "NOVISE"}),
    )
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    error = caught.value
    assert "NOVISE" in error.message
    assert error.case == "CS-1"
    assert error.field == "eval_cases.0.conversation_scenario.user_persona"
    assert error.line == 9
    assert error.hint is not None and "NOVICE" in error.hint


def test_a_persona_id_without_google_adk_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_adk(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("google.adk"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_adk)
    path = write(
        tmp_path,
        "p.evalset.json",
        scenario_set({"starting_prompt": "hi", "conversation_plan": "x", "user_persona": "EXPERT"}),
    )
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    assert "EXPERT" in caught.value.message
    assert caught.value.hint is not None and "agenteval[adk]" in caught.value.hint


@pytest.mark.parametrize(
    ("scenario", "field", "words"),
    [
        ({"starting_prompt": "hi"}, "conversation_plan", "needs a conversation_plan"),
        ({"starting_prompt": "hi", "conversation_plan": " "}, "conversation_plan", "is empty"),
        ({"conversation_plan": "x"}, "starting_prompt", "needs a starting_prompt"),
        (
            {"starting_prompt": "hi", "conversation_plan": "x", "user_persone": "EXPERT"},
            "user_persone",
            "user_persona",
        ),
        ({"starting_prompt": 3, "conversation_plan": "x"}, "starting_prompt", "text"),
        (
            {"starting_prompt": "hi", "conversation_plan": "x", "user_persona": {"id": "p"}},
            "user_persona",
            "description",
        ),
    ],
)
def test_a_mistake_in_a_scenario_is_named(
    tmp_path: Path, scenario: dict[str, Any], field: str, words: str
) -> None:
    path = write(tmp_path, "p.evalset.json", scenario_set(scenario))
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    error = caught.value
    assert error.case == "CS-1"
    assert error.field is not None and error.field.startswith("eval_cases.0.conversation_scenario")
    assert field in (error.field + (error.hint or "") + error.message)
    assert words in error.message + (error.hint or "")
    assert error.line is not None


def test_a_conversation_and_a_scenario_both_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.evalset.json",
        scenario_set(
            {"starting_prompt": "hi", "conversation_plan": "x"},
            conversation=[{"user_content": {"parts": [{"text": "hi"}]}}],
        ),
    )
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(path)
    assert "conversation_scenario" in caught.value.message
    assert caught.value.case == "CS-1"


# --- user_simulator_config


def test_the_config_beside_gives_instructions_and_limit(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s.evalset.json",
        scenario_set({"starting_prompt": "hi", "conversation_plan": "x"}),
    )
    instructions = (
        "Plan {{ conversation_plan }} so far {{ conversation_history }} {{ stop_signal }}"
    )
    write(
        tmp_path,
        "test_config.json",
        {
            "criteria": {"safety_v1": 0.8},
            "userSimulatorConfig": {
                "type": "llm_backed",
                "model": "openai:gpt-4o-mini",
                "maxAllowedInvocations": 4,
                "custom_instructions": instructions,
            },
        },
    )
    [case] = EvalSet.load(tmp_path / "s.evalset.json").cases
    simulation = case.user_simulation
    assert simulation is not None
    assert simulation.max_turns == 4
    assert simulation.extra["instructions"] == instructions
    assert simulation.extra["model"] == "openai:gpt-4o-mini"
    config = EvalConfig.for_file(tmp_path / "s.evalset.json")
    assert config.user_simulator_config == {
        "type": "llm_backed",
        "model": "openai:gpt-4o-mini",
        "max_allowed_invocations": 4,
        "custom_instructions": instructions,
    }


@pytest.mark.parametrize(
    ("setting", "field", "words"),
    [
        ({"max_allowed_invocations": -1}, "max_allowed_invocations", "limit"),
        ({"max_allowed_invocations": "3"}, "max_allowed_invocations", "number"),
        ({"max_alowed_invocations": 3}, "max_alowed_invocations", "max_allowed_invocations"),
        ({"custom_instructions": "Be nice."}, "custom_instructions", "conversation_plan"),
        ({"model": ""}, "model", "model"),
    ],
)
def test_a_mistake_in_the_simulator_config_is_named(
    tmp_path: Path, setting: dict[str, Any], field: str, words: str
) -> None:
    write(
        tmp_path,
        "s.evalset.json",
        scenario_set({"starting_prompt": "hi", "conversation_plan": "x"}),
    )
    config = write(tmp_path, "test_config.json", {"user_simulator_config": setting})
    with pytest.raises(DatasetError) as caught:
        EvalSet.load(tmp_path / "s.evalset.json")
    error = caught.value
    assert error.file == str(config)
    assert error.field == f"user_simulator_config.{field}"
    assert error.line == 3
    assert words in error.message + (error.hint or "")
    with pytest.raises(ConfigError) as told:
        EvalConfig.load(config)
    assert told.value.field == f"user_simulator_config.{field}"


def test_an_eval_configs_simulator_config_applies_to_the_cases() -> None:
    config = EvalConfig.from_adk(
        {"criteria": {"safety_v1": 0.5}, "user_simulator_config": {"max_allowed_invocations": 3}}
    )
    [case] = EvalSet.load(DATA / "conversation_scenario.test.json").cases
    [changed] = config.simulated_cases([case])
    assert changed.user_simulation is not None
    assert changed.user_simulation.max_turns == 3
    # the model the file's config named stays: this config names none
    assert changed.user_simulation.extra["model"] == "google:gemini-2.5-flash"


def test_adks_own_eval_config_object_keeps_its_simulator_config() -> None:
    adk_config = pytest.importorskip("google.adk.evaluation.eval_config")
    from agenteval.evalset import dropin

    given = adk_config.EvalConfig.model_validate(
        {
            "criteria": {"safety_v1": 0.5},
            "user_simulator_config": {"model": "gemini-2.5-flash", "max_allowed_invocations": 5},
        }
    )
    config = dropin.eval_config_of(None, given)
    assert config.user_simulator_config is not None
    assert config.user_simulator_config["max_allowed_invocations"] == 5
    [case] = config.simulated_cases(EvalSet.load(DATA / "conversation_scenario.test.json").cases)
    assert case.user_simulation is not None and case.user_simulation.max_turns == 5


# --- written back


def test_a_scenario_is_written_back_as_adks_and_read_back_the_same(tmp_path: Path) -> None:
    adk_eval_set = pytest.importorskip("google.adk.evaluation.eval_set")
    live = EvalSet.load(DATA / "live" / "live_non_blocking_tool_agent.evalset.json")
    own = EvalSet(
        id="own",
        cases=[
            EvalCase(
                id="scripted",
                user_simulation={
                    "goal": "A refund.",
                    "persona": "Terse.",
                    "starting_prompt": "Hi",
                    "max_turns": 4,
                    "script": "users:refund",
                    "extra": {"note": 1},
                },
            ),
            EvalCase(id="written-first", input="Hello", user_simulation={"goal": "A refund."}),
        ],
    )
    for eval_set in (live, own):
        path = eval_set.save(tmp_path / f"{eval_set.id}.evalset.json")
        data = json.loads(path.read_text(encoding="utf-8"))
        adk_eval_set.EvalSet.model_validate(data)  # google-adk accepts what is written
        again = EvalSet.load(path)
        for case, read in zip(eval_set.cases, again.cases, strict=True):
            assert read.user_simulation == case.user_simulation or (
                # a persona written as text comes back with its ADK structure beside it
                read.user_simulation is not None
                and case.user_simulation is not None
                and read.user_simulation.model_copy(update={"extra": case.user_simulation.extra})
                == case.user_simulation
            )
    written = json.loads((tmp_path / "own.evalset.json").read_text(encoding="utf-8"))
    first, second = written["eval_cases"]
    assert first["conversation_scenario"]["conversation_plan"] == "A refund."
    assert "conversation" not in first
    assert first["agenteval"]["case"]["user_simulation"] == {
        "max_turns": 4,
        "script": "users:refund",
        "extra": {"note": 1},
    }
    # written turns first: the conversation for ADK, the simulated user agenteval's
    assert "conversation_scenario" not in second
    assert second["agenteval"]["case"]["user_simulation"]["goal"] == "A refund."


def test_a_simulated_user_adk_cannot_hold_is_refused_on_writing(tmp_path: Path) -> None:
    eval_set = EvalSet(id="s", cases=[EvalCase(id="c", user_simulation={"goal": "A refund."})])
    with pytest.raises(DatasetError) as caught:
        eval_set.save(tmp_path / "s.evalset.json")
    assert caught.value.case == "c" and "starting_prompt" in (caught.value.hint or "")
