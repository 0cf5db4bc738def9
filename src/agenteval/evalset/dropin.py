"""Google ADK's static `AgentEvaluator` API (google-adk 2.13), in parts: where the agent, the test
files, their criteria and session come from, and the pass/fail verdict with ADK's wording.

`AgentEvaluator.evaluate(agent_module=..., eval_dataset_file_path_or_dir=..., num_runs=...)` and
`AgentEvaluator.evaluate_eval_set(...)` (`evalset/evaluator.py`) put these parts together around
agenteval's own run, so that an ADK test changes only its import:

- the agent: ADK's lookup (`adk_agent`): the module `agent_module`, its `agent` member (or the
  module itself when its name ends in `.agent`), there `root_agent`, else `get_agent_async()`;
  `agent_name` picks a sub-agent with `find_agent`. A module with `root_agent` at its top is
  accepted too.
- the files (`eval_files`): a file, or every `*.test.json` under a folder; each its own run with
  the `test_config.json` beside it (else ADK's defaults), `initial_session_file` the session of
  legacy files (ADK's, never an `initial.session.json` found beside a file). An ADK config runs
  as ADK runs it (`adk_config`): ADK 2.13 does not compare a case's `final_session_state`, so
  neither does the drop-in (agenteval's instance API does).
- the verdict (`metric_verdicts`, `failure_lines`): per eval case and metric, the mean of its
  scores over every trial (ADK's `num_runs`) against the threshold; a metric with no score is a
  failure "was not evaluated"; a metric with no threshold is reported only (ADK's efficiency
  metrics, reported on every case as ADK does: `as_adk_runs_it`); `assert_passed` raises
  `AssertionError` with every failure and the runs' ids.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from statistics import fmean
from types import ModuleType
from typing import Any

from agenteval.errors import AgentLoadError, ConfigError, DatasetError
from agenteval.evalset.config import ADK_METRICS, EvalConfig
from agenteval.evalset.evalset import EvalSet
from agenteval.evalset.report import EvalReport
from agenteval.json_syntax import explain_json_error
from agenteval.loading import import_named_module
from agenteval.score import Score
from agenteval.scorers.reported import is_reported, reported_value

__all__ = [
    "NUM_RUNS",
    "MetricStatus",
    "MetricVerdict",
    "adk_agent",
    "adk_config",
    "adk_metric_name",
    "as_adk_runs_it",
    "assert_passed",
    "check_adk_arguments",
    "config_for_test_file",
    "detailed_results",
    "eval_config_of",
    "eval_files",
    "eval_set_of",
    "failure_lines",
    "load_test_file",
    "metric_verdicts",
    "read_initial_session",
]

logger = logging.getLogger("agenteval")

NUM_RUNS = 2
"""ADK's default `num_runs`: every case runs twice."""

_ADK_NAMES = {criterion: metric for metric, criterion in ADK_METRICS.items() if metric != criterion}


def adk_metric_name(criterion: str) -> str:
    """The name ADK gives the metric a criterion computes (`rouge_match` is ADK's
    `response_match_score`); a criterion ADK has no name for keeps its own."""
    return _ADK_NAMES.get(criterion, criterion)


# --- the arguments


def check_adk_arguments(
    num_runs: int,
    *,
    artifact_service: Any = None,
    output_file: str | None = None,
    app_name: str | None = None,
    eval_set_results_manager: Any = None,
) -> None:
    """ADK's checks of its arguments, and a clear refusal of ADK's persistence options:
    agenteval stores the run itself (`agenteval show RUN_ID`, `agenteval report RUN_ID`)."""
    if isinstance(num_runs, bool) or not isinstance(num_runs, int) or num_runs < 1:
        raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
    if eval_set_results_manager is not None and not app_name:
        raise ValueError("app_name is required when eval_set_results_manager is provided.")
    refused = {
        "artifact_service": (
            artifact_service,
            "each trial runs in a fresh in-memory session; load what the agent needs in its tools",
        ),
        "output_file": (
            output_file,
            "the run is stored: `agenteval show RUN_ID --verbose`, "
            "`agenteval report RUN_ID --html FILE`",
        ),
        "eval_set_results_manager": (
            eval_set_results_manager,
            "agenteval stores every run; `agenteval show RUN_ID` reads it",
        ),
    }
    for name, (value, hint) in refused.items():
        if value is not None:
            raise ConfigError(
                f"agenteval's AgentEvaluator does not take ADK's {name}",
                field=name,
                hint=f"remove it: {hint}",
            )


