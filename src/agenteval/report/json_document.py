"""The run as a JSON document (schema `agenteval.run/1`), as `--json FILE` writes it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from agenteval.owners import owner_gone
from agenteval.records import MissingTrials, RunInfo, RunStatus, TrialResult, shown_status
from agenteval.redaction import Redactor
from agenteval.report.summary import Summary

__all__ = ["SCHEMA", "completeness", "result_document", "run_document", "write_run_json"]

SCHEMA = "agenteval.run/1"


def completeness(info: RunInfo, missing: MissingTrials | None) -> dict[str, Any]:
    """Where the run stands, as the document's `status`, `complete` and `missing` say it.

    `status` (`records.shown_status`) is `finished` only when every (case, trial) has a stored
    result and the run was marked finished: a run a store marked finished with trials missing
    (as an older agenteval could) is `incomplete`, one with trials missing still going is
    `running` (`interrupted` once its process is gone from this machine), and one with every
    trial stored never marked finished (killed after its last trial) is `stopped`. `complete`
    says whether every trial is stored; `missing` is null for a complete run, else `{count,
    expected, stored, examples}` (a few of the missing trials, `{case_id, trial}`). Without a
    count (`missing` None), the stored status is taken as it is.
    """
    if missing is None:
        done = info.status is RunStatus.FINISHED
        return {"status": info.status.value, "complete": done, "missing": None}
    if missing.count == 0:
        return {"status": shown_status(info.status, True), "complete": True, "missing": None}
    gone = owner_gone(info.settings.get("owner"))
    return {
        "status": shown_status(info.status, False, owner_gone=gone),
        "complete": False,
        "missing": {
            "count": missing.count,
            "expected": missing.expected,
            "stored": missing.stored,
            "examples": [
                {"case_id": case_id, "trial": trial} for case_id, trial in missing.examples
            ],
        },
    }


def _header(
    info: RunInfo, summary: Summary, missing: MissingTrials | None = None
) -> dict[str, Any]:
    # The results come from the store, redacted when they were written; the run's settings
    # may be the ones in memory, so they are redacted here (the summary is, when it is built).
    info = Redactor.from_environment().redact_model(info)
    return {
        "schema": SCHEMA,
        "run_id": info.run_id,
        "created_at": info.created_at.isoformat(),
        "finished_at": info.finished_at.isoformat() if info.finished_at else None,
        **completeness(info, missing),
        "settings": {
            "target": info.target,
            "agent": info.agent,
            "dataset": info.dataset,
            "trials": info.trials,
            "concurrency": info.concurrency,
            "timeout_s": info.timeout_s,
            "max_retries": info.max_retries,
            "scorers": info.scorers,
            "builtins": info.builtins,
            # How `agenteval score` matched traces to cases (by order? how many left out?).
            **({"matching": info.settings["matching"]} if "matching" in info.settings else {}),
            # Which stored run's tool results the run replayed (`--replay-tools`), and how.
            **({"replay": info.settings["replay"]} if "replay" in info.settings else {}),
            # Where the trials ran (`local`, `process`, `ray`), for runs that record it.
            **({"executor": info.settings["executor"]} if "executor" in info.settings else {}),
        },
        "tools": {name: spec.model_dump(mode="json") for name, spec in info.tools.items()},
        "summary": _summary(summary),
    }


_SIMULATOR_COST = {"simulator_usd", "simulator_per_correct_usd"}


def _summary(summary: Summary) -> dict[str, Any]:
    """The summary as the document holds it: a run without simulated conversations has no
    `simulation` key and no simulator cost (nothing to say, not a null to explain)."""
    if summary.simulation is not None:
        return summary.model_dump(mode="json")
    return summary.model_dump(mode="json", exclude={"simulation": True, "cost": _SIMULATOR_COST})


def _simulation(result: TrialResult) -> dict[str, Any]:
    """The trial's simulated conversation (`simulation`), when it had one: who played the
    user, each turn (the message, who wrote it, the agent's answer), how it ended, and the
    simulator's tokens and cost."""
    conversation = result.trial.simulation
    if conversation is None:
        return {}
    return {
        "simulation": {
            "user": conversation.user,
            "goal": result.case.user_simulation.goal if result.case.user_simulation else None,
            "turns": [turn.model_dump(mode="json") for turn in conversation.turns],
            "end_reason": conversation.end_reason,
            "end_detail": conversation.end_detail,
            "turns_to_goal": conversation.turns_to_goal,
            "model_calls": len(conversation.model_calls),
            "cached_calls": conversation.cached_calls,
            "usage": conversation.usage.model_dump(mode="json"),
            "cost_usd": conversation.cost_usd,
        }
    }


def result_document(result: TrialResult) -> dict[str, Any]:
    """One (case, trial) result as the document's `results` list holds it."""
    trial = result.trial
    return {
        "case_id": result.case.id,
        "trial": trial.trial,
        "input": to_jsonable_python(result.case.input),
        "expected_output": result.case.expected_output,
        "output": trial.output,
        "failure": trial.failure.model_dump(mode="json") if trial.failure else None,
        "latency_s": trial.latency_s,
        "working_latency_s": trial.working_latency_s,
        "attempts": trial.attempts,
        "retries": trial.retries,
        "usage": trial.usage.model_dump(mode="json"),
        "tool_calls": [
            {
                "name": call.name,
                "arguments": to_jsonable_python(call.arguments, fallback=repr),
                "result": to_jsonable_python(call.result, fallback=repr),
                "error": call.error,
                "duration_s": call.duration_s,
                "mocked": call.mocked,  # "mock" / "replay": the tool did not run
            }
            for call in trial.tool_calls
        ],
        "expected_state": to_jsonable_python(result.case.expected_state, fallback=repr),
        "state": to_jsonable_python(trial.state, fallback=repr),  # None: the trial had none
        **_simulation(result),
        "scores": {
            name: {
                "value": score.value,
                "passed": score.passed,
                "reason": score.reason,
                "error": score.error,
                "details": to_jsonable_python(score.details, fallback=repr),
                **(
                    {
                        "judge": score.judge.model_dump(mode="json"),
                        "usage": score.usage.model_dump(mode="json") if score.usage else None,
                    }
                    if score.judge is not None
                    else {}
                ),
            }
            for name, score in result.scores.items()
        },
    }


def run_document(
    info: RunInfo,
    summary: Summary,
    results: Iterable[TrialResult],
    missing: MissingTrials | None = None,
) -> dict[str, Any]:
    """The whole run as one JSON-ready dict; `missing` (`RunStore.missing_trials`) says
    whether it is complete (see `completeness`)."""
    document = _header(info, summary, missing)
    document["results"] = [result_document(result) for result in results]
    return document


def write_run_json(
    path: Path,
    info: RunInfo,
    summary: Summary,
    results: Iterable[TrialResult],
    missing: MissingTrials | None = None,
) -> None:
    """Write the document to `path`, one result at a time (flat in memory for large runs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = json.dumps(_header(info, summary, missing), ensure_ascii=False)
    with path.open("w", encoding="utf-8") as out:
        out.write(header[:-1] + ', "results": [')
        for i, result in enumerate(results):
            out.write(",\n" if i else "\n")
            out.write(json.dumps(result_document(result), ensure_ascii=False))
        out.write("\n]}\n")
