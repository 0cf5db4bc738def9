"""Where a command's settings come from (flags, environment, the agenteval.yaml that applies),
and the checks made on them before anything runs: a judge that cannot run, a scorer file given
relative to here, the `--store` a printed hint needs."""

from __future__ import annotations

import dataclasses
import os
import shlex
from pathlib import Path

from rich.markup import escape

from agenteval.cli.common import errors
from agenteval.cli.options import Flags
from agenteval.config import (
    CONFIG_NAMES,
    ProjectConfig,
    RunSettings,
    Target,
    find_target,
    resolve_settings,
)
from agenteval.errors import AgentEvalError, ConfigError
from agenteval.judge.choice import config_from_stored, judge_problem
from agenteval.judge.judge import JudgeConfig
from agenteval.pricing import PriceTable
from agenteval.records import RunInfo

__all__ = [
    "absolute_ref",
    "asked_where",
    "config_beside",
    "cwd_config",
    "global_settings",
    "judged_settings",
    "require_judge",
    "require_stored_judge",
    "run_prices",
    "store_flag",
    "store_path",
    "target_config",
]


def cwd_config() -> Path | None:
    """The current directory's agenteval.yaml, if it has one."""
    return next((Path(n) for n in CONFIG_NAMES if Path(n).is_file()), None)


def config_beside(case_file: Path) -> Path | None:
    """The agenteval.yaml a case file runs with: the one in its folder (the project the cases
    belong to), else the current directory's."""
    for folder in (case_file.parent, Path()):
        for name in CONFIG_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def global_settings(
    store: Path | None,
    *,
    judge: str | None = None,
    use_cache: bool = True,
    config_file: Path | None = None,
    otlp_endpoint: str | None = None,
) -> RunSettings:
    """Settings for commands on stored runs: flags, then environment, then the agenteval.yaml
    of the current directory (if any; `config_file` names another), then defaults."""
    config = ProjectConfig()
    config_file = config_file or cwd_config()
    if config_file is not None:
        config = find_target(config_file).config
    # These commands run no trial: where trials run (`AGENTEVAL_WORKERS` exported for the
    # runs of `--executor process`, say) is not theirs to check, nor to refuse them for.
    config = config.model_copy(update=dict.fromkeys(_WHERE_TRIALS_RUN))
    env = {name: value for name, value in os.environ.items() if name not in _WHERE_IN_ENV}
    return resolve_settings(
        config,
        config_file.parent.resolve() if config_file is not None else Path.cwd(),
        store=str(store) if store else None,
        judge=judge,
        use_cache=use_cache,
        config_file=config_file,
        env=env,
        otlp_endpoint=otlp_endpoint,
    )


_WHERE_TRIALS_RUN = ("executor", "workers", "ray_address", "worker_memory_mb")
_WHERE_IN_ENV = ("AGENTEVAL_EXECUTOR", "AGENTEVAL_WORKERS")


def judged_settings(flags: Flags, config_file: Path | None = None) -> RunSettings:
    """The settings of a command that may judge (`rescore`, `judge`, `score`), from
    `config_file` (default: the current directory's agenteval.yaml), and its judge checked:
    one asked for that cannot run stops the command (`require_judge`)."""
    config_file = config_file or cwd_config()
    settings = global_settings(
        flags.store,
        judge=flags.judge,
        use_cache=not flags.no_cache,
        config_file=config_file,
        otlp_endpoint=flags.otlp_endpoint,
    )
    require_judge(settings.judge, flags.judge, config_file)
    return settings


def store_path(store: Path | None) -> Path:
    return global_settings(store).store


def store_flag(store: Path) -> str:
    """` --store PATH` when `store` is not the one a command run here reads by default (a
    `--store` flag, or the `store:` of a case file's agenteval.yaml in another folder), so a
    command a hint suggests finds the run; else nothing."""
    try:
        usual: Path | None = global_settings(None).store
    except AgentEvalError:  # the current folder's config is broken: name the store outright
        usual = None
    if usual is not None and Path(usual).resolve() == Path(store).resolve():
        return ""
    return f" --store {shlex.quote(str(store))}"


