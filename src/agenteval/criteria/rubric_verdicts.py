"""Rubrics decided one by one, yes or no, by a majority of the judge's samples: what ADK's
rubric-based evaluators of tool use and of a multi-turn trajectory do
(`rubric_based_tool_use_quality_v1`, `rubric_based_multi_turn_trajectory_quality_v1`).

**Which rubrics.** A metric of this kind grades the rubrics of its own type (ADK's rubric
`type`: `TOOL_USE_QUALITY`, `TRAJECTORY_QUALITY`) written on the case or on a turn, plus every
rubric of the criterion's config (whatever its type), as ADK does. A rubric id given twice
counts once (the first).

**One judgement.** The judge is asked `num_samples` times (agenteval's one judge: its cache,
retries, limits and redaction); each sample says, for each rubric, met or not
(`rubric_verdicts`). A rubric's verdict is the majority of the samples that decided it: 1.0
(met) or 0.0 (not met). When as many samples say met as not, the judge has not decided: ADK
counts that rubric as not met; agenteval leaves it out of the score and names it under
`ties` (a judge tie is not a fail, `agenteval.evalset.ties`). A sample that failed, or that
left a rubric out, gives that rubric no vote; a rubric no sample decided is listed under
`unvoted`. When every sample failed, the result is the error `All LLM samples failed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agenteval.case import EvalCase, Rubric
from agenteval.judge.judge import Judge
from agenteval.judge.templates import load_template
from agenteval.score import JudgeRecord
from agenteval.trace import Usage

__all__ = ["RubricVotes", "ask_rubrics", "rubric_lines", "typed_rubrics"]


def typed_rubrics(
    config_rubrics: Iterable[Rubric], case: EvalCase, kind: str, turns: Iterable[int] | None
) -> list[Rubric]:
    """The config's rubrics, then the case's and the given turns' rubrics of type `kind` (every
    turn's when `turns` is None); an id given twice counts once."""
    chosen = list(config_rubrics)
    chosen += [r for r in case.rubrics or [] if r.type == kind]
    conversation = case.conversation or []
    indices = range(len(conversation)) if turns is None else turns
    for index in indices:
        if 0 <= index < len(conversation):
            chosen += [r for r in conversation[index].rubrics if r.type == kind]
    seen: set[str] = set()
    unique: list[Rubric] = []
    for rubric in chosen:
        if rubric.rubric_id not in seen:
            seen.add(rubric.rubric_id)
            unique.append(rubric)
    return unique


def rubric_lines(rubrics: Iterable[Rubric]) -> str:
    """The rubrics as the templates list them: `- rubric_id: rule`, one a line."""
    return "\n".join(f"- {rubric.rubric_id}: {rubric.content}" for rubric in rubrics)


@dataclass
class RubricVotes:
    """The judge's samples on a set of rubrics, counted rubric by rubric."""

    verdicts: dict[str, float] = field(default_factory=dict)
    """The decided rubrics: 1.0 met, 0.0 not met, by a majority of the samples."""
    votes: dict[str, dict[str, int]] = field(default_factory=dict)
    """Every rubric's `met` and `not_met` sample counts."""
    reasons: dict[str, list[str]] = field(default_factory=dict)
    ties: list[str] = field(default_factory=list)
    unvoted: list[str] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    judge: JudgeRecord | None = None
    error: str | None = None

    @property
    def score(self) -> float | None:
        """The share of decided rubrics met (None when none was decided)."""
        if not self.verdicts:
            return None
        return sum(self.verdicts.values()) / len(self.verdicts)


def _count(samples: list[dict[str, Any]], ids: list[str]) -> RubricVotes:
    votes = {rid: {"met": 0, "not_met": 0} for rid in ids}
    reasons: dict[str, list[str]] = {rid: [] for rid in ids}
    for sample in samples:
        entries = sample.get("rubric_verdicts")
        if not isinstance(entries, list):
            continue
        decided: set[str] = set()
        for entry in entries:
            if not isinstance(entry, Mapping):
                continue
            rid = str(entry.get("rubric_id", "")).strip()
            met = entry.get("met")
            if rid not in votes or rid in decided or not isinstance(met, bool):
                continue  # a rubric not asked about, or decided twice in one sample
            decided.add(rid)
            votes[rid]["met" if met else "not_met"] += 1
            if isinstance(entry.get("reason"), str) and entry["reason"]:
                reasons[rid].append(entry["reason"])
    result = RubricVotes(votes=votes, reasons=reasons)
    for rid, count in votes.items():
        if count["met"] > count["not_met"]:
            result.verdicts[rid] = 1.0
        elif count["not_met"] > count["met"]:
            result.verdicts[rid] = 0.0
        elif count["met"]:
            result.ties.append(rid)
        else:
            result.unvoted.append(rid)
    return result


async def ask_rubrics(
    judge: Judge,
    name: str,
    template_id: str,
    blocks: Mapping[str, str],
    rubrics: list[Rubric],
    *,
    num_samples: int,
) -> RubricVotes:
    """Ask the judge about `rubrics` (`num_samples` samples) and count the votes."""
    template = load_template(template_id)
    score = await judge.score(name, template, blocks, num_samples=num_samples, threshold=0.5)
    samples = list(score.details.get("samples", []))
    good = [sample for sample in samples if "score" in sample]
    result = _count(good, [rubric.rubric_id for rubric in rubrics])
    result.samples = samples
    result.usage = score.usage
    result.judge = score.judge
    if score.error is not None or not good:
        result.error = score.error or "All LLM samples failed"
    return result
