"""ADK's simulated users: an eval case's `conversation_scenario` read into the case's
`user_simulation`, and the `user_simulator_config` of an eval config (`test_config.json`).

| ADK | `UserSimulation` |
|---|---|
| `starting_prompt` | `starting_prompt` (the first message, as written) |
| `conversation_plan` | `goal` |
| `user_persona`, an object | `persona`: its description and behaviours (their instructions) as text; the object as given in `extra["user_persona"]` |
| `user_persona`, an id (`NOVICE`, `EXPERT`, `EVALUATOR`) | the same, from google-adk's own registry of pre-built personas (google-adk must be installed: `pip install 'agenteval[adk]'`) |
| `user_simulator_config.max_allowed_invocations` | `max_turns` (both count every user message, the starting prompt included); ADK's default, 20, when the config does not say |
| `user_simulator_config.custom_instructions` | `extra["instructions"]` |
| `user_simulator_config.model` | `extra["model"]`, as a `provider:model` simulator (`gemini-2.5-flash` → `google:gemini-2.5-flash`): the simulator of a run that names none |
| `user_simulator_config` itself | `extra["user_simulator_config"]`, as given (snake_case) |

A persona's texts may hold ADK's `{{ stop_signal }}` (the token ADK's simulator writes to end
the conversation); agenteval's simulator stops with a structured stop instead, so the persona
text says "stop the conversation" there. Its `violation_rubrics` are not rules for the user but
checks on it: they stay in `extra["user_persona"]`, for `per_turn_user_simulator_quality_v1`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.case import EvalCase
from agenteval.casefiles.adk_keys import camel, unknown_key
from agenteval.casefiles.adk_walk import AdkWalker, describe_json
from agenteval.casefiles.positions import Loc
from agenteval.errors import DatasetError
from agenteval.user_simulation import UserSimulation

__all__ = [
    "ADK_MAX_INVOCATIONS",
    "SettingProblem",
    "SimulatorSettings",
    "merged",
    "persona_text",
    "prebuilt_persona",
    "read_scenario",
    "scenario_json",
    "scenario_rest",
    "simulated",
    "simulator_settings",
]

ADK_MAX_INVOCATIONS = 20
"""ADK's `max_allowed_invocations` when its config does not say: a scenario read from an ADK
file holds at most this many user messages."""

_STOP_SIGNAL = re.compile(r"\{\{\s*stop_signal\s*\}\}")
_STOP_WORDS = "stop the conversation"
_REQUIRED_PLACEHOLDERS = ("stop_signal", "conversation_plan", "conversation_history")
"""What ADK requires of `custom_instructions` (`LlmBackedUserSimulatorConfig`)."""


# --- the eval case's conversation_scenario


def read_scenario(walker: AdkWalker, data: Any, loc: Loc, case: str | int) -> UserSimulation:
    """The `UserSimulation` of the `conversation_scenario` at `loc` (ADK's
    `ConversationScenario`: `starting_prompt` and `conversation_plan` required)."""
    scenario = walker.checked(
        data,
        loc,
        "conversation_scenario",
        "a conversation scenario",
        case,
        'write {"starting_prompt": "...", "conversation_plan": "..."}',
    )
    texts: dict[str, str] = {}
    for name in ("starting_prompt", "conversation_plan"):
        value, key = walker.get(scenario, name)
        if value is None:
            raise walker.error(
                f"a conversation_scenario needs a {name}",
                loc,
                case=case,
                hint=f"add {name!r}: the first message"
                if name == "starting_prompt"
                else f"add {name!r}: what the simulated user wants, step by step",
            )
        texts[name] = walker.text(value, (*loc, key), name, case)
        if name == "conversation_plan" and not texts[name].strip():
            # The simulated user's goal: with none, no one can play the user.
            raise walker.error(
                "a conversation_scenario's conversation_plan is empty",
                (*loc, key),
                case=case,
                hint="write what the simulated user wants, step by step",
            )
    fields: dict[str, Any] = {
        "starting_prompt": texts["starting_prompt"],
        "goal": texts["conversation_plan"],
        "max_turns": ADK_MAX_INVOCATIONS,
    }
    persona, persona_key = walker.get(scenario, "user_persona")
    if persona is not None:
        structure = _persona(walker, persona, (*loc, persona_key), case)
        fields["persona"] = persona_text(structure)
        fields["extra"] = {"user_persona": structure}
    return UserSimulation(**fields)


def _persona(walker: AdkWalker, value: Any, loc: Loc, case: str | int) -> dict[str, Any]:
    """A persona as ADK's `UserPersona` data: the object given, or a pre-built one by id."""
    if isinstance(value, str):
        try:
            return prebuilt_persona(value)
        except ModuleNotFoundError as exc:
            raise walker.error(
                f"the pre-built persona {value!r} is google-adk's, and google-adk is not installed",
                loc,
                case=case,
                hint="install it: pip install 'agenteval[adk]' (or write the persona as an "
                'object: {"id", "description", "behaviors"})',
            ) from exc
        except LookupError as exc:
            raise walker.error(
                f"no pre-built persona is named {value!r}",
                loc,
                case=case,
                hint=f"google-adk's pre-built personas: {exc.args[0]}",
            ) from exc
    persona = walker.checked(
        value,
        loc,
        "user_persona",
        "a user persona",
        case,
        'a persona id ("NOVICE") or {"id", "description", "behaviors"}',
    )
    for name in ("id", "description"):
        text, key = walker.get(persona, name)
        if text is None:
            raise walker.error(
                f"a user_persona needs a {name}",
                loc,
                case=case,
                hint='write {"id": "...", "description": "...", "behaviors": [...]}',
            )
        walker.text(text, (*loc, key), name, case)
    behaviors, behaviors_key = walker.get(persona, "behaviors")
    if behaviors is None:
        raise walker.error(
            "a user_persona needs its behaviors",
            loc,
            case=case,
            hint='list them: "behaviors": [{"name", "description", "behavior_instructions", '
            '"violation_rubrics"}] (or [] for none)',
        )
    for index, item in enumerate(walker.items(behaviors, (*loc, behaviors_key), "behaviors", case)):
        where = (*loc, behaviors_key, index)
        behavior = walker.checked(
            item,
            where,
            "a behavior",
            "a user behavior",
            case,
            'write {"name", "description", "behavior_instructions", "violation_rubrics"}',
        )
        for name in ("name", "description", "behavior_instructions", "violation_rubrics"):
            given, key = walker.get(behavior, name)
            if given is None:
                raise walker.error(
                    f"a behavior needs its {name}", where, case=case, hint=f"add {name!r}"
                )
            if name in ("name", "description"):
                walker.text(given, (*where, key), name, case)
            else:
                for i, line in enumerate(walker.items(given, (*where, key), name, case)):
                    walker.text(line, (*where, key, i), f"an entry of {name}", case)
    return _snake(persona)


