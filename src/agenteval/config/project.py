"""`agenteval.yaml`: what it may hold (`ProjectConfig`), reading it with every mistake named
by file, line and key (a misspelt setting gets the one it most likely means), and what
`agenteval run TARGET` points at (`find_target`)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.agents.builtin import BuiltinAgentConfig
from agenteval.agents.http import HttpAgentConfig
from agenteval.engine.agent_spec import AGENT_KINDS, AgentSpec
from agenteval.errors import ConfigError
from agenteval.expansion import too_many_values
from agenteval.jsonsafe import MAX_VALUES
from agenteval.records import PYTHON_TARGET, pytest_test_of
from agenteval.suggestions import meant
from agenteval.yaml_syntax import explain_yaml_error, key_line

__all__ = ["CONFIG_NAMES", "JudgeSection", "ProjectConfig", "Target", "find_target"]

CONFIG_NAMES = ("agenteval.yaml", "agenteval.yml")
_DATASET_SUFFIXES = {".yaml", ".yml", ".json", ".jsonl", ".csv"}


class JudgeSection(BaseModel):
    """The `judge:` of agenteval.yaml, when it needs more than `provider:model`."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """`provider:model`, e.g. `openai:gpt-4o-mini`."""
    base_url: str | None = None
    params: dict[str, Any] = Field(default_factory=lambda: {"temperature": 0.0})
    timeout: float = Field(default=60.0, gt=0)
    retries: int = Field(default=3, ge=0)
    concurrency: int = Field(default=8, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    adaptive: bool = True
    cache: bool = True


_SECTION_FIELDS: dict[tuple[str, ...], Any] = {
    ("agent", "http"): HttpAgentConfig.model_fields,
    ("agent", "builtin"): BuiltinAgentConfig.model_fields,
    ("judge",): JudgeSection.model_fields,
    ("user_simulator",): JudgeSection.model_fields,
}


class ProjectConfig(BaseModel):
    """What `agenteval.yaml` may hold. Paths in it are relative to the file."""

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = None
    agent: AgentSpec | None = None
    """`module:function`, `path/to/file.py:function`, `{url: ...}` or `{model: ...}`."""
    scorers: list[str | dict[str, Any]] = Field(default_factory=list)
    builtins: bool = True
    trials: int | None = Field(default=None, ge=1)
    concurrency: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    retries: int | None = Field(default=None, ge=0)
    store: str | None = None
    judge: str | JudgeSection | None = None
    user_simulator: str | JudgeSection | None = None
    """The model that plays the user of cases with a `user_simulation` and no `script`:
    `provider:model`, or the judge's mapping form (model, base_url, params, timeout, ...)."""
    rubrics: list[str] | None = None
    """The judge rubrics to score with (all four when a judge is set and this is not)."""
    prices: dict[str, Any] | None = None
    """Model prices in USD per million tokens, added to (or replacing) the shipped table."""
    infrastructure_errors: list[str] = Field(default_factory=list)
    """Exception classes (`module:Class`, `module.Class` or `path/to/file.py:Class`) that are
    infrastructure failures when an agent raises them: retried, and never scored as the
    agent's failure (`load_infrastructure_errors`)."""
    otlp_endpoint: str | None = None
    """An OTLP/HTTP base URL each score is also sent to (`gen_ai.evaluation.result` events)."""
    otlp_receiver: int | None = Field(default=None, ge=0, le=65535)
    """The port of an OTLP/HTTP receiver for spans of agents in other processes (0: any)."""
    otlp_wait: float | None = Field(default=None, ge=0)
    """Seconds a trial waits for its agent service's spans after the answer."""
    tool_mocks: Any = None  # what tools answer in every case: `RunOptions.tool_mocks` checks it
    executor: str | None = None
    """Where trials run: `local`, `process` or `ray` (`RunOptions.executor` checks it)."""
    workers: int | None = None
    ray_address: str | None = None
    worker_memory_mb: int | None = None


@dataclass(frozen=True)
class Target:
    """What `agenteval run TARGET` points at: a config (and its folder), or a bare dataset."""

    path: Path
    config: ProjectConfig
    base_dir: Path
    dataset: Path | None

    @property
    def key(self) -> str:
        """How runs of this target are found again for `--resume`."""
        return str(self.path.resolve())


