"""`EvalConfig` and `CriteriaConfig`: which criteria an `AgentEvaluator` runs, with what settings,
written in agenteval's names or read from Google ADK's `test_config.json`.

Each field of `CriteriaConfig` is the registry name of one criterion (`CRITERIA_REGISTRY`); its
value is a `CriterionConfig`, a threshold alone (`0.8`), or a mapping of settings, in
agenteval's names (`match_type`, `check_args`, `judge_model`, `num_samples`, `rubrics`, ...) or
ADK's (`judge_model_options: {judge_model, num_samples}`, `rubrics: [{rubric_id,
rubric_content: {text_property}}]`), snake_case or camelCase. A field left unset (None) does
not run. There is no field for `exact_match` (or for a criterion you registered yourself):
attach those to the evaluator by hand, `AgentEvaluator(agent, config, criteria=[...])`.

ADK's `test_config.json` (`{"criteria": {...}}`) is read by `EvalConfig.load` /
`EvalConfig.from_adk`, which keep the meaning ADK gives its metric names:

| ADK metric | agenteval criterion |
|---|---|
| `tool_trajectory_avg_score` | `tool_trajectory_avg_score` (`TrajectoryMatchCriterion`), `check_args` on: ADK compares arguments |
| `response_match_score` | `rouge_match` (`RougeMatchCriterion`): in ADK this name is ROUGE-1, not an LLM judge |
| `final_response_match_v2` | `final_response_match_v2` (`LLMJudgeCriterion`) |
| `rubric_based_final_response_quality_v1` | `rubric_based_final_response_quality_v1` (`RubricBasedCriterion`) |
| `hallucinations_v1` | `hallucinations_v1` (`HallucinationCriterion`) |
| `safety_v1` | `safety_v1` (`SafetyCriterion`) |
| `rubric_based_tool_use_quality_v1` | `rubric_based_tool_use_quality_v1` (`RubricBasedToolUseCriterion`): each turn's tool calls against rubrics of type `TOOL_USE_QUALITY` |
| `rubric_based_multi_turn_trajectory_quality_v1` | `rubric_based_multi_turn_trajectory_quality_v1` (`RubricBasedMultiTurnTrajectoryCriterion`): the conversation against rubrics of type `TRAJECTORY_QUALITY` |
| `multi_turn_task_success_v1` | `multi_turn_task_success_v1` (`MultiTurnTaskSuccessCriterion`): ADK asks Vertex AI, agenteval its own judge |
| `multi_turn_trajectory_quality_v1` | `multi_turn_trajectory_quality_v1` (`MultiTurnTrajectoryQualityCriterion`): as above |
| `multi_turn_tool_use_quality_v1` | `multi_turn_tool_use_quality_v1` (`MultiTurnToolUseQualityCriterion`): as above |
| `per_turn_user_simulator_quality_v1` | `per_turn_user_simulator_quality_v1` (`PerTurnUserSimulatorQualityCriterion`): a simulated user's messages, judged one by one; no score for a case played from written turns |
| `tool_call_count_v1`, `inference_call_count_v1`, `token_usage_v1`, `invocation_duration_v1` | the same names (`criteria.efficiency`): reported per turn, never pass or fail; they take no threshold (write `{}` or `true`) |

ADK reports its four efficiency metrics on every eval without being asked (and refuses them in
`criteria`); agenteval reports them when named, or on every case with
`EvalConfig(report_efficiency=True)` / `EvalConfig.from_adk(data, report_efficiency=True)`.
`response_evaluation_score` (Vertex AI's coherence score) is refused, with the reason.

ADK's `user_simulator_config` is kept (`EvalConfig.user_simulator_config`, snake_case) and
applies to the cases that simulate their user (`EvalConfig.simulated_cases`, which
`AgentEvaluator` calls): `max_allowed_invocations` → `max_turns`, `custom_instructions` and the
`model` into the simulation's `extra` (see `agenteval.casefiles.adk_scenario`).

In agenteval's own names (`EvalConfig(criteria=...)`, `CriteriaConfig(...)`),
`response_match_score` is the criterion API's LLM-judged `ResponseMatchCriterion`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from agenteval.case import EvalCase
from agenteval.casefiles.adk_scenario import SettingProblem, simulated, simulator_settings
from agenteval.casefiles.read_adk import ADK_TEST_CONFIG as TEST_CONFIG_NAME
from agenteval.criteria.config import CriterionConfig
from agenteval.errors import ConfigError
from agenteval.evalset.criterion_settings import (
    EFFICIENCY_METRICS,
    UnknownSetting,
    criterion_config,
    snake,
)
from agenteval.evalset.criterion_settings import meant as meant_name
from agenteval.json_syntax import explain_json_error

if TYPE_CHECKING:
    from agenteval.criteria.base import BaseCriterion

__all__ = [
    "ADK_METRICS",
    "ADK_TEST_CONFIG",
    "EFFICIENCY_METRICS",
    "CriteriaConfig",
    "EvalConfig",
]

logger = logging.getLogger("agenteval")

ADK_TEST_CONFIG = TEST_CONFIG_NAME
"""ADK's criteria file, looked for beside an eval set (`EvalConfig.for_file`)."""

