"""Matching recorded trials to the cases they answer, never by a silent guess.

By attribute: a trace names its case with the match attribute (default `agenteval.case.id`)
on its root span; a trial line with its `case_id`. Several traces of one case are its trials,
in the order they were read. Traces naming no case of the file are left out, never paired by
order, and said so.

When no trace names a case, nothing says which trace answers which case, and under the
instrumentations most agents run (openai-v2, OpenInference, OpenLLMetry) with no span of the
app's own, each model call is a trace of its own, so trace i is not even a trial. That is an
error saying what was found and the fix, unless the caller opts into order matching
(`by_order=True`; `--match-by-order`): trace i answers case i, and a file holding k passes over
the cases (k × cases traces) gives k trials each; the run records that it was matched so.

Lone model-call traces that do name their case (a span processor copying the case id onto
every span, or the id in the process's resource) would make each model call a trial of its own:
when one of a case's lone calls goes on from tool results another asked for, that is proof of a
split trial and an error; several lone calls of one case with no such proof (a one-call agent's
trials look the same) are a warning. So are traces of several processes that each answered every
case: perhaps separate recordings in one appended file, not trials of one agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval.case import EvalCase
from agenteval.errors import DatasetError
from agenteval.trace import ToolSpec, Trial

from .convert import CASE_ID_ATTRIBUTE
from .reading import FORMAT_HINT, RecordedTrial

__all__ = ["Matched", "match_trials", "wrap_hint"]

_LONE = "a lone model call (one model-call span, no span of the app's own around it)"


@dataclass
class Matched:
    """Recorded trials paired with their cases, and what matching has to say about them."""

    cases: list[EvalCase] = field(default_factory=list)
    """The cases some trial answers, in the order of the case file."""
    trials: dict[tuple[str, int], Trial] = field(default_factory=dict)
    """Each trial by (case id, trial index), stamped with both."""
    trials_per_case: int = 0
    """The most trials any case has."""
    unmatched: list[str] = field(default_factory=list)
    """Where each trial that answers no case was read (left out)."""
    missing: list[str] = field(default_factory=list)
    """The ids of cases no trial answers."""
    by_order: bool = False
    """Whether trials were matched to cases by order (only ever when the caller opted in)."""
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    """The tools offered in the matched traces, by name: the run's tools."""
    attribute: str = CASE_ID_ATTRIBUTE
    """The attribute (or a trial line's `case_id`) that names a trace's case."""
    recorded: int = 0
    """How many traces or trials were read."""
    lone_model_calls: int = 0
    """How many of them are a lone model call each (see `shape.TraceShape`)."""
    notes: list[str] = field(default_factory=list)
    """What matching warns about (left-out traces, order matching, lone model calls), for
    every face to pass on as it passes on its warnings."""

    def settings(self) -> dict[str, Any]:
        """How the trials were matched, as the run stores it (`RunInfo.settings["matching"]`),
        so a report can say a run was matched by order and how much was left out."""
        return {
            "by": "order" if self.by_order else "attribute",
            "attribute": self.attribute,
            "recorded": self.recorded,
            "left_out": len(self.unmatched),
            "cases_without_trials": len(self.missing),
            "lone_model_calls": self.lone_model_calls,
        }