def adk_config(data: Any, *, source: str | Path | None = None) -> EvalConfig:
    """An ADK eval config (`{"criteria": {...}}`) as ADK 2.13 runs it (`as_adk_runs_it`)."""
    return as_adk_runs_it(EvalConfig.from_adk(data, source=source))


def as_adk_runs_it(config: EvalConfig) -> EvalConfig:
    """`config` as ADK 2.13's evaluator runs it: the efficiency metrics reported on every case
    (`report_efficiency`), and no comparison of a case's `final_session_state`."""
    return config.model_copy(update={"check_final_session_state": False, "report_efficiency": True})


def config_for_test_file(test_file: str | Path) -> EvalConfig:
    """ADK's `find_config_for_test_file`: the `test_config.json` in the test file's folder, else
    ADK's default criteria; read as ADK runs it (`adk_config`)."""
    return as_adk_runs_it(EvalConfig.for_file(Path(test_file).parent / "any.test.json"))


def eval_config_of(criteria: Mapping[str, float] | None, eval_config: Any) -> EvalConfig:
    """The config of `evaluate_eval_set`: ADK's deprecated `criteria` (metric → threshold), else
    `eval_config`: ADK's `EvalConfig` (or its JSON) read as ADK runs it (`adk_config`), or
    agenteval's `EvalConfig`, used as given."""
    if criteria:
        logger.warning(
            "`criteria` is deprecated (as in ADK): pass eval_config=EvalConfig(...) instead"
        )
        return adk_config({"criteria": dict(criteria)})
    if eval_config is None:
        raise ValueError("`eval_config` is required.")
    if isinstance(eval_config, EvalConfig):
        return eval_config
    dump = getattr(eval_config, "model_dump", None)
    if callable(dump):  # ADK's own EvalConfig (a pydantic model)
        return adk_config(dump(mode="json", exclude_none=True))
    if isinstance(eval_config, Mapping):
        return adk_config(eval_config)
    raise ConfigError(
        f"eval_config should be an EvalConfig, got {type(eval_config).__name__}",
        field="eval_config",
        hint="pass agenteval's EvalConfig, ADK's EvalConfig, or {'criteria': {...}}",
    )


def eval_set_of(eval_set: Any) -> EvalSet:
    """agenteval's `EvalSet` for `evaluate_eval_set`: as given, or read from ADK's `EvalSet`."""
    if isinstance(eval_set, EvalSet):
        found = eval_set
    else:
        dump = getattr(eval_set, "model_dump", None)
        if not callable(dump):
            raise ConfigError(
                f"eval_set should be an EvalSet, got {type(eval_set).__name__}",
                field="eval_set",
                hint="pass agenteval's EvalSet (EvalSet.load(path)) or ADK's EvalSet",
            )
        found = EvalSet.from_adk(dump(mode="json", exclude_none=True), source="eval_set")
    if not found.cases:
        raise ValueError(
            "No eval cases were evaluated, so there is nothing to report a pass or a failure "
            "for. This happens when `eval_set` has no eval cases."
        )
    return found


# --- the test files