def target_config(found: Target, given: Path | None) -> tuple[Target, Path | None]:
    """The target with the settings it runs with, and the agenteval.yaml they come from. A
    config (or a folder holding one) is its own; a case file runs with `--config FILE`, else
    the agenteval.yaml beside it, else the current directory's (so a hint to add something to
    agenteval.yaml can be followed), with the case file as its dataset and the config's folder
    as the base of the paths in it. The run is still the case file's (`--resume` finds it by
    the case file)."""
    if found.dataset != found.path:
        if given is not None:
            raise ConfigError(
                f"{found.path} is a config already",
                field="--config",
                hint="--config is for a case-file TARGET; run the config you mean instead",
            )
        return found, found.path
    if given is not None and not given.is_file():
        raise ConfigError(
            f"no such file: {given}", field="--config", hint="give the path of an agenteval.yaml"
        )
    path = given if given is not None else config_beside(found.path)
    if path is None:
        return found, None
    read = find_target(path)
    if read.dataset == read.path:  # a case file, not a config
        raise ConfigError(
            f"{path} is not an agenteval.yaml",
            field="--config",
            hint="give a config file (settings such as trials:, prices:, judge:)",
        )
    if given is None:
        errors.print(f"[dim]settings from {escape(str(path))}[/]")
    return dataclasses.replace(read, path=found.path, dataset=found.dataset), read.path


def require_judge(judge: JudgeConfig | None, flag: str | None, config_file: Path | None) -> None:
    """A judge the user asked for (`--judge`, `AGENTEVAL_JUDGE`, `judge:` in agenteval.yaml)
    that cannot run here stops the command with one message (exit 2) before anything runs or is
    stored: its rubrics would otherwise give no score on every trial, and a rescore would
    replace stored verdicts with nothing. With no judge asked for, this does nothing (the
    rubrics give no score, with one warning)."""
    if judge is None:
        return
    problem = judge_problem(judge)
    if problem is None:
        return
    file, field, origin = asked_where("judge", flag, config_file)
    raise ConfigError(
        f"the judge {judge.spec} cannot run: {problem}",
        file=file,
        field=field,
        hint=f"nothing was run or stored; or remove {origin} to run without the judge",
    )


def asked_where(
    setting: str, flag: str | None, config_file: Path | None
) -> tuple[Path | None, str, str]:
    """Where a model setting (`judge`, `user_simulator`) was asked for, by precedence: its flag
    (`--user-simulator`), its variable (`AGENTEVAL_USER_SIMULATOR`), else agenteval.yaml. The
    file to name (only for agenteval.yaml), the field, and how a message says where it is."""
    option = "--" + setting.replace("_", "-")
    variable = "AGENTEVAL_" + setting.upper()
    if flag:
        return None, option, option
    if os.environ.get(variable):
        return None, variable, variable
    return config_file, setting, f"`{setting}:` from {config_file or CONFIG_NAMES[0]}"


def require_stored_judge(info: RunInfo) -> None:
    """A stored run judged by a judge that cannot run here (no key, no SDK extra) is not
    rescored or resumed with it: its rubrics would give no score, and a rescore would replace
    the verdicts it holds with nothing. Exit 2, naming what to set, or to pass `--judge`."""
    stored_judge = info.settings.get("judge")
    if not stored_judge:
        return
    config = config_from_stored(stored_judge)
    problem = judge_problem(config)
    if problem is not None:
        raise ConfigError(
            f"run {info.run_id} is judged by {config.spec}, which cannot run here: {problem}",
            hint="nothing was changed: without its judge, its verdicts would be replaced by no "
            "score; or pass --judge PROVIDER:MODEL to judge it with another",
        )


def run_prices(info: RunInfo, prices: PriceTable | None) -> PriceTable | None:
    """The prices to report a stored run with: the current directory's agenteval.yaml, else
    the config the run was started from (for a case file, the agenteval.yaml beside it), when
    it is still there."""
    if any(Path(name).is_file() for name in CONFIG_NAMES) or not info.target:
        return prices
    target = Path(info.target)
    if info.dataset is not None and Path(info.dataset).name == target.name:  # a case file
        target = config_beside(target) or target
    if not (target.is_file() and target.name in CONFIG_NAMES):
        return prices
    found = find_target(target)
    return resolve_settings(found.config, found.base_dir, config_file=found.path).prices


def absolute_ref(ref: str, base: Path) -> str:
    """A file reference made absolute, so a rescore from elsewhere loads the same file."""
    module, sep, attr = ref.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module):
        path = Path(module)
        return f"{(path if path.is_absolute() else base / path).resolve()}:{attr}"
    return ref
