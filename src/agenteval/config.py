"""The project config (`agenteval.yaml`) and the one place settings resolve:
command-line flag, then environment (`AGENTEVAL_*`), then the config file, then the default."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.agents.builtin import BuiltinAgentConfig
from agenteval.agents.http import HttpAgentConfig
from agenteval.engine.agent_spec import AGENT_KINDS, AgentSpec, resolve_agent
from agenteval.engine.options import DEFAULT_CONCURRENCY, DEFAULT_RETRIES, OptionError, RunOptions
from agenteval.errors import AgentEvalError, ConfigError
from agenteval.exception_refs import exception_class, exception_classes
from agenteval.expansion import too_many_values
from agenteval.jsonsafe import MAX_VALUES
from agenteval.judge.judge import JudgeConfig
from agenteval.otel.live import DEFAULT_REMOTE_WAIT_S
from agenteval.pricing import PriceTable
from agenteval.records import PYTHON_TARGET, pytest_test_of
from agenteval.store import DEFAULT_STORE_PATH
from agenteval.suggestions import meant
from agenteval.yaml_syntax import explain_yaml_error, file_key_line, item_line, key_line

__all__ = [
    "CONFIG_NAMES",
    "AgentSpec",
    "JudgeSection",
    "ProjectConfig",
    "RunOptions",
    "RunSettings",
    "Target",
    "check_scorer_flags",
    "check_scorers",
    "exception_classes",
    "find_target",
    "load_infrastructure_errors",
    "resolve_agent",
    "resolve_settings",
]

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


def load_infrastructure_errors(target: Target) -> tuple[type[BaseException], ...]:
    """The classes `infrastructure_errors:` of the target's config names, imported (relative to
    the config's folder) when a run starts; one that does not load is a `ConfigError` naming the
    file and line."""
    found: list[type[BaseException]] = []
    for index, ref in enumerate(target.config.infrastructure_errors):
        where = f"infrastructure_errors[{index}]"
        try:
            found.append(exception_class(ref, target.base_dir, where))
        except ConfigError as exc:
            try:
                text = target.path.read_text(encoding="utf-8")
            except OSError:
                text = ""
            raise ConfigError(
                exc.message,
                file=target.path,
                line=item_line(text, "infrastructure_errors", index),
                field=where,
                hint=exc.hint,
            ) from exc
    return tuple(found)


def check_scorers(target: Target, flags: Sequence[str] = ()) -> None:
    """Load each scorer the target's config (`scorers:`) and the command line (`--scorer`)
    name, before a run starts, so that a misspelt name or setting is an error naming where it
    is written: the config's file, line and `scorers[i]`, or `--scorer`."""
    from agenteval.catalog import resolve_scorers
    from agenteval.scorers.context import ScoringContext

    context = ScoringContext(base_dir=target.base_dir)
    for index, ref in enumerate(target.config.scorers):
        try:
            resolve_scorers([ref], builtins=False, context=context)
        except AgentEvalError as exc:
            try:
                text = target.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            raise ConfigError(
                exc.message,
                file=target.path,
                line=item_line(text, "scorers", index),
                field=f"scorers[{index}]",
                hint=exc.hint,
            ) from exc
    check_scorer_flags(flags)


def check_scorer_flags(flags: Sequence[str]) -> None:
    """Load each scorer `--scorer` names (relative to the current directory), before anything
    runs, so that a misspelt one is an error naming the flag."""
    from agenteval.catalog import resolve_scorers
    from agenteval.scorers.context import ScoringContext

    cwd = ScoringContext(base_dir=Path.cwd())
    for ref in flags:
        try:
            resolve_scorers([ref], builtins=False, context=cwd)
        except AgentEvalError as exc:
            raise ConfigError(
                exc.message, file=exc.file, line=exc.line, field="--scorer", hint=exc.hint
            ) from exc


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


