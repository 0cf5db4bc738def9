"""Matching recorded trials to the cases they answer.

By attribute: a trace names its case with the match attribute (default `agenteval.case.id`)
on its root span; a trial line with its `case_id`. Several traces of one case are its trials,
in the order they were read. When no trace names a case, by order: trace i answers case i, and
a file holding k passes over the cases (k × cases traces) gives k trials each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agenteval.case import EvalCase
from agenteval.errors import DatasetError
from agenteval.trace import ToolSpec, Trial

from .convert import CASE_ID_ATTRIBUTE
from .reading import RecordedTrial

__all__ = ["Matched", "match_trials"]


@dataclass
class Matched:
    """Recorded trials paired with their cases."""

    cases: list[EvalCase] = field(default_factory=list)
    """The cases some trial answers, in the order of the case file."""
    trials: dict[tuple[str, int], Trial] = field(default_factory=dict)
    """Each trial by (case id, trial index), stamped with both."""
    trials_per_case: int = 0
    """The most trials any case has."""
    unmatched: list[str] = field(default_factory=list)
    """Where each trial that answers no case was read."""
    missing: list[str] = field(default_factory=list)
    """The ids of cases no trial answers."""
    by_order: bool = False
    tools: dict[str, ToolSpec] = field(default_factory=dict)


def _sample(values: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def match_trials(
    recorded: Sequence[RecordedTrial],
    cases: Sequence[EvalCase],
    *,
    attribute: str = CASE_ID_ATTRIBUTE,
    source: str | None = None,
) -> Matched:
    """Pair each recorded trial with its case: by the case it names, else by order.

    Raises a located `DatasetError` when nothing can be paired.
    """
    if not recorded:
        raise DatasetError("no traces or trials found", file=source, hint="check the path")
    by_case: dict[str, list[RecordedTrial]] = {case.id: [] for case in cases}
    matched = Matched()
    named = [r for r in recorded if r.key is not None]
    if named:
        for item in recorded:
            if item.key is not None and item.key in by_case:
                by_case[item.key].append(item)
            else:
                matched.unmatched.append(item.source)
        if not any(by_case.values()):
            keys = sorted({r.key for r in named if r.key is not None})
            raise DatasetError(
                f"no trace names a case of the case file: they name {_sample(keys)}",
                file=source,
                field=attribute,
                hint="check --cases, or pass --match-attribute with the attribute that holds "
                "the case id",
            )
    else:
        count, total = len(recorded), len(cases)
        if count > total and count % total:
            raise DatasetError(
                f"{count} traces for {total} cases, and no trace names its case",
                file=source,
                field=attribute,
                hint=f"set the {attribute!r} attribute on each trace's root span to its case id "
                "(or pass --match-attribute NAME), or record one trace per case in case order",
            )
        matched.by_order = True
        for position, item in enumerate(recorded):
            by_case[cases[position % total].id].append(item)
    for case in cases:
        items = by_case[case.id]
        if not items:
            matched.missing.append(case.id)
            continue
        matched.cases.append(case)
        for index, item in enumerate(items):
            trial = item.trial.model_copy(update={"case_id": case.id, "trial": index})
            matched.trials[(case.id, index)] = trial
            for name, spec in item.tools.items():
                matched.tools.setdefault(name, spec)
        matched.trials_per_case = max(matched.trials_per_case, len(items))
    return matched