def eval_files(path_or_dir: str | Path) -> list[Path]:
    """The files `evaluate` runs: the file given, or every `*.test.json` under the folder (as
    ADK walks it; sorted, so runs are in the same order everywhere)."""
    source = Path(path_or_dir)
    if not source.is_dir():
        if not source.is_file():
            raise DatasetError(
                "no such eval file or folder",
                file=str(source),
                hint="eval_dataset_file_path_or_dir is a *.test.json file or a folder of them",
            )
        return [source]
    found = sorted(
        Path(root) / name
        for root, _, names in os.walk(source)
        for name in names
        if name.endswith(".test.json")
    )
    if not found:
        raise ValueError(
            f"No `*.test.json` eval files found in {path_or_dir}, so there is nothing to evaluate."
        )
    return found


def read_initial_session(initial_session_file: str | Path | None) -> dict[str, Any]:
    """ADK's `initial_session_file`: the session (`state`, `app_name`, `user_id`) of every case
    of a legacy test file; `{}` without one."""
    if not initial_session_file:
        return {}
    file = str(initial_session_file)
    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(
            f"cannot read the initial session file: {exc.strerror or exc}",
            file=file,
            hint="initial_session_file is the path of a JSON file",
        ) from exc
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"invalid JSON: {exc.msg}",
            file=file,
            line=exc.lineno,
            hint=explain_json_error(exc, one_value="an initial session file is one JSON object"),
        ) from exc
    if not isinstance(data, dict):
        raise DatasetError(
            "an initial session file holds a JSON object",
            file=file,
            hint='write {"state": {...}, "app_name": "...", "user_id": "..."}',
        )
    return data


def load_test_file(file: Path, initial_session: Mapping[str, Any]) -> EvalSet:
    """One test file as ADK reads it: an eval set (which holds its own sessions: an initial
    session given as well is ADK's error), or a legacy list of turns with `initial_session`."""
    try:
        legacy = isinstance(json.loads(file.read_text(encoding="utf-8")), list)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        legacy = True  # the reader says what is wrong with it
    if initial_session and not legacy:
        raise ConfigError(
            "Initial session should be specified as a part of EvalSet file. Explicit initial "
            "session is only needed, when specifying data in the older schema.",
            file=str(file),
            field="initial_session_file",
            hint="remove initial_session_file, or set session_input in the eval set's cases",
        )
    return EvalSet.load(file, initial_session=dict(initial_session) if legacy else None)


# --- the agent


@contextlib.asynccontextmanager
async def adk_agent(agent_module: str | ModuleType, agent_name: str | None) -> AsyncIterator[Any]:
    """The agent ADK evaluates for `agent_module` (see the module's docstring), open for the
    evaluation: what `get_agent_async()` returned with it (an exit stack) is closed after."""
    module = _import(agent_module)
    name = module.__name__
    holder: Any = getattr(module, "agent", module)
    root = getattr(holder, "root_agent", None)
    if root is None and holder is not module:
        root = getattr(module, "root_agent", None)
    cleanup: Any = None
    if root is None:
        factory = getattr(holder, "get_agent_async", None)
        if not callable(factory):
            raise AgentLoadError(
                f"Module {name} does not have a root_agent or get_agent_async method.",
                hint=f"define root_agent in {name}/agent.py (imported by {name}/__init__.py), "
                "as ADK expects",
            )
        made = await factory()
        root, cleanup = made if isinstance(made, tuple) and len(made) == 2 else (made, None)
    try:
        yield _sub_agent(root, agent_name, name)
    finally:
        close = getattr(cleanup, "aclose", None)
        if callable(close):
            await close()


