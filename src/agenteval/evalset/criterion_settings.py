"""How a criterion's settings are read, from agenteval's names or ADK's `test_config.json`
(`criterion_config`), for `evalset.config`: ADK's `judge_model_options`, `match_type` numbers,
`ignore_args` and rubrics (`rubric_id`, `rubric_content.text_property`, `type`), snake_case or
camelCase; the efficiency metrics, which take no threshold."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping
from typing import Any

from agenteval.case import Rubric
from agenteval.criteria.config import CriterionConfig, MatchType

__all__ = [
    "EFFICIENCY_METRICS",
    "UnknownSetting",
    "criterion_config",
    "criterion_settings",
    "meant",
    "snake",
]

logger = logging.getLogger("agenteval")

EFFICIENCY_METRICS = (
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
)
"""ADK's efficiency metrics, in its order: reported per turn, never passed or failed
(`agenteval.criteria.efficiency`)."""


class UnknownSetting(ValueError):
    """A setting no criterion takes: its path under the metric and the setting likely meant."""

    def __init__(self, message: str, path: tuple[str, ...], meant: str | None) -> None:
        super().__init__(message)
        self.path = path
        self.meant = meant


def meant(key: str, known: list[str]) -> str | None:
    """The known name `key` most likely misspells (snake_case or camelCase), or None."""
    close = difflib.get_close_matches(snake(key), known, n=1, cutoff=0.6)
    return close[0] if close else None


# ADK settings that change nothing agenteval computes, read without a word.
_ADK_NO_EFFECT = ("parallelism_limit",)

# A criterion's settings, and the other names they are written under.
_SETTINGS = (
    "threshold",
    "enabled",
    "judge_model",
    "num_samples",
    "api_style",
    "rubrics",
    "keywords",
    "match_type",
    "check_args",
)
# ADK's own criterion settings (google-adk 2.13's eval_metrics criteria) besides `_SETTINGS`.
_ADK_SETTINGS = (
    "judge_model_options",
    "evaluate_intermediate_nl_responses",
    "include_intermediate_responses_in_final",
    "ignore_args",
)
_ADK_MATCH_TYPES = {0: MatchType.EXACT, 1: MatchType.IN_ORDER, 2: MatchType.ANY_ORDER}


def snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def rubric_of(value: Any) -> Rubric:
    """A rubric written the agenteval way (`{rubric_id, content, weight}`, or text) or ADK's
    (`{rubric_id, rubric_content: {text_property}}`)."""
    if isinstance(value, Rubric | str):
        return Rubric.model_validate(value)
    if not isinstance(value, Mapping):
        raise ValueError(f"a rubric is text or an object, got {type(value).__name__}")
    fields = {snake(str(k)): v for k, v in value.items()}
    content = fields.pop("rubric_content", None)
    if content is not None:
        text = (
            content.get("text_property", content.get("textProperty"))
            if isinstance(content, Mapping)
            else content
        )
        fields["content"] = text
    fields.pop("description", None)
    return Rubric.model_validate(fields)


def match_type_of(value: Any) -> MatchType:
    if isinstance(value, bool):
        raise ValueError(f"match_type should be EXACT, IN_ORDER or ANY_ORDER, got {value!r}")
    if isinstance(value, int):
        if value in _ADK_MATCH_TYPES:
            return _ADK_MATCH_TYPES[value]
        raise ValueError(f"match_type should be 0, 1 or 2 (ADK's numbering), got {value}")
    try:
        return MatchType(value)
    except ValueError:
        raise ValueError(
            f"match_type should be EXACT, IN_ORDER or ANY_ORDER, got {value!r}"
        ) from None


def criterion_settings(name: str, value: Mapping[str, Any]) -> dict[str, Any]:
    """A criterion's settings in `CriterionConfig`'s names, from agenteval's or ADK's."""
    fields: dict[str, Any] = {}
    for key, setting in value.items():
        field = snake(str(key))
        if field == "judge_model_options":
            if not isinstance(setting, Mapping):
                raise ValueError(f"{name}: judge_model_options should be an object")
            for option, option_value in setting.items():
                option_name = snake(str(option))
                if option_name in ("judge_model", "num_samples"):
                    fields[option_name] = option_value
                elif option_name in _ADK_NO_EFFECT:
                    continue  # how many judge calls ADK runs at once
                elif option_name == "judge_model_config":
                    logger.warning(
                        "%s: judge_model_config is not used; the judge's settings come from "
                        "agenteval's judge configuration",
                        name,
                    )
                else:
                    known = ["judge_model", "num_samples", "judge_model_config", *_ADK_NO_EFFECT]
                    raise UnknownSetting(
                        f"{name}: unknown judge_model_options setting {str(option)!r}; "
                        "known: judge_model, num_samples",
                        (str(key), str(option)),
                        meant(str(option), known),
                    )
        elif field in (
            "evaluate_intermediate_nl_responses",
            "include_intermediate_responses_in_final",
        ):
            if setting:
                logger.warning(
                    "%s: %s is not supported; only the final response is checked",
                    name,
                    field,
                )
        elif field == "ignore_args":  # ADK's trajectory setting: compare names only
            if not isinstance(setting, bool):
                raise ValueError(f"{name}: ignore_args should be true or false")
            fields["check_args"] = not setting
        elif field == "match_type":
            fields["match_type"] = match_type_of(setting)
        elif field == "rubrics":
            if not isinstance(setting, list):
                raise ValueError(f"{name}: rubrics should be a list")
            fields["rubrics"] = [rubric_of(rubric) for rubric in setting]
        elif field in _SETTINGS:
            fields[field] = setting
        else:
            known = [*_SETTINGS, *_ADK_SETTINGS]
            raise UnknownSetting(
                f"{name}: unknown setting {str(key)!r}; settings: "
                + ", ".join((*_SETTINGS, "judge_model_options")),
                (str(key),),
                meant(str(key), known),
            )
    return fields


def criterion_config(name: str, value: Any, *, adk: bool = False) -> CriterionConfig:
    """The `CriterionConfig` a `CriteriaConfig` field holds: from a config, a threshold, or a
    mapping of settings (agenteval's names or ADK's). `adk` reads ADK's meaning: ADK's
    trajectory metric compares arguments."""
    if isinstance(value, CriterionConfig):
        return value
    if name in EFFICIENCY_METRICS:
        return efficiency_config(name, value)
    if isinstance(value, bool) or not isinstance(value, int | float | Mapping):
        raise ValueError(
            f"{name}: give a threshold (a number from 0 to 1), a CriterionConfig or a mapping "
            f"of settings, not {type(value).__name__}"
        )
    fields: dict[str, Any] = (
        {"threshold": float(value)}
        if isinstance(value, int | float)
        else criterion_settings(name, value)
    )
    if adk and name == "tool_trajectory_avg_score":
        fields.setdefault("check_args", True)
    return CriterionConfig.model_validate(fields)


def efficiency_config(name: str, value: Any) -> CriterionConfig:
    """An efficiency metric's config: `true` or `{}` (or `{"enabled": ...}`); a threshold is
    refused, as ADK refuses it, since the metric never passes or fails."""
    if value is True:
        return CriterionConfig()
    if isinstance(value, Mapping):
        fields = {snake(str(key)): setting for key, setting in value.items()}
        if "threshold" not in fields and set(fields) <= {"enabled"}:
            return CriterionConfig.model_validate(fields)
    if isinstance(value, Mapping) and "threshold" not in {snake(str(k)) for k in value}:
        known = ["enabled"]
        key = next(str(k) for k in value if snake(str(k)) not in known)
        raise UnknownSetting(
            f"{name}: unknown setting {key!r}; it takes no settings but enabled",
            (key,),
            meant(key, known),
        )
    raise ValueError(
        f"{name} reports a value per turn and never passes or fails, so it takes no threshold "
        f"(as in ADK): write {name!r}: {{}} (or true)"
    )