def _sample(values: Sequence[str], limit: int = 3, *, quote: bool = True) -> str:
    shown = ", ".join(repr(v) if quote else v for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _lone(items: Sequence[RecordedTrial]) -> list[RecordedTrial]:
    return [r for r in items if r.shape is not None and r.shape.lone_model_call]


_ROOTLESS = (
    "the parent of their top span is in no file read: it was never exported (the app ended "
    "before it did), or another process exported it elsewhere; it may be the span naming the "
    "case"
)


def _rootless(items: Sequence[RecordedTrial]) -> int:
    return sum(r.shape is not None and r.shape.rootless for r in items)


def _noun(items: Sequence[RecordedTrial]) -> str:
    """What the file holds: traces (OTLP) or agenteval's trial lines."""
    return "trials" if all(r.shape is None for r in items) else "traces"


def _cases(count: int) -> str:
    return "one case" if count == 1 else f"{count} cases"


def _each(count: int) -> str:
    """`1 of them is`, `3 of them are each`."""
    return f"{count} of them {'is' if count == 1 else 'are each'}"


def _none_names(count: int, noun: str) -> str:
    return (
        f"the one {noun[:-1]} names no case"
        if count == 1
        else f"none of the {count} {noun} names its case"
    )


def _some(count: int, total: int, noun: str, one: str, many: str) -> str:
    """`2 of the 5 traces name`, `1 of the 5 traces names`, `all 5 traces name`."""
    if count == total > 1:
        return f"all {total} {noun} {many}"
    return f"{count} of the {total} {noun} {one if count == 1 else many}"


def wrap_hint(attribute: str) -> str:
    """How to make each trial one trace that names its case, in Python and in words."""
    return (
        "wrap each trial in one span of the app's own that names its case, so its model and "
        "tool calls make one trace; in Python:\n"
        '        tracer = opentelemetry.trace.get_tracer("my-agent")\n'
        f'        with tracer.start_as_current_span("my-agent", attributes={{"{attribute}": '
        "case_id}):\n"
        "            answer = my_agent(question)\n"
        "    (in JavaScript or another SDK: start an active span around each trial with the "
        f"attribute {attribute} set to the case id, and run the agent inside it)"
    )


def _unnamed_error(
    recorded: Sequence[RecordedTrial], cases: Sequence[EvalCase], attribute: str, source: str | None
) -> DatasetError:
    count, lone = len(recorded), len(_lone(recorded))
    if _noun(recorded) == "trials":
        return DatasetError(
            f"{_none_names(count, 'trials')} (no case_id); pairing them with the "
            f"{_cases(len(cases))} by order would be a guess",
            file=source,
            field="case_id",
            hint="give each trial line its case_id; or pass --match-by-order "
            "(match_by_order=True in Python) if the file holds one trial per case, in case "
            "order",
        )
    message = f"{_none_names(count, 'traces')} (no span carries {attribute!r})"
    if lone == count:
        message += (
            f", and {'it' if count == 1 else 'each'} is {_LONE}: unless the agent makes one "
            "model call per trial, each trial's model calls are split over several traces"
        )
    elif lone:
        message += (
            f", and {_some(lone, count, 'traces', 'is', 'are each')} {_LONE}: a trial's model calls "
            "may be split over several traces"
        )
    rootless = _rootless(recorded)
    if rootless:
        message += (
            f"; {_some(rootless, count, 'traces', 'lacks', 'lack')} their root span ({_ROOTLESS})"
        )
    return DatasetError(
        message + f"; pairing them with the {_cases(len(cases))} by order would be a guess",
        file=source,
        field=attribute,
        hint=wrap_hint(attribute) + "; or pass --match-attribute NAME if the traces carry the "
        "case id under another attribute; or pass --match-by-order (match_by_order=True in "
        "Python) if the file holds one trace per trial, in case order",
    )


def _match_by_order(
    recorded: Sequence[RecordedTrial],
    cases: Sequence[EvalCase],
    by_case: dict[str, list[RecordedTrial]],
    matched: Matched,
    source: str | None,
) -> None:
    count, total, noun = len(recorded), len(cases), _noun(recorded)
    if count > total and count % total:
        raise DatasetError(
            f"{count} {noun} for {total} cases, and no {noun[:-1]} names its case",
            file=source,
            field=matched.attribute,
            hint=f"matching by order needs one {noun[:-1]} per trial of every case, in case "
            f"order (a multiple of {total}); else name each {noun[:-1]}'s case: "
            + wrap_hint(matched.attribute),
        )
    going_on = _going_on(recorded)
    if going_on:
        raise DatasetError(
            f"--match-by-order pairs one {noun[:-1]} with each trial, but {going_on} of these "
            f"{count} {noun} are each {_LONE} going on from tool results an earlier call asked "
            "for: a trial's model calls are split over several traces",
            file=source,
            field=matched.attribute,
            hint=wrap_hint(matched.attribute),
        )
    matched.by_order = True
    for position, item in enumerate(recorded):
        by_case[cases[position % total].id].append(item)
    note = (
        f"no {noun[:-1]} names its case: the {count} {noun} are matched to the {total} cases "
        f"by order, as asked (--match-by-order)"
    )
    if matched.lone_model_calls:
        note += f"; {_each(matched.lone_model_calls)} {_LONE}, scored as a whole trial"
    matched.notes.append(note)


def _left_out_notes(
    recorded: Sequence[RecordedTrial], by_case: dict[str, list[RecordedTrial]], matched: Matched
) -> None:
    noun = _noun(recorded)
    unnamed = [r for r in recorded if r.key is None]
    unknown = [r for r in recorded if r.key is not None and r.key not in by_case]
    if unnamed:
        where = f"no span carries {matched.attribute!r}" if noun == "traces" else "no case_id"
        note = (
            f"{_some(len(unnamed), len(recorded), noun, 'names', 'name')} no case ({where}), left "
            f"out: {_sample([r.source for r in unnamed], quote=False)}"
        )
        lone = len(_lone(unnamed))
        if lone:
            note += (
                f"; {_each(lone)} {_LONE}, perhaps a part of a trial the span "
                f"naming its case did not wrap: " + wrap_hint(matched.attribute)
            )
        rootless = _rootless(unnamed)
        if rootless:
            note += f"; {rootless} of them lack their root span ({_ROOTLESS})"
        matched.notes.append(note)
    if unknown:
        keys = sorted({r.key for r in unknown if r.key is not None})
        matched.notes.append(
            f"{_some(len(unknown), len(recorded), noun, 'names', 'name')} a case the case file does "
            f"not have ({_sample(keys)}), left out: "
            f"{_sample([r.source for r in unknown], quote=False)}"
        )


def _going_on(items: Sequence[RecordedTrial]) -> int:
    """How many of the lone model calls among `items` go on from tool results an earlier call
    asked for, when some do and some do not: the proof that a trial's calls are split over
    these traces (0 without it: none do, or all do, as a one-call agent's given a conversation
    with tool results would)."""
    lone = [r.shape for r in _lone(items) if r.shape is not None]
    going_on = sum(shape.continues for shape in lone)
    return going_on if 0 < going_on < len(lone) else 0


_STAMPED = (
    "; a span processor that copies {attribute} onto every span (or the id in the process's "
    "resource) makes each model call look like a trial: set it on that one span instead"
)


def _check_split(
    by_case: dict[str, list[RecordedTrial]], matched: Matched, source: str | None
) -> None:
    """Several lone model-call traces of one case: an error when one goes on from tool results
    and another does not (one trial's calls, split), else a warning (a one-call agent's trials
    look the same)."""
    split = {case_id: n for case_id, items in by_case.items() if (n := _going_on(items))}
    if split:
        first, going_on = next(iter(split.items()))
        others = f" (cases {_sample(list(split)[1:])} too)" if len(split) > 1 else ""
        raise DatasetError(
            f"{len(_lone(by_case[first]))} traces naming this case are each {_LONE}, and "
            f"{going_on} of them {'goes' if going_on == 1 else 'go'} on from tool results an "
            "earlier call asked for: one trial's model calls are split over several traces, "
            f"and scoring each as a trial would be wrong{others}",
            file=source,
            case=first,
            field=matched.attribute,
            hint=wrap_hint(matched.attribute) + _STAMPED.format(attribute=matched.attribute),
        )
    suspect = {case_id: lone for case_id, items in by_case.items() if len(lone := _lone(items)) > 1}
    if not suspect:
        return
    shown = _sample(
        [f"{case_id!r} ({len(lone)})" for case_id, lone in suspect.items()], quote=False
    )
    asking = sum(
        r.shape is not None and r.shape.asks_for_tools for lone in suspect.values() for r in lone
    )
    note = (
        f"{len(suspect)} cases have several traces that are each {_LONE}: {shown}; each is "
        "scored as a trial of one model call"
    )
    if asking:
        note += (
            f", though {asking} of them {'ends' if asking == 1 else 'end'} asking for tool calls, as a call does when its "
            "trial goes on in another trace"
        )
    matched.notes.append(
        note
        + ". If a trial makes several model calls, they are split over traces: "
        + wrap_hint(matched.attribute)
        + _STAMPED.format(attribute=matched.attribute)
    )


def _check_recordings(by_case: dict[str, list[RecordedTrial]], matched: Matched) -> None:
    """Trials of every case from each of several processes: perhaps separate recordings (before
    and after a change, in a trace file the Collector appends to) scored as one run."""
    answered = [items for items in by_case.values() if items]
    processes = [
        {r.shape.process for r in items if r.shape is not None and r.shape.process}
        for items in answered
    ]
    everywhere = set.intersection(*processes) if processes else set()
    if len(everywhere) < 2:
        return
    matched.notes.append(
        f"the traces come from {len(everywhere)} processes (service.instance.id) that each "
        f"answered every case, scored as one run with each answer a trial of its case; if they "
        "are separate recordings (before and after a change, say: a trace file the "
        "Collector appends to keeps both), score their traces apart"
    )


def match_trials(
    recorded: Sequence[RecordedTrial],
    cases: Sequence[EvalCase],
    *,
    attribute: str = CASE_ID_ATTRIBUTE,
    source: str | None = None,
    by_order: bool = False,
) -> Matched:
    """Pair each recorded trial with its case: by the case it names; by order only when no
    trace names one and `by_order` is True.

    Raises a located `DatasetError` when nothing can be paired, when no trace names its case
    and `by_order` is False (saying what was found and the fix), and when one trial's model
    calls are provably split over several traces naming its case. What matching warns about
    is in `Matched.notes`.
    """
    if not recorded:
        # The path was found and read (`trace_files` says when it is not): its content is
        # what to look at.
        raise DatasetError(
            "no traces or trials found",
            file=source,
            hint=f"it holds no span and no trial; {FORMAT_HINT}",
        )
    by_case: dict[str, list[RecordedTrial]] = {case.id: [] for case in cases}
    matched = Matched(
        attribute=attribute, recorded=len(recorded), lone_model_calls=len(_lone(recorded))
    )
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
        _left_out_notes(recorded, by_case, matched)
        _check_split(by_case, matched, source)
        _check_recordings(by_case, matched)
    elif by_order:
        _match_by_order(recorded, cases, by_case, matched, source)
    else:
        raise _unnamed_error(recorded, cases, attribute, source)
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
    if matched.missing:
        matched.notes.append(
            f"{len(matched.missing)} cases have no trace and were left out: "
            f"{_sample(matched.missing, quote=False)}"
        )
    return matched