def _import(agent_module: str | ModuleType) -> ModuleType:
    if isinstance(agent_module, ModuleType):
        return agent_module
    if not isinstance(agent_module, str) or not agent_module:
        raise AgentLoadError(
            f"agent_module should be a module name, got {type(agent_module).__name__}",
            hint="pass the dotted name of the module that holds root_agent, e.g. 'my_agent'; "
            "for an agent object, AgentEvaluator(agent, config).evaluate(eval_set)",
        )
    try:
        return import_named_module(agent_module, AgentLoadError, agent_module, None)
    except AgentLoadError as exc:
        missing = exc.__cause__
        if (
            isinstance(missing, ModuleNotFoundError)
            and missing.name
            and (agent_module == missing.name or agent_module.startswith(missing.name + "."))
        ):
            raise AgentLoadError(
                f"no agent module named {agent_module!r}",
                hint="agent_module is the dotted name of a module importable from the current "
                "directory (or sys.path), whose agent.py defines root_agent",
            ) from missing
        raise


def _sub_agent(root: Any, agent_name: str | None, module: str) -> Any:
    if not agent_name:
        return root
    find = getattr(root, "find_agent", None)
    if not callable(find):
        raise AgentLoadError(
            f"agent_name picks a sub-agent of an ADK agent; {module}'s root_agent is a "
            f"{type(root).__name__}",
            hint="remove agent_name, or make root_agent an ADK agent with sub_agents",
        )
    found = find(agent_name)
    if found is None:
        raise AgentLoadError(
            f"Sub-Agent {agent_name!r} not found.",
            hint=f"agent_name is the name of {module}'s root_agent or of one of its sub-agents",
        )
    return found


# --- the verdict


