"""Which judge a run uses: from `judge=` / `--judge`, `agenteval.yaml`, or `AGENTEVAL_JUDGE`;
opened when it can be, or the reason it cannot (named to the user, never a made-up score)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.provider import ProviderUnavailable
from agenteval.judge.providers import provider_problem
from agenteval.pricing import PriceTable
from agenteval.redaction import public_url

__all__ = ["JudgeChoice", "choose_judge", "config_from_stored", "judge_problem"]


@dataclass
class JudgeChoice:
    """The run's judge: how it was asked for (`config`), the `Judge` opened, or why there is
    none (`problem`). `record()` is what the run stores of it."""

    config: JudgeConfig | None = None
    judge: Judge | None = None
    problem: str | None = None
    owned: bool = False
    """Whether the judge was opened here (and is closed here)."""

    def stored(self) -> dict[str, Any] | None:
        """What a run stores of its judge, to judge again later (no keys, no secrets)."""
        if self.config is None:
            return None
        return {
            "spec": self.config.spec,
            "base_url": public_url(self.config.base_url),
            "params": dict(self.config.params),
            "timeout_s": self.config.timeout_s,
            "max_retries": self.config.max_retries,
        }

    async def aclose(self) -> None:
        """Close the judge if it was opened here."""
        if self.owned and self.judge is not None:
            await self.judge.aclose()


def config_from_stored(stored: Mapping[str, Any]) -> JudgeConfig:
    """The judge config a stored run recorded (`RunInfo.settings["judge"]`, as
    `JudgeChoice.stored()` wrote it)."""
    return JudgeConfig(
        spec=str(stored["spec"]),
        base_url=stored.get("base_url"),
        params=dict(stored.get("params") or {"temperature": 0.0}),
        timeout_s=float(stored.get("timeout_s", 60.0)),
        max_retries=int(stored.get("max_retries", 3)),
    )


def judge_problem(config: JudgeConfig) -> str | None:
    """Why the judge `config` names cannot run on this machine (its provider's SDK extra is not
    installed, or no API key and no base URL is set), naming what to install or set; None when
    it can. Nothing is opened: the CLI asks this before a run starts, so a judge the user asked
    for either runs or stops the command before anything is stored."""
    return provider_problem(config.provider, base_url=config.base_url)


def choose_judge(
    judge: Judge | JudgeConfig | str | None,
    *,
    env: Mapping[str, str] | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
) -> JudgeChoice:
    """Open the judge asked for (falling back on `AGENTEVAL_JUDGE`), or say why it cannot be.

    `judge` is what `judge=` / `--judge` was given: an open `Judge` (used as it is), a
    `JudgeConfig`, or its spec, `provider:model`."""
    if isinstance(judge, Judge):
        return JudgeChoice(config=judge.config, judge=judge)
    env = os.environ if env is None else env
    spec_or_config = judge if judge is not None else env.get("AGENTEVAL_JUDGE") or None
    if spec_or_config is None:
        return JudgeChoice()
    config = JudgeConfig(spec=spec_or_config) if isinstance(spec_or_config, str) else spec_or_config
    if not use_cache:
        config = replace(config, use_cache=False)
    try:
        return JudgeChoice(config=config, judge=Judge.open(config, prices=prices), owned=True)
    except ProviderUnavailable as exc:
        return JudgeChoice(config=config, problem=f"judge {config.spec} unavailable: {exc}")