def _read_config(path: Path) -> ProjectConfig:
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as exc:
        raise ConfigError(f"cannot read the config: {exc.strerror}", file=path) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the config is not UTF-8 text (byte {exc.start})", file=path, hint="save it as UTF-8"
        ) from exc
    except yaml.MarkedYAMLError as exc:
        problem = explain_yaml_error(exc, text)
        raise ConfigError(problem.message, file=path, line=problem.line, hint=problem.hint) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}".splitlines()[0], file=path) from exc
    except RecursionError as exc:  # the YAML parser recurses once per level of nesting
        raise ConfigError(
            "invalid YAML: nested too deeply", file=path, hint="a config is a few levels deep"
        ) from exc
    if data is None:
        data = {}
    too_many = too_many_values(data)  # an alias bomb, small in the file, huge written out
    if too_many is not None:
        raise ConfigError(
            f"invalid YAML: its aliases expand to more than {MAX_VALUES:,} values",
            file=path,
            line=key_line(text, str(too_many[0])) if too_many else None,
            field=".".join(map(str, too_many)) or None,
            hint="an alias (*name) is written out in full wherever it is used: use it fewer times",
        )
    if not isinstance(data, dict):
        raise ConfigError(
            "the config must be a mapping of settings",
            file=path,
            hint="see the README's agenteval.yaml section",
        )
    try:
        return ProjectConfig.model_validate(data)
    except ValidationError as exc:
        error, loc = _first_error(exc, data)
        # `agent.http.timeout` is written `agent: {timeout: ...}`: name it as written.
        agent_kind = len(loc) > 1 and loc[0] == "agent" and loc[1] in AGENT_KINDS
        shown = loc[:1] + loc[2:] if agent_kind else loc
        field = ".".join(shown)
        top = loc[0] if loc else ""
        hint = None
        if error["type"] == "extra_forbidden":
            message, hint = _unknown_setting(loc, data)
        else:
            message = f"{error['msg'].removeprefix('Value error, ')} (got {error.get('input')!r})"
        inner = loc[1:] if top in _MODEL_SECTIONS else ()
        raise ConfigError(
            message, file=path, line=key_line(text, top, *inner), field=field, hint=hint
        ) from exc


_MODEL_SECTIONS = ("judge", "user_simulator")
"""Settings written as `provider:model` or as a `JudgeSection` mapping."""


def _first_error(exc: ValidationError, data: dict[str, Any]) -> tuple[Any, tuple[str, ...]]:
    """The error to say and its location. A model section given as a mapping is said as a
    `JudgeSection`'s mistake (`judge.concurency`), not as pydantic's first branch of the
    union (`judge.str`: not a string)."""
    errors = exc.errors()
    for error in errors:
        loc = tuple(str(part) for part in error["loc"])
        if (
            len(loc) > 1
            and loc[0] in _MODEL_SECTIONS
            and loc[1] == JudgeSection.__name__
            and isinstance(data.get(loc[0]), dict)
        ):
            return error, (loc[0], *loc[2:])
    return errors[0], tuple(str(part) for part in errors[0]["loc"])


# What other tools (and people) call agenteval.yaml's settings: suggested before a spelling
# match, and only when the file, so renamed, would be valid.
_MEANINGS: dict[str, str | tuple[str, ...]] = {
    **dict.fromkeys(
        ("datasets", "cases", "data", "dataset_path", "cases_file", "case_file", "eval_set"),
        "dataset",
    ),
    **dict.fromkeys(("agents", "agent_ref", "function", "entrypoint", "entry_point"), "agent"),
    **dict.fromkeys(("scorer", "metrics", "metric", "evaluators", "scoring"), "scorers"),
    **dict.fromkeys(("trial", "repeats", "repeat", "runs", "samples", "epochs"), "trials"),
    **dict.fromkeys(("parallel", "parallelism", "jobs"), "concurrency"),
    **dict.fromkeys(("executors", "backend", "runner"), "executor"),
    **dict.fromkeys(("retry", "max_retries"), "retries"),
    **dict.fromkeys(("timeout_s", "time_limit"), "timeout"),
    **dict.fromkeys(("rubric", "criteria"), "rubrics"),
    **dict.fromkeys(("judge_model", "grader"), "judge"),
    **dict.fromkeys(
        ("simulator", "user_model", "simulated_user", "user_simulator_model"), "user_simulator"
    ),
    **dict.fromkeys(("pricing", "price", "costs"), "prices"),
    **dict.fromkeys(("db", "database", "store_path"), "store"),
}