ADK_METRICS: dict[str, str] = {
    "tool_trajectory_avg_score": "tool_trajectory_avg_score",
    "response_match_score": "rouge_match",
    "final_response_match_v2": "final_response_match_v2",
    "rubric_based_final_response_quality_v1": "rubric_based_final_response_quality_v1",
    "hallucinations_v1": "hallucinations_v1",
    "safety_v1": "safety_v1",
    "rubric_based_tool_use_quality_v1": "rubric_based_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1": (
        "rubric_based_multi_turn_trajectory_quality_v1"
    ),
    "multi_turn_task_success_v1": "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1": "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1": "multi_turn_tool_use_quality_v1",
    "per_turn_user_simulator_quality_v1": "per_turn_user_simulator_quality_v1",
    "tool_call_count_v1": "tool_call_count_v1",
    "inference_call_count_v1": "inference_call_count_v1",
    "token_usage_v1": "token_usage_v1",
    "invocation_duration_v1": "invocation_duration_v1",
}
"""ADK's metric names and the agenteval criteria they mean."""

_ADK_UNSUPPORTED = {
    "response_evaluation_score": "it is Vertex AI's coherence score (1 to 5); use "
    "final_response_match_v2 or rubric_based_final_response_quality_v1",
}


def _unknown_field(name: str) -> ValueError:
    return ValueError(f"Unknown criterion field: {name!r}")


