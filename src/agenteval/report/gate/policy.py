"""The gate's policy: the thresholds and options of `agenteval gate --policy FILE`, and reading
the file (see `agenteval.report.gate` for its layout)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from agenteval.errors import ConfigError
from agenteval.suggestions import meant

__all__ = ["GatePolicy", "Thresholds", "check_ignored", "load_policy"]


class Thresholds(BaseModel):
    """The minimums one scorer (or "the trial passes") must reach in the candidate run."""

    model_config = ConfigDict(extra="forbid")

    min_pass_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    """The pass rate over the trials the scorer judged, as a share (0.8 for 80%)."""
    min_pass_hat_k: dict[int, float] = Field(default_factory=dict)
    """k → the minimum pass^k (the chance that k trials of a case all pass), e.g. {3: 0.6}."""

    @field_validator("min_pass_hat_k")
    @classmethod
    def _check_k(cls, value: dict[int, float]) -> dict[int, float]:
        for k, minimum in value.items():
            if k < 1:
                raise ValueError(f"k must be 1 or more, got {k}")
            if not 0.0 <= minimum <= 1.0:
                raise ValueError(f"pass^{k} is a share from 0 to 1, got {minimum}")
        return value


class GatePolicy(BaseModel):
    """What `agenteval gate --policy FILE` reads (`agenteval.report.gate` shows an example)."""

    model_config = ConfigDict(extra="forbid")

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """A regression with a (corrected) p-value below this is significant."""
    correction: Literal["holm", "none"] = "holm"
    """How p-values are corrected for testing several scorers at once."""
    ignore_regressions: list[str] = Field(default_factory=list)
    """Scorers whose significant regressions do not block (their thresholds still apply), and
    `trial` for "the trial passes"; each must be a scorer of either run (`check_ignored`)."""
    min_coverage: float = Field(default=1.0, ge=0.0, le=1.0)
    """The share of the cases the base judged that the candidate must judge too (1.0: every
    one). A case none of whose candidate trials was judged (each an infrastructure failure,
    say) counts as not judged. The candidate must judge at least one case whatever this is."""
    allow_subset: bool = False
    """Cases the candidate did not run at all are left out of `min_coverage`'s count (for a
    candidate run on a subset on purpose); they are still listed."""
    trial_passes: list[str] | None = None
    """The scorers that define "the trial passes"; default: the candidate run's own setting,
    else every scorer that applied."""
    max_cost_per_case_usd: float | None = Field(default=None, ge=0.0)
    """The candidate agent's mean cost in USD of answering one case once."""
    max_p95_latency_s: float | None = Field(default=None, gt=0.0)
    """The candidate's p95 of total latency per trial, in seconds."""
    trial: Thresholds | None = None
    """Thresholds for "the trial passes"."""
    scorers: dict[str, Thresholds] = Field(default_factory=dict)
    """Thresholds per scorer, by name."""


# -- reading a policy ------------------------------------------------------------------------


def _node_line(text: str, loc: Sequence[int | str]) -> int | None:
    """The line (1-based) of the YAML node at `loc` (keys and list indexes), or of its
    nearest parent that exists."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line: int | None = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((k for k, _ in node.value if str(k.value) == str(part)), None)
            if match is None:
                break
            line = int(match.start_mark.line) + 1
            node = next(v for k, v in node.value if k is match)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = int(node.start_mark.line) + 1
        else:
            break
    return line


def _fields_at(loc: Sequence[int | str]) -> list[str]:
    """The keys allowed where `loc` points (for a 'did you mean')."""
    if (len(loc) >= 3 and loc[0] == "scorers") or (len(loc) >= 2 and loc[0] == "trial"):
        return list(Thresholds.model_fields)
    return list(GatePolicy.model_fields)


def _read(path: Path) -> str:
    """The policy file's text."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "no such policy file", file=path, hint="check the path given to --policy"
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the policy is not UTF-8 text (byte {exc.start})", file=path, hint="save it as UTF-8"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read the policy: {exc.strerror}", file=path) from exc


def _settings(text: str, path: Path) -> dict[str, Any]:
    """The policy's YAML: a mapping of settings (an empty file has none)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", exc)
        raise ConfigError(f"invalid YAML: {problem}", file=path, line=line) from exc
    if data is None:
        return {}
    if isinstance(data, dict):
        return data
    raise ConfigError(
        "a gate policy is a mapping of settings",
        file=path,
        hint="see `agenteval gate --help` and the README's gate section",
    )


def _mistake(error: ErrorDetails, text: str, path: Path) -> ConfigError:
    """The policy's first mistake, naming its line and field (and, for an unknown setting, the
    one meant)."""
    loc = [part for part in error["loc"] if isinstance(part, int | str)]
    # A failed key of a dict (min_pass_hat_k's k) shows up as '[key]' in pydantic's loc.
    loc = [part for part in loc if part != "[key]"]
    field = ".".join(str(part) for part in loc)
    hint = None
    if error["type"] == "extra_forbidden":
        allowed = _fields_at(loc)
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        message = "unknown setting"
        hint = f"did you mean {close[0]!r}?" if close else "known settings: " + ", ".join(allowed)
    else:
        text_msg = str(error["msg"]).removeprefix("Value error, ")
        message = f"{text_msg} (got {error.get('input')!r})"
    return ConfigError(message, file=path, line=_node_line(text, loc), field=field, hint=hint)


def load_policy(path: str | Path) -> GatePolicy:
    """Read a gate policy file; a mistake raises `ConfigError` naming the file, line and field."""
    path = Path(path)
    text = _read(path)
    settings = _settings(text, path)
    try:
        return GatePolicy.model_validate(settings)
    except ValidationError as exc:
        raise _mistake(exc.errors()[0], text, path) from exc


def check_ignored(
    policy: GatePolicy, known: Sequence[str], source: str | Path | None = None
) -> None:
    """Every name under `ignore_regressions` is one of `known` (the scorers of either run, and
    `trial`): a typo would be ignored silently, the scorer meant still gated, or a scorer
    renamed since never ignored. `ConfigError` naming the file and line (`source`: the file the
    policy was read from), the name, the one likely meant and the known names."""
    for index, name in enumerate(policy.ignore_regressions):
        if name in known:
            continue
        path = None if source is None else Path(source)
        line = None
        if path is not None:
            try:
                line = _node_line(path.read_text(encoding="utf-8"), ["ignore_regressions", index])
            except (OSError, UnicodeDecodeError):  # changed since it was read: no line
                line = None
        close = meant(name, known, {})
        raise ConfigError(
            f"{name!r} is in neither run: ignore_regressions names the scorers (or 'trial', "
            "the trial passes) whose regressions do not block",
            file=path,
            line=line,
            field=f"ignore_regressions[{index}]",
            hint=(f"did you mean {close!r}? " if close else "")
            + "known: "
            + ", ".join(sorted(known)),
        )
