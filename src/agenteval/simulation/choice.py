"""Which user simulator a run uses: from `user_simulator=` / `--user-simulator`,
`user_simulator:` in agenteval.yaml, `AGENTEVAL_USER_SIMULATOR`, or the settings a resumed run
stored; opened before the run starts, or refused then, naming the fix (never a trial failed for
a key that was missing from the start)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from agenteval.errors import ConfigError
from agenteval.judge.choice import JudgeChoice, config_from_stored
from agenteval.judge.judge import JudgeConfig
from agenteval.judge.provider import ProviderUnavailable
from agenteval.judge.providers import provider_problem
from agenteval.pricing import PriceTable
from agenteval.simulation.simulator import UserSimulator, UserSimulatorConfig

__all__ = [
    "SimulatorChoice",
    "choose_user_simulator",
    "is_user",
    "simulator_config",
    "simulator_problem",
]


def is_user(value: Any) -> bool:
    """Whether `value` is a user object (`agents.users.User` by shape), not a setting naming
    a model."""
    return (
        value is not None
        and not isinstance(value, str | JudgeConfig)
        and callable(getattr(value, "reply", None))
    )


def simulator_config(
    value: str | JudgeConfig | Mapping[str, Any], *, cache_path: Path | None = None
) -> UserSimulatorConfig:
    """The simulator a setting names: `provider:model`, a `JudgeConfig` (or
    `UserSimulatorConfig`), or what a run stored (`SimulatorChoice.stored()`). A spec is cached
    at `cache_path` (the judge's cache file, beside the run store) when given."""
    if isinstance(value, str):
        config = UserSimulatorConfig(spec=value)
        return config if cache_path is None else replace(config, cache_path=cache_path)
    if isinstance(value, Mapping):
        value = config_from_stored(value)
        if cache_path is not None:
            value = replace(value, cache_path=cache_path)
    if isinstance(value, UserSimulatorConfig):
        return value
    return UserSimulatorConfig(**{f.name: getattr(value, f.name) for f in fields(value)})


def simulator_problem(config: JudgeConfig) -> str | None:
    """Why the simulator `config` names cannot run here (its SDK extra, its API key), said as
    the judge's is; None when it can."""
    return provider_problem(config.provider, base_url=config.base_url, role="user simulator")


@dataclass
class SimulatorChoice:
    """The run's user simulator: how it was asked for (`config`), the user that plays (a
    `UserSimulator` opened here, or a user object given), or none."""

    config: UserSimulatorConfig | None = None
    user: Any = None
    owned: bool = False
    """Whether the simulator was opened here (and is closed here)."""

    def stored(self) -> dict[str, Any] | None:
        """What a run stores of its simulator, to resume with it (no keys, no secrets); a user
        object given in code is stored by its label only (a resume is given it again)."""
        if self.config is not None:
            return JudgeChoice(config=self.config).stored()
        if self.user is not None:
            return {"label": str(getattr(self.user, "label", type(self.user).__name__))}
        return None

    async def aclose(self) -> None:
        """Close the simulator if it was opened here."""
        if self.owned and isinstance(self.user, UserSimulator):
            await self.user.aclose()


def choose_user_simulator(
    given: Any,
    *,
    stored: Mapping[str, Any] | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    cache_path: Path | None = None,
) -> SimulatorChoice:
    """Open the simulator asked for (`given`: a spec, a config, a user object; else the one a
    resumed run `stored`), or raise `ConfigError` naming why it cannot run and the fix."""
    if is_user(given):
        return SimulatorChoice(user=given)
    if given is None and stored is not None and "spec" in stored:
        given = dict(stored)
    if given is None:
        return SimulatorChoice()
    config = simulator_config(
        given, cache_path=cache_path if isinstance(given, str | Mapping) else None
    )
    if not use_cache:
        config = replace(config, use_cache=False)
    problem = simulator_problem(config)
    try:
        if problem is not None:
            raise ProviderUnavailable(problem)
        user = UserSimulator.open(config, prices=prices)
    except ProviderUnavailable as exc:
        raise ConfigError(
            f"the user simulator {config.spec} cannot run: {exc}",
            field="user_simulator",
            hint="nothing was run or stored; or play the cases' users with a script "
            "(`script: module:function` in their user_simulation)",
        ) from None
    return SimulatorChoice(config=config, user=user, owned=True)