class CriteriaConfig(BaseModel):
    """The criteria an evaluation runs, by registry name, each with its `CriterionConfig`.

    A field left at None does not run; a threshold alone (`safety_v1=0.9`) or a mapping of
    settings is read as a `CriterionConfig`. An unknown name raises
    `ValueError: Unknown criterion field: 'exact_match'`.
    """

    model_config = ConfigDict(extra="forbid")

    tool_trajectory_avg_score: CriterionConfig | None = None
    """`TrajectoryMatchCriterion`: the expected tool calls, by `match_type` and `check_args`."""
    tool_name_match_score: CriterionConfig | None = None
    """`ToolNameMatchCriterion`: the expected tool names, as a multiset."""
    node_order_score: CriterionConfig | None = None
    """`NodeOrderMatchCriterion`: the expected graph nodes, by `match_type`."""
    rouge_match: CriterionConfig | None = None
    """`RougeMatchCriterion`: ROUGE-1 F1 against the expected response (ADK's
    `response_match_score`)."""
    contains_keywords: CriterionConfig | None = None
    """`ContainsKeywordsCriterion`: `keywords` in the response."""
    response_match_score: CriterionConfig | None = None
    """`ResponseMatchCriterion`: the LLM judge's semantic match with the expected response."""
    final_response_match_v2: CriterionConfig | None = None
    """`LLMJudgeCriterion`: the LLM judge's verdict on the final response."""
    rubric_based_final_response_quality_v1: CriterionConfig | None = None
    """`RubricBasedCriterion`: the LLM judge against rubrics (the config's, the case's and
    every turn's)."""
    factual_accuracy_v1: CriterionConfig | None = None
    """`FactualAccuracyCriterion`: facts, numbers, dates and names."""
    hallucinations_v1: CriterionConfig | None = None
    """`HallucinationCriterion`: claims grounded in the tool results."""
    safety_v1: CriterionConfig | None = None
    """`SafetyCriterion`: harmless and policy-safe."""
    rubric_based_tool_use_quality_v1: CriterionConfig | None = None
    """`RubricBasedToolUseCriterion`: each turn's tool calls against the `TOOL_USE_QUALITY`
    rubrics (the config's, the case's and the turn's)."""
    multi_turn_task_success_v1: CriterionConfig | None = None
    """`MultiTurnTaskSuccessCriterion`: the user's goals reached over the conversation."""
    multi_turn_trajectory_quality_v1: CriterionConfig | None = None
    """`MultiTurnTrajectoryQualityCriterion`: the agent's path through the conversation."""
    multi_turn_tool_use_quality_v1: CriterionConfig | None = None
    """`MultiTurnToolUseQualityCriterion`: the agent's tool calls across the conversation."""
    rubric_based_multi_turn_trajectory_quality_v1: CriterionConfig | None = None
    """`RubricBasedMultiTurnTrajectoryCriterion`: the conversation against the
    `TRAJECTORY_QUALITY` rubrics."""
    per_turn_user_simulator_quality_v1: CriterionConfig | None = None
    """`PerTurnUserSimulatorQualityCriterion`: the simulated user's messages, each judged
    against its goal (ADK's `conversation_plan`) and persona."""
    tool_call_count_v1: CriterionConfig | None = None
    """Tool calls per turn: reported, never pass or fail (no threshold)."""
    inference_call_count_v1: CriterionConfig | None = None
    """Model calls per turn: reported, never pass or fail (no threshold)."""
    token_usage_v1: CriterionConfig | None = None
    """Tokens per turn: reported, never pass or fail (no threshold)."""
    invocation_duration_v1: CriterionConfig | None = None
    """Seconds per turn: reported, never pass or fail (no threshold)."""

    names: ClassVar[tuple[str, ...]]
    """Every criterion field, in the order criteria run and reports list them."""

    def __init__(self, **data: Any) -> None:
        self._check_names(data)
        super().__init__(**data)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> CriteriaConfig:
        """Validate a mapping of criteria (an unknown name raises `ValueError`)."""
        if isinstance(obj, Mapping):
            cls._check_names(obj)
        return super().model_validate(obj, **kwargs)

    @classmethod
    def _check_names(cls, data: Mapping[str, Any]) -> None:
        for key in data:
            if key not in cls.model_fields:
                raise _unknown_field(str(key))

    @field_validator("*", mode="before")
    @classmethod
    def _as_config(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        return criterion_config(info.field_name or "criterion", value)

    def configured(self) -> dict[str, CriterionConfig]:
        """The criteria that run: name → config, for every field set and enabled."""
        result: dict[str, CriterionConfig] = {}
        for name in self.names:
            config = getattr(self, name)
            if config is not None and config.enabled:
                result[name] = config
        return result

    def build(self) -> list[BaseCriterion]:
        """The criterion objects, from `CRITERIA_REGISTRY` (so a class registered under one of
        these names takes its place)."""
        from agenteval.criteria import CRITERIA_REGISTRY

        return [
            CRITERIA_REGISTRY[name](config=config) for name, config in self.configured().items()
        ]


CriteriaConfig.names = tuple(CriteriaConfig.model_fields)


class EvalConfig(BaseModel):
    """What an `AgentEvaluator` checks: its `criteria`, and whether a case's expected
    `final_session_state` is compared (`final_session_state_match`, on by default).

    `EvalConfig.load` reads ADK's `test_config.json`; `EvalConfig.for_file` finds the one beside
    an eval set, as ADK does, else `EvalConfig.default()`.
    """

    model_config = ConfigDict(extra="forbid")

    criteria: CriteriaConfig = Field(default_factory=CriteriaConfig)
    check_final_session_state: bool = True
    """Compare each case's expected `final_session_state` with the state the agent reports."""
    report_efficiency: bool = False
    """Report ADK's four efficiency metrics (`tool_call_count_v1`, `inference_call_count_v1`,
    `token_usage_v1`, `invocation_duration_v1`) on every case, as ADK does on every eval,
    besides the criteria (those named in `criteria` are not added twice). Reported, never a
    pass or a fail."""
    user_simulator_config: dict[str, Any] | None = None
    """ADK's `user_simulator_config` (keys in snake_case): what the cases that simulate their
    user take from it (`simulated_cases`). None: the cases as read."""

    @field_validator("user_simulator_config")
    @classmethod
    def _simulator_config(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        try:
            return simulator_settings(value).given
        except SettingProblem as exc:
            raise ValueError(f"{exc.message} ({exc.hint})") from exc

    def simulated_cases(self, cases: Sequence[EvalCase]) -> list[EvalCase]:
        """`cases`, those that simulate their user with `user_simulator_config` applied."""
        if self.user_simulator_config is None:
            return list(cases)
        return simulated(cases, simulator_settings(self.user_simulator_config))

    def __init__(self, **data: Any) -> None:
        _check_criteria(data)
        super().__init__(**data)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> EvalConfig:
        """Validate a mapping (an unknown criterion name raises `ValueError`)."""
        if isinstance(obj, Mapping):
            _check_criteria(obj)
        return super().model_validate(obj, **kwargs)

    def build_criteria(self) -> list[BaseCriterion]:
        """The criterion objects the config runs: `criteria.build()`, then, with
        `report_efficiency`, the efficiency metrics the criteria do not name."""
        built = self.criteria.build()
        if self.report_efficiency:
            from agenteval.criteria import CRITERIA_REGISTRY

            named = set(self.criteria.configured())
            built += [CRITERIA_REGISTRY[n]() for n in EFFICIENCY_METRICS if n not in named]
        return built

    @classmethod
    def default(cls) -> EvalConfig:
        """ADK's default criteria: `tool_trajectory_avg_score` at 1.0 (the exact calls, with
        their arguments) and ADK's `response_match_score` (ROUGE-1) at 0.8."""
        return cls.from_adk(
            {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}
        )

    @classmethod
    def from_adk(
        cls, data: Any, *, source: str | Path | None = None, report_efficiency: bool = False
    ) -> EvalConfig:
        """An `EvalConfig` from ADK's `test_config.json` content (`{"criteria": {...}}`), with
        ADK's meaning of its metric names (see the module's table); `report_efficiency` reports
        the efficiency metrics on every case, as ADK does. Mistakes raise `ConfigError` naming
        `source` and the field."""
        file = str(source) if source is not None else None
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"an ADK eval config is a JSON object, got {type(data).__name__}",
                file=file,
                hint='write {"criteria": {"tool_trajectory_avg_score": 1.0}}',
            )
        criteria: dict[str, CriterionConfig] = {}
        simulator: dict[str, Any] | None = None
        for key, value in data.items():
            field = snake(str(key))
            if field == "criteria":
                if not isinstance(value, Mapping):
                    raise ConfigError(
                        "criteria should be an object of metric names and thresholds",
                        file=file,
                        field="criteria",
                        hint='write "criteria": {"tool_trajectory_avg_score": 1.0}',
                    )
                for metric, setting in value.items():
                    name = _adk_name(str(metric), file)
                    try:
                        criteria[name] = criterion_config(name, setting, adk=True)
                    except UnknownSetting as exc:
                        raise ConfigError(
                            str(exc),
                            file=file,
                            field=".".join(("criteria", str(metric), *exc.path)),
                            hint=f"did you mean {exc.meant!r}?"
                            if exc.meant
                            else "a threshold (0 to 1), or an object with threshold, "
                            "judge_model_options, match_type, rubrics",
                        ) from exc
                    except (ValueError, ValidationError) as exc:
                        raise ConfigError(
                            _first_error(exc),
                            file=file,
                            field=f"criteria.{metric}",
                            hint=f'write "{metric}": {{}}: it is reported, never passed or failed'
                            if name in EFFICIENCY_METRICS
                            else "a threshold (0 to 1), or an object with threshold, "
                            "judge_model_options, match_type, rubrics",
                        ) from exc
            elif field == "user_simulator_config":
                if value is not None:
                    try:
                        simulator = simulator_settings(value).given
                    except SettingProblem as exc:
                        raise ConfigError(
                            exc.message,
                            file=file,
                            field=".".join((field, *exc.path)),
                            hint=exc.hint,
                        ) from exc
            elif field == "live_model_config":
                logger.warning("%s: %s is not used by agenteval", file or "eval config", key)
            elif field == "custom_metrics":
                raise ConfigError(
                    "ADK custom metrics cannot run in agenteval",
                    file=file,
                    field=str(key),
                    hint="write the metric as a criterion (subclass SyncCriterion) and pass it "
                    "as AgentEvaluator(..., criteria=[MyCriterion()])",
                )
            else:
                meant = meant_name(
                    str(key),
                    ["criteria", "user_simulator_config", "live_model_config", "custom_metrics"],
                )
                raise ConfigError(
                    f"unknown key {str(key)!r} in an ADK eval config",
                    file=file,
                    field=str(key),
                    hint=f"did you mean {meant!r}?"
                    if meant
                    else "an ADK eval config holds `criteria`",
                )
        return cls(
            criteria=CriteriaConfig(**criteria),
            report_efficiency=report_efficiency,
            user_simulator_config=simulator,
        )

    @classmethod
    def load(cls, path: str | Path) -> EvalConfig:
        """Read ADK's `test_config.json` (or any file of that shape)."""
        source = Path(path)
        text, data = _read_json(source)
        try:
            return cls.from_adk(data, source=source)
        except ConfigError as exc:
            if exc.line is not None or exc.field is None:
                raise
            raise ConfigError(
                exc.message,
                file=exc.file,
                line=_key_line(text, exc.field.split(".")),
                field=exc.field,
                hint=exc.hint,
            ) from exc.__cause__

    @classmethod
    def for_file(cls, eval_file: str | Path) -> EvalConfig:
        """The config ADK would use for an eval set: `test_config.json` in its folder, else
        `EvalConfig.default()`."""
        path = Path(eval_file)
        folder = path if path.is_dir() else path.parent
        config = folder / ADK_TEST_CONFIG
        return cls.load(config) if config.is_file() else cls.default()


def _check_criteria(data: Mapping[str, Any]) -> None:
    criteria = data.get("criteria")
    if isinstance(criteria, Mapping):
        CriteriaConfig._check_names(criteria)


def _adk_name(metric: str, file: str | None) -> str:
    if metric in ADK_METRICS:
        return ADK_METRICS[metric]
    if metric in _ADK_UNSUPPORTED:
        raise ConfigError(
            f"ADK's {metric!r} has no agenteval criterion: {_ADK_UNSUPPORTED[metric]}",
            file=file,
            field=f"criteria.{metric}",
            hint="remove it, or use another criterion",
        )
    if metric in CriteriaConfig.model_fields:
        return metric  # one of agenteval's own criteria
    meant = meant_name(metric, [*ADK_METRICS, *_ADK_UNSUPPORTED, *CriteriaConfig.model_fields])
    raise ConfigError(
        f"unknown metric {metric!r}",
        file=file,
        field=f"criteria.{metric}",
        hint=f"did you mean {meant!r}?"
        if meant
        else "ADK metrics: "
        + ", ".join(ADK_METRICS)
        + "; agenteval criteria: "
        + ", ".join(CriteriaConfig.model_fields),
    )


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        problem = exc.errors()[0]
        where = ".".join(str(step) for step in problem["loc"])
        return f"{where}: {problem['msg']}" if where else str(problem["msg"])
    return str(exc)


def _key_line(text: str, path: list[str]) -> int | None:
    """The line where the key at `path` is written: each key looked for after its parent's
    (an eval config is small and its keys are few; a key given twice is caught by its reader)."""
    offset = -1
    for key in path:
        found = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, offset + 1)
        if found is None:
            break
        offset = found.start()
    return text.count("\n", 0, offset) + 1 if offset >= 0 else None


def _read_json(source: Path) -> tuple[str, Any]:
    """The text of an eval config file and the JSON it holds; raises `ConfigError`."""

    def error(message: str, hint: str, line: int | None = None) -> ConfigError:
        return ConfigError(message, file=str(source), line=line, hint=hint)

    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(
            f"cannot read the eval config: {exc.strerror or exc}", "check the path"
        ) from exc
    except UnicodeDecodeError as exc:
        line = _text_line(source, exc.start)
        raise error("the eval config is not UTF-8 text", "save the file as UTF-8", line) from exc
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"invalid JSON: {exc.msg} (column {exc.colno})",
            explain_json_error(exc, one_value="an eval config is one JSON object"),
            exc.lineno,
        ) from exc
    # Past what Python's parser reads: ~1,000 levels on 3.11, ~10,000 on 3.13.
    except RecursionError as exc:
        raise error(
            "invalid JSON: nested too deeply to read",
            "an eval config holds criteria and their settings, a few levels deep",
        ) from exc


def _text_line(path: Path, offset: int) -> int | None:
    """The line of the byte at `offset` in `path`, or None when the file cannot be read."""
    try:
        return path.read_bytes().count(b"\n", 0, offset) + 1
    except OSError:
        return None