def _unknown_setting(loc: tuple[str, ...], data: dict[str, Any]) -> tuple[str, str]:
    """The message and hint for a key agenteval.yaml does not know: the setting it most likely
    means, as a rename that makes the file valid (and written out when the value must become a
    list, as `scorer: exact_match` must)."""
    key = loc[-1]
    section = loc[:-1]
    known = _SECTION_FIELDS.get(section, ProjectConfig.model_fields)
    if section:  # a key inside `agent:`: by spelling
        spelt = difflib.get_close_matches(key, list(known), n=1)
        if spelt:
            return "unknown setting", f"rename {key!r} to {spelt[0]!r}"
        return "unknown setting", "known settings: " + ", ".join(known)
    value = data[key]
    listed: dict[str, str] = {}

    def fits(name: str) -> bool:
        if name in data:
            return False
        if _valid_as(data, key, name, value):
            return True
        if not isinstance(value, list) and _valid_as(data, key, name, [value]):
            listed[name] = f"{name}: " + yaml.safe_dump([value], default_flow_style=True).strip()
            return True
        return False

    close = meant(key, known, _MEANINGS, fits)
    if close is None:
        return "unknown setting", "known settings: " + ", ".join(known)
    if close in listed:
        return (
            f"unknown setting — did you mean {close!r}?",
            f"rename {key!r} to {close!r} and make it a list: `{listed[close]}`",
        )
    return f"unknown setting — did you mean {close!r}?", f"rename {key!r} to {close!r}"


def _valid_as(data: dict[str, Any], key: str, name: str, value: Any) -> bool:
    """Whether the setting `key` holds would be valid as `name` (other mistakes aside)."""
    renamed = {name if k == key else k: (value if k == key else v) for k, v in data.items()}
    try:
        ProjectConfig.model_validate(renamed)
    except ValidationError as exc:
        return not any(error["loc"][:1] == (name,) for error in exc.errors())
    return True


def _looks_like_config(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return False  # not a config: reading it as a case file says what is wrong with it
    return (
        isinstance(data, dict)
        and "cases" not in data
        and bool(set(data) & set(ProjectConfig.model_fields))
    )


def _not_a_path_hint(target: str) -> str:
    """The hint for a TARGET that does not exist: a target `agenteval runs` lists for a run
    made from Python or by pytest is no path, and says what runs those instead."""
    test = pytest_test_of(target)
    if test is not None:
        return f"that run was made by pytest: `pytest {test}` runs its cases again"
    if target.startswith(PYTHON_TARGET):
        return (
            "that run was made from Python: `agenteval.evaluate(agent, cases)` runs it again, "
            '`agenteval.evaluate(agent, cases, resume="RUN_ID")` finishes a stopped one'
        )
    return "check the path"


def find_target(target: str | Path) -> Target:
    """Read what `agenteval run TARGET` names: a folder holding agenteval.yaml, a config file,
    or a dataset file."""
    path = Path(target)
    if path.is_dir():
        for name in CONFIG_NAMES:
            if (path / name).is_file():
                return _config_target(path / name)
        raise ConfigError(
            f"no {CONFIG_NAMES[0]} in {path}",
            hint="point at a config file or a dataset file, or add agenteval.yaml to the folder",
        )
    if not path.exists():
        raise ConfigError(f"no such file or folder: {path}", hint=_not_a_path_hint(str(target)))
    if path.suffix not in _DATASET_SUFFIXES:
        raise ConfigError(
            f"{path} is neither a config nor a dataset",
            hint="a dataset is .yaml, .yml, .json, .jsonl or .csv; a config is agenteval.yaml",
        )
    if path.name in CONFIG_NAMES or (path.suffix in {".yaml", ".yml"} and _looks_like_config(path)):
        return _config_target(path)
    return Target(path=path, config=ProjectConfig(), base_dir=Path.cwd(), dataset=path)


def _config_target(path: Path) -> Target:
    config = _read_config(path)
    base = path.parent
    dataset = base / config.dataset if config.dataset else None
    return Target(path=path, config=config, base_dir=base, dataset=dataset)
