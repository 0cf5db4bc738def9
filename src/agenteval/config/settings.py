"""The one place a run's settings resolve: command-line flag, then environment
(`AGENTEVAL_*`), then `agenteval.yaml`, then the default (`resolve_settings`); and what the
config names that must load before a run starts (its infrastructure errors, its scorers)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval.config.project import JudgeSection, ProjectConfig, Target
from agenteval.engine.executors.settings import READ_BY
from agenteval.engine.options import DEFAULT_CONCURRENCY, DEFAULT_RETRIES, OptionError, RunOptions
from agenteval.errors import AgentEvalError, ConfigError
from agenteval.exception_refs import exception_class
from agenteval.judge.judge import JudgeConfig
from agenteval.otel.live import DEFAULT_REMOTE_WAIT_S
from agenteval.pricing import PriceTable
from agenteval.store import DEFAULT_STORE_PATH
from agenteval.yaml_syntax import file_key_line, item_line

__all__ = [
    "RunSettings",
    "check_scorer_flags",
    "check_scorers",
    "load_infrastructure_errors",
    "resolve_settings",
]


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
        flag: Any,
        env_name: str,
        cast: type[int] | type[float],
        from_config: Any,
        default: Any,
        *,
        env_read: bool = True,
    ) -> Any:
        if flag is not None:
            return flag
        value = _env(env_name, cast, env) if env_read else None
        if value is not None:
            from_environment[env_name.removeprefix("AGENTEVAL_").lower()] = env_name
            return value
        return default if from_config is None else from_config

    kind = executor or env.get("AGENTEVAL_EXECUTOR") or config.executor or "local"
    chosen_at = 0 if executor else 1 if env.get("AGENTEVAL_EXECUTOR") else 2

    def for_executor(name: str, layer: int) -> bool:
        """Whether the setting `name` given at `layer` (1: the environment, 2: agenteval.yaml)
        is read: not when the executor was chosen above it and does not read it. A project's
        `workers:` is for its `executor: process`, not for the `--executor local` a run names
        to see an error in place; written beside the executor it does not fit, it is refused."""
        return layer <= chosen_at or kind in READ_BY[name]

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
            executor=kind,
            workers=pick(
                workers,
                "AGENTEVAL_WORKERS",
                int,
                config.workers if for_executor("workers", 2) else None,
                None,
                env_read=for_executor("workers", 1),
            ),
            ray_address=ray_address
            or (config.ray_address if for_executor("ray_address", 2) else None),
            worker_memory_mb=(
                config.worker_memory_mb if for_executor("worker_memory_mb", 2) else None
            ),
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