def _snake(persona: Mapping[str, Any]) -> dict[str, Any]:
    """A persona with ADK's field names in snake_case (camelCase accepted on reading)."""
    names = {camel(f): f for f in ("behavior_instructions", "violation_rubrics")}
    behaviors = [
        {names.get(str(k), str(k)): v for k, v in b.items()} for b in persona.get("behaviors", [])
    ]
    return {**dict(persona), "behaviors": behaviors}


def prebuilt_persona(persona_id: str) -> dict[str, Any]:
    """google-adk's pre-built persona `persona_id`, as JSON data (its texts are google-adk's,
    read from the installed package, never copied into agenteval).

    Raises `ModuleNotFoundError` when google-adk is not installed, and `LookupError` (whose
    argument lists the known ids) when no persona has that id."""
    from google.adk.evaluation.simulation.pre_built_personas import (
        get_default_persona_registry,
    )

    registry = get_default_persona_registry()
    known = [persona.id for persona in registry.get_registered_personas()]
    if persona_id not in known:
        raise LookupError(", ".join(known))
    data: dict[str, Any] = registry.get_persona(persona_id).model_dump(mode="json")
    return data


def persona_text(persona: Mapping[str, Any]) -> str:
    """The persona as the simulator reads it: its description, then each behaviour with its
    instructions (the violation rubrics judge the user; they are not said to it)."""
    lines = [str(persona.get("description", "")).strip()]
    behaviors = list(persona.get("behaviors") or [])
    if behaviors:
        lines.append("")
        lines.append("How this user behaves:")
    for behavior in behaviors:
        lines.append(f"- {behavior.get('name', '')}: {behavior.get('description', '')}")
        lines += [f"  * {rule}" for rule in behavior.get("behavior_instructions") or []]
    return _STOP_SIGNAL.sub(_STOP_WORDS, "\n".join(lines)).strip()