class MetricStatus(StrEnum):
    """A metric's verdict on one eval case, over all its trials (ADK's `EvalStatus`)."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_EVALUATED = "not_evaluated"
    INFORMATIONAL = "informational"
    """Reported, never pass/fail: a metric without a threshold (ADK's efficiency metrics)."""


@dataclass(frozen=True)
class MetricVerdict:
    """One metric on one eval case: the mean of its scores over every trial against its
    threshold (ADK's overall score of an eval case), and why it has none when it has none."""

    case_id: str
    criterion: str
    threshold: float | None
    score: float | None
    status: MetricStatus
    reason: str | None = None

    @property
    def metric(self) -> str:
        """The metric under ADK's name."""
        return adk_metric_name(self.criterion)


def metric_verdicts(report: EvalReport) -> list[MetricVerdict]:
    """Every (eval case, metric) of the report's run, in case order then criterion order."""
    thresholds = {name: stats.threshold for name, stats in report.summary.criterion_stats.items()}
    verdicts: list[MetricVerdict] = []
    for case_id in dict.fromkeys(result.eval_id for result in report.results):
        trials = report.case(case_id)
        for criterion, threshold in thresholds.items():
            scores = [
                r.criterion_results[criterion] for r in trials if criterion in r.criterion_results
            ]
            values = [found for found in map(_value, scores) if found is not None]
            mean = fmean(values) if values else None
            if threshold is None:
                status = MetricStatus.INFORMATIONAL
            elif mean is None:
                status = MetricStatus.NOT_EVALUATED
            else:
                status = MetricStatus.PASSED if mean >= threshold else MetricStatus.FAILED
            reasons = [s.error or s.reason for s in scores if s.value is None]
            reasons += [r.error for r in trials if criterion not in r.criterion_results]
            reason = next((text for text in reasons if text), None)
            verdicts.append(MetricVerdict(case_id, criterion, threshold, mean, status, reason))
    return verdicts


def _value(score: Score) -> float | None:
    """A score's value; a reported metric's measurement (ADK's efficiency metrics)."""
    return reported_value(score) if is_reported(score) else score.value


def failure_lines(report: EvalReport, agent_module: str, source: str) -> list[str]:
    """ADK's failure lines for one run (`{metric} for {agent_module} Failed. Expected
    {threshold}, but got {score}.`), each naming the eval case and `source` (its test file);
    and, as ADK's, a line for each case with trials that failed without any score (its metrics
    are then not named "not evaluated" when no trial of the case gave one)."""

    def at(case_id: str) -> str:
        return f"(eval case {case_id} of {source})"

    crashed: dict[str, str] = {}  # failures of their own
    notes: dict[str, str] = {}  # said only beside a failing metric of the case
    all_crashed: set[str] = set()
    for case_id in dict.fromkeys(result.eval_id for result in report.results):
        trials = report.case(case_id)
        failed = [r for r in trials if r.error]
        if not failed:
            continue
        unscored = [r for r in failed if all(s.value is None for s in r.criterion_results.values())]
        if unscored:  # ADK's rule: a run without any metric result fails the case
            crashed[case_id] = (
                f"{case_id} for {agent_module} Failed. {len(unscored)} of {len(trials)} runs "
                f"were recorded as failed without producing any metric results: "
                f"{unscored[0].error} {at(case_id)}"
            )
            if len(unscored) == len(trials):
                all_crashed.add(case_id)
        else:  # the failed runs were scored all the same
            notes[case_id] = (
                f"{case_id} for {agent_module}: {len(failed)} of {len(trials)} runs failed: "
                f"{failed[0].error} {at(case_id)}"
            )
    lines: list[str] = []
    failing: set[str] = set()
    for verdict in metric_verdicts(report):
        if verdict.status is MetricStatus.FAILED:
            lines.append(
                f"{verdict.metric} for {agent_module} Failed. Expected {verdict.threshold}, "
                f"but got {verdict.score}. {at(verdict.case_id)}"
            )
            failing.add(verdict.case_id)
        elif verdict.status is MetricStatus.NOT_EVALUATED and verdict.case_id not in all_crashed:
            lines.append(
                f"{verdict.metric} for {agent_module} was not evaluated. No score was produced, "
                f"so the threshold of {verdict.threshold} was never checked and this is not a "
                f"score regression{': ' + verdict.reason if verdict.reason else ''}. "
                f"{at(verdict.case_id)}"
            )
            failing.add(verdict.case_id)
    return lines + [
        crashed.get(case_id) or notes[case_id]
        for case_id in dict.fromkeys([*crashed, *notes])
        if case_id in crashed or case_id in failing
    ]


def assert_passed(
    failures: Sequence[str],
    reports: Sequence[tuple[str, EvalReport]],
    print_detailed_results: bool,
) -> None:
    """Raise ADK's `AssertionError` when there are failures, with every failure line and the id
    of each run with its source (`agenteval show RUN_ID` shows its trials and scores)."""
    if not failures:
        return
    message = "Following are all the test failures."
    if not print_detailed_results:
        message += (
            " If you looking to get more details on the failures, then please re-run this test "
            "with `print_detailed_results` set to `True`."
        )
    message += "\n" + "\n".join(failures)
    runs = ", ".join(f"{report.run_id} ({source})" for source, report in reports)
    message += f"\nagenteval stored the run{'s' if len(reports) > 1 else ''}: {runs}; "
    message += "`agenteval show RUN_ID` shows the trials and their scores"
    raise AssertionError(message)


def detailed_results(report: EvalReport, source: str) -> str:
    """What `print_detailed_results` prints for one run: ADK's summary line per metric and
    case, then agenteval's summary of the run (`EvalReport.format_summary`) with its id."""
    lines = [f"{source} (agenteval run {report.run_id})"]
    for verdict in metric_verdicts(report):
        lines.append(
            f"Summary: `{verdict.status.value.upper()}` for Metric: `{verdict.metric}` on eval "
            f"case `{verdict.case_id}`. Expected threshold: `{verdict.threshold}`, actual "
            f"value: `{verdict.score}`."
        )
    lines.append(report.format_summary())
    for result in report.results:
        calls = ", ".join(call.name for call in result.tool_calls) or "-"
        lines.append(
            f"  {result.eval_id} (trial {result.trial}): {result.status.value}; tools: {calls}; "
            f"response: {result.actual_response[:200]!r}"
        )
    return "\n".join(lines) + "\n"