@dataclass(frozen=True, kw_only=True)
class RunSettings(RunOptions):
    """A run's `RunOptions` as `resolve_settings` resolves them from flags, the environment and
    agenteval.yaml: the judge and the user simulator, when there are, are `JudgeConfig`s."""

    judge: JudgeConfig | None = None
    user_simulator: JudgeConfig | None = None


def _env(name: str, cast: type[int] | type[float], env: Mapping[str, str]) -> Any:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        return cast(raw)
    except ValueError:
        raise ConfigError(
            f"environment variable {name}={raw!r} is not "
            + ("a whole number" if cast is int else "a number"),
            field=name,
        ) from None


def resolve_settings(
    config: ProjectConfig,
    base_dir: Path,
    *,
    trials: int | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    store: str | None = None,
    judge: str | None = None,
    use_cache: bool = True,
    builtins: bool | None = None,
    rubrics: Sequence[str] | None = None,
    passing: Sequence[str] | None = None,
    config_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    otlp_endpoint: str | None = None,
    otlp_receiver: int | None = None,
    otlp_wait: float | None = None,
    user_simulator: str | None = None,
    executor: str | None = None,
    workers: int | None = None,
    ray_address: str | None = None,
) -> RunSettings:
    """A run's options, each setting resolved: flag, then `AGENTEVAL_*` environment variable,
    then config, then default. `builtins=False` (`--no-builtins`) turns off the built-ins the
    config may have on; `rubrics` (`--rubric`) replace the config's. References in the config
    are relative to `base_dir` (the options' `base_dir`); its `infrastructure_errors` are
    loaded, naming their file and line when they do not load, by `load_infrastructure_errors`.
    """
    env = os.environ if env is None else env

    from_environment: dict[str, str] = {}  # setting -> the variable that gave its value

    def pick(
        flag: Any, env_name: str, cast: type[int] | type[float], from_config: Any, default: Any
    ) -> Any:
        if flag is not None:
            return flag
        value = _env(env_name, cast, env)
        if value is not None:
            from_environment[env_name.removeprefix("AGENTEVAL_").lower()] = env_name
            return value
        return default if from_config is None else from_config

    store_value = store or env.get("AGENTEVAL_STORE") or None
    if store_value is None and config.store is not None:
        store_value = str(base_dir / config.store)
    store_path = Path(store_value or DEFAULT_STORE_PATH)
    judge_config = _judge_config(
        config.judge, judge or env.get("AGENTEVAL_JUDGE") or None, store_path, use_cache
    )
    simulator_config = _simulator_config(
        config.user_simulator,
        user_simulator or env.get("AGENTEVAL_USER_SIMULATOR") or None,
        store_path,
        use_cache,
        config_file,
    )
    prices = PriceTable.default().with_overrides(config.prices, file=config_file)
    # Sent only where the user asked for it: never the standard OTEL_EXPORTER_OTLP_ENDPOINT.
    endpoint = otlp_endpoint or env.get("AGENTEVAL_OTLP_ENDPOINT") or config.otlp_endpoint
    if not otlp_endpoint and env.get("AGENTEVAL_OTLP_ENDPOINT"):
        from_environment["otlp_endpoint"] = "AGENTEVAL_OTLP_ENDPOINT"
    try:
        return RunSettings(
            judge=judge_config,
            user_simulator=simulator_config,
            prices=prices,
            trials=pick(trials, "AGENTEVAL_TRIALS", int, config.trials, 1),
            concurrency=pick(
                concurrency, "AGENTEVAL_CONCURRENCY", int, config.concurrency, DEFAULT_CONCURRENCY
            ),
            timeout=pick(timeout, "AGENTEVAL_TIMEOUT", float, config.timeout, None),
            retries=pick(retries, "AGENTEVAL_RETRIES", int, config.retries, DEFAULT_RETRIES),
            store=store_path,
            use_cache=use_cache,
            builtins=config.builtins and builtins is not False,
            rubrics=rubrics or config.rubrics,
            passing=passing,
            base_dir=base_dir,
            otlp_endpoint=endpoint,
            otlp_receiver=pick(
                otlp_receiver, "AGENTEVAL_OTLP_RECEIVER", int, config.otlp_receiver, None
            ),
            otlp_wait=pick(
                otlp_wait, "AGENTEVAL_OTLP_WAIT", float, config.otlp_wait, DEFAULT_REMOTE_WAIT_S
            ),
            tool_mocks=config.tool_mocks,
            executor=executor or env.get("AGENTEVAL_EXECUTOR") or config.executor or "local",
            workers=pick(workers, "AGENTEVAL_WORKERS", int, config.workers, None),
            ray_address=ray_address or config.ray_address,
            worker_memory_mb=config.worker_memory_mb,
        )
    except OptionError as exc:
        variable, steps = from_environment.get(exc.field or ""), (exc.field or "").split(".")
        if executor is None and exc.field == "executor" and env.get("AGENTEVAL_EXECUTOR"):
            variable = "AGENTEVAL_EXECUTOR"
        flag = _flag_given(exc.field, executor=executor, workers=workers, ray_address=ray_address)
        if flag is not None:
            raise OptionError(exc.message, field=flag, hint=exc.hint) from None
        if variable is None and steps[0] in _CONFIG_CHECKED:
            if otlp_endpoint and exc.field == "otlp_endpoint":  # the flag's, or the config's
                raise OptionError(exc.message, field="--otlp-endpoint", hint=exc.hint) from None
            line = file_key_line(config_file, *steps) if config_file else None
            raise OptionError(
                exc.message, file=config_file, line=line, field=exc.field, hint=exc.hint
            ) from None
        if variable is None:
            raise
        # The user never typed the setting: name the variable that set it, so they find it.
        raise OptionError(
            f"environment variable {variable}={env[variable]}: {exc.message}",
            field=variable,
            hint=f"unset {variable}, or set it to a value in range",
        ) from None