# --- user_simulator_config


class SettingProblem(ValueError):
    """A mistake in a `user_simulator_config`: the message, the path of the key under the
    config, and the fix."""

    def __init__(self, message: str, path: tuple[str, ...], hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.hint = hint


@dataclass(frozen=True)
class SimulatorSettings:
    """ADK's `user_simulator_config`, as it applies to a simulated case: only what it gives
    changes the case (see the module's table)."""

    given: dict[str, Any] = field(default_factory=dict)
    """The config as written, keys in snake_case."""
    max_turns: int | None = None
    model: str | None = None
    """The simulator the config names, as `provider:model`."""
    instructions: str | None = None

    def apply(self, simulation: UserSimulation) -> UserSimulation:
        """`simulation` with what this config gives."""
        extra = {**simulation.extra, "user_simulator_config": self.given}
        if self.model is not None:
            extra["model"] = self.model
        if self.instructions is not None:
            extra["instructions"] = self.instructions
        update: dict[str, Any] = {"extra": extra}
        if self.max_turns is not None:
            update["max_turns"] = self.max_turns
        return simulation.model_copy(update=update)


def simulator_settings(data: Any) -> SimulatorSettings:
    """ADK's `user_simulator_config` (snake_case or camelCase) as `SimulatorSettings`; raises
    `SettingProblem` naming the key."""
    if not isinstance(data, Mapping):
        raise SettingProblem(
            f"user_simulator_config should be a JSON object, got {describe_json(data)}",
            (),
            'write {"model": "gemini-2.5-flash", "max_allowed_invocations": 10}',
        )
    found = unknown_key(data, "user_simulator_config")
    if found is not None:
        raise SettingProblem(
            f"unknown key {found.key!r} in user_simulator_config",
            (found.key,),
            f"did you mean {found.meant!r}?"
            if found.meant
            else "it takes: " + ", ".join(found.known),
        )
    given = {_snake_key(str(key)): value for key, value in data.items()}
    limit = given.get("max_allowed_invocations")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        key = _key_of(data, "max_allowed_invocations")
        if isinstance(limit, int) and not isinstance(limit, bool):
            raise SettingProblem(
                f"max_allowed_invocations {limit}: agenteval needs a limit of at least one "
                "message (ADK's -1, no limit, lets a conversation run on forever)",
                (key,),
                "give the most user messages a conversation may hold, e.g. 20",
            )
        raise SettingProblem(
            f"max_allowed_invocations should be a whole number, got {describe_json(limit)}",
            (key,),
            "write a number, e.g. 20",
        )
    model = given.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise SettingProblem(
            "the user simulator's model should be a model name",
            (_key_of(data, "model"),),
            'write "model": "gemini-2.5-flash" (or a provider:model, e.g. openai:gpt-4o-mini)',
        )
    instructions = given.get("custom_instructions")
    if instructions is not None:
        _check_instructions(instructions, _key_of(data, "custom_instructions"))
    return SimulatorSettings(
        given=given,
        max_turns=limit,
        model=_simulator_spec(model) if isinstance(model, str) else None,
        instructions=instructions,
    )


def _check_instructions(value: Any, key: str) -> None:
    """ADK's check of `custom_instructions`: a Jinja template using its three placeholders."""
    import jinja2
    from jinja2 import meta

    if not isinstance(value, str):
        raise SettingProblem(
            f"custom_instructions should be text, got {describe_json(value)}",
            (key,),
            "write the instructions as a JSON string",
        )
    try:
        used = meta.find_undeclared_variables(jinja2.Environment().parse(value))
    except jinja2.TemplateSyntaxError as exc:
        raise SettingProblem(
            f"custom_instructions is not a valid template: {exc.message}",
            (key,),
            "check the {{ ... }} placeholders",
        ) from exc
    missing = [name for name in _REQUIRED_PLACEHOLDERS if name not in used]
    if missing:
        raise SettingProblem(
            "custom_instructions lacks " + ", ".join("{{ " + name + " }}" for name in missing),
            (key,),
            "ADK's instructions use {{ stop_signal }}, {{ conversation_plan }} and "
            "{{ conversation_history }}",
        )


def _simulator_spec(model: str) -> str:
    """ADK's model name as an agenteval `provider:model` (as the judge reads `judge_model`)."""
    from agenteval.criteria.judging import judge_spec

    return judge_spec(model)


def _snake_key(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _key_of(data: Mapping[str, Any], name: str) -> str:
    return name if name in data else camel(name) if camel(name) in data else name


def simulated(cases: Iterable[EvalCase], settings: SimulatorSettings) -> list[EvalCase]:
    """`cases`, each simulated one with `settings` applied."""
    return [
        case.model_copy(update={"user_simulation": settings.apply(case.user_simulation)})
        if case.user_simulation is not None
        else case
        for case in cases
    ]


def settings_beside(source: Path, cases: list[EvalCase], config_name: str) -> list[EvalCase]:
    """`cases` with the `user_simulator_config` of the eval config `config_name` in the folder
    of `source` applied (as ADK reads `test_config.json` beside a test file); the cases as
    they are when none simulates its user or there is no such config. A mistake in the config
    raises `DatasetError` naming the config file, the line and the key."""
    from agenteval.casefiles.jsontext import JsonTree, parse_json
    from agenteval.casefiles.positions import line_in
    from agenteval.casefiles.source import read_text

    if not any(case.user_simulation is not None for case in cases):
        return cases
    path = source.parent / config_name
    if not path.is_file():
        return cases
    file = str(path)
    text = read_text(path, file)
    data, _ = parse_json(text, file)
    if not isinstance(data, Mapping):
        return cases  # not a config: EvalConfig.load says what is wrong with it
    key = next((k for k in ("user_simulator_config", "userSimulatorConfig") if k in data), None)
    if key is None or data[key] is None:
        return cases
    try:
        settings = simulator_settings(data[key])
    except SettingProblem as exc:
        raise DatasetError(
            exc.message,
            file=file,
            line=line_in(JsonTree(text).build(), (key, *exc.path)),
            field=".".join(("user_simulator_config", *exc.path)),
            hint=exc.hint,
        ) from exc
    return simulated(cases, settings)


# --- writing back


def scenario_json(simulation: UserSimulation) -> dict[str, Any] | None:
    """`simulation` as ADK's `conversation_scenario`, or None when ADK's scenario cannot hold
    it (no `starting_prompt` or no goal: ADK requires both). A persona read from ADK keeps its
    structure; a persona written as text becomes a persona with that description."""
    if simulation.starting_prompt is None or not (simulation.goal or "").strip():
        return None
    scenario: dict[str, Any] = {
        "starting_prompt": simulation.starting_prompt,
        "conversation_plan": simulation.goal,
    }
    structure = simulation.extra.get("user_persona")
    if isinstance(structure, dict):
        scenario["user_persona"] = structure
    elif (simulation.persona or "").strip():
        scenario["user_persona"] = {
            "id": "persona",
            "description": simulation.persona,
            "behaviors": [],
        }
    return scenario


def scenario_rest(simulation: UserSimulation) -> dict[str, Any]:
    """What ADK's scenario does not hold of `simulation` (written under the case's `agenteval`
    key and merged back on reading, `merged`): a `max_turns` other than ADK's default, a
    `script`, and the `extra` besides the persona's structure."""
    rest: dict[str, Any] = {}
    if simulation.max_turns != ADK_MAX_INVOCATIONS:
        rest["max_turns"] = simulation.max_turns
    if simulation.script is not None:
        rest["script"] = simulation.script
    extra = {k: v for k, v in simulation.extra.items() if k != "user_persona"}
    if extra:
        rest["extra"] = extra
    return rest


def merged(simulation: UserSimulation, rest: Mapping[str, Any]) -> dict[str, Any]:
    """The simulation a scenario gives, with what agenteval wrote beside it (`scenario_rest`)."""
    data = simulation.model_dump(exclude_unset=True)
    extra = rest.get("extra")
    data.update({k: v for k, v in rest.items() if k != "extra"})
    if isinstance(extra, Mapping):
        data["extra"] = {**simulation.extra, **extra}
    elif extra is not None:
        data["extra"] = extra  # not an object: the case's validation names it
    return data
