"""Matching two runs case by case: each run's trials tallied per case and scorer, then the
cases that newly fail or newly pass, and how much of what the base judged the candidate
judged too."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from agenteval.records import MissingTrials, RunInfo, RunStatus, TrialResult
from agenteval.report.compare.model import CaseChange, Coverage, RunSide, UnjudgedCase
from agenteval.report.statistics import TRIAL, ReliabilityBuilder, trial_passed
from agenteval.report.summary import SummaryBuilder

__all__ = ["RunTally", "Tally", "case_changes", "coverage", "run_side"]


@dataclass
class Tally:
    """One scorer (or the trial verdict) on one case in one run."""

    judged: int = 0
    """Trials the scorer gave a score."""
    passed: int = 0
    value_sum: float = 0.0
    binary: bool = True
    reason: str | None = None
    reason_trial: int | None = None
    errored: int = 0
    """Trials the scorer errored on: no score, and no pass (as in "the trial passes")."""

    @property
    def counted(self) -> int:
        """Trials with a verdict: scored, or errored (an error is no pass)."""
        return self.judged + self.errored

    @property
    def failed(self) -> int:
        """Counted trials that did not pass: failed, or errored."""
        return self.counted - self.passed


@dataclass
class RunTally:
    """One run's trials, streamed once: its summary and reliability, and per case each
    scorer's (and the trial verdict's) tally."""

    summary: SummaryBuilder
    reliability: ReliabilityBuilder
    passing: frozenset[str] | None
    cases: dict[str, dict[str, Tally]] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    judged: set[str] = field(default_factory=set)
    """Cases at least one of whose trials a scorer gave a score."""
    unjudged: dict[str, dict[str, int]] = field(default_factory=dict)
    """Case → why its trials were not judged → how many (every trial's, judged case or not)."""

    def add(self, result: TrialResult) -> None:
        """Count one trial."""
        self.summary.add(result)
        self.reliability.add(result)
        case_id = result.case.id
        if case_id not in self.fingerprints:
            self.fingerprints[case_id] = hashlib.sha256(
                result.case.model_dump_json().encode("utf-8")
            ).hexdigest()
        tallies = self.cases.setdefault(case_id, {})
        verdict = trial_passed(result, self.passing)
        # A trial that failed as infrastructure (a timeout, a connection error) is left out of
        # "the trial passes" as it is of every scorer: the coverage rule counts it, and an
        # outage `min_coverage` tolerates must not block the gate as a regression instead.
        if verdict is not None and result.trial.responded:
            tally = tallies.setdefault(TRIAL, Tally())
            tally.judged += 1
            tally.passed += verdict
            tally.value_sum += verdict
        judged = False
        errored = False
        for name, score in result.scores.items():
            if not score.applied or score.value is None:
                if score.error is not None:
                    # The scorer crashed: no score, and no pass. Counted as a failing trial
                    # of the scorer, so that a scorer crashing where the base passed is a
                    # regression and a new failure, not cases left out of the comparison.
                    errored = True
                    if name not in self.names:
                        self.names.append(name)
                    tally = tallies.setdefault(name, Tally())
                    tally.errored += 1
                    if tally.reason is None:
                        tally.reason = f"errored: {score.error}"
                        tally.reason_trial = result.trial.trial
                continue
            judged = True
            if name not in self.names:
                self.names.append(name)
            tally = tallies.setdefault(name, Tally())
            passed = bool(score.passed)
            tally.judged += 1
            tally.passed += passed
            tally.value_sum += score.value
            tally.binary = (
                tally.binary and score.value in (0.0, 1.0) and passed == (score.value == 1.0)
            )
            if not passed and tally.reason is None:
                tally.reason = score.reason or "failed"
                tally.reason_trial = result.trial.trial
        if judged:
            self.judged.add(case_id)
        else:
            failure = result.trial.failure
            why = (
                failure.cause.value
                if failure is not None
                else "scorer error"
                if errored
                else "no scorer applied"
            )
            counts = self.unjudged.setdefault(case_id, {})
            counts[why] = counts.get(why, 0) + 1


def run_side(info: RunInfo, tally: RunTally, missing: MissingTrials | None) -> RunSide:
    """What the comparison shows of one run (`missing`: its trials with no stored result)."""
    lacking = missing is not None and missing.count > 0
    return RunSide(
        run_id=info.run_id,
        created_at=info.created_at,
        target=info.target,
        finished=info.status is RunStatus.FINISHED and not lacking,
        missing=missing.describe() if missing is not None and lacking else None,
        partial=info.status is RunStatus.PARTIAL,
        cases=len(tally.cases),
        summary=tally.summary.build(),
        reliability=tally.reliability.build(),
    )


def case_changes(
    names: Sequence[str], base: RunTally, cand: RunTally
) -> tuple[list[CaseChange], list[CaseChange]]:
    """The cases that newly fail each scorer of `names` in the candidate, and those it newly
    passes."""
    failures: list[CaseChange] = []
    fixes: list[CaseChange] = []
    for name in names:
        for case_id, tallies in cand.cases.items():
            now = tallies.get(name)
            before = base.cases.get(case_id, {}).get(name)
            base_failed = before.failed if before else 0
            base_judged = before.counted if before else 0
            if now is None:
                continue
            if now.failed and not base_failed:
                failures.append(
                    CaseChange(
                        case_id=case_id,
                        scorer=name,
                        base_failed=0,
                        base_judged=base_judged,
                        candidate_failed=now.failed,
                        candidate_judged=now.counted,
                        in_base=case_id in base.cases,
                        reason=now.reason,
                        trial=now.reason_trial,
                    )
                )
            elif before is not None and base_failed and not now.failed:
                fixes.append(
                    CaseChange(
                        case_id=case_id,
                        scorer=name,
                        base_failed=base_failed,
                        base_judged=base_judged,
                        candidate_failed=0,
                        candidate_judged=now.counted,
                        reason=before.reason,
                        trial=before.reason_trial,
                    )
                )
    return failures, fixes


def coverage(base: RunTally, cand: RunTally) -> Coverage:
    """How much of what the base judged the candidate judged too."""
    not_run: list[str] = []
    unjudged: list[UnjudgedCase] = []
    both = 0
    for case_id in base.cases:
        if case_id not in base.judged:
            continue
        if case_id not in cand.cases:
            not_run.append(case_id)
        elif case_id in cand.judged:
            both += 1
        else:
            unjudged.append(UnjudgedCase(case_id=case_id, why=cand.unjudged.get(case_id, {})))
    return Coverage(
        base_judged=len(base.judged),
        both_judged=both,
        candidate_judged=len(cand.judged),
        not_run=not_run,
        unjudged=unjudged,
    )