# Settings `RunOptions` checks whose mistakes, when the config wrote them, are named with the
# config's file and line.
_CONFIG_CHECKED = (
    "otlp_endpoint",
    "tool_mocks",
    "executor",
    "workers",
    "ray_address",
    "worker_memory_mb",
    "otlp_receiver",
)


def _flag_given(field: str | None, **flags: Any) -> str | None:
    """The command-line flag that set `field` (`--ray-address`), if one did."""
    if field in flags and flags[field] is not None:
        return "--" + field.replace("_", "-")
    return None


def _simulator_config(
    section: str | JudgeSection | None,
    spec: str | None,
    store: Path,
    use_cache: bool,
    config_file: Path | None,
) -> JudgeConfig | None:
    """The user simulator, read as the judge is (`spec`: the flag or the environment); a
    model that is not `provider:model` is refused naming where it was written."""
    from agenteval.simulation.simulator import UserSimulatorConfig

    try:
        return _judge_config(section, spec, store, use_cache, kind=UserSimulatorConfig)
    except ConfigError as exc:
        if spec is not None:
            raise
        line = file_key_line(config_file, "user_simulator") if config_file else None
        raise ConfigError(
            exc.message, file=config_file, line=line, field="user_simulator", hint=exc.hint
        ) from None


def _judge_config(
    section: str | JudgeSection | None,
    spec: str | None,
    store: Path,
    use_cache: bool,
    *,
    kind: type[JudgeConfig] = JudgeConfig,
) -> JudgeConfig | None:
    """The judge: `spec` (flag or environment) names the model, the config the rest."""
    if isinstance(section, str):
        section = JudgeSection(model=section)
    if section is None and spec is None:
        return None
    section = section or JudgeSection(model=spec or "")
    settings = section.model_dump(exclude={"model", "cache"})
    settings["timeout_s"] = settings.pop("timeout")
    settings["max_retries"] = settings.pop("retries")
    return kind(
        spec=spec or section.model,
        cache_path=store.parent / "judge-cache.db",
        use_cache=use_cache and section.cache,
        **settings,
    )
