"""Reading recorded trials from files: OTLP JSON traces, and agenteval's own trial JSONL.

`TRACES` is a file or a folder (every `.json`, `.jsonl`, `.ndjson`, and their `.gz`, inside
it, in name order). Each file's format is told from its content: OTLP JSON
(`{"resourceSpans": ...}`; see `otlp.py`) or trials, one `Trial` object a line (`case_id`,
`output`, `tool_calls`, `model_calls`, ...; a `.json` file may hold a list of them).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.errors import DatasetError
from agenteval.textfiles import decode_text, encoding_name
from agenteval.trace import ToolSpec, Trial
from agenteval.validation import first_problem

from .convert import CASE_ID_ATTRIBUTE, read_spans
from .otlp import SpanTrace, is_otlp, parse_json, too_deep, traces_from_exports
from .shape import TraceShape, trace_shape, trials_of_trace
from .spans import SpanRecord

__all__ = ["FORMAT_HINT", "RecordedTrial", "case_key", "read_recorded", "trace_files"]

_SUFFIXES = (".json", ".jsonl", ".ndjson")
FORMAT_HINT = (
    'a trace file holds OTLP JSON ({"resourceSpans": [...]}, as the OpenTelemetry '
    'Collector\'s file exporter writes it) or agenteval trials (one {"case_id": ..., '
    '"output": ..., "tool_calls": [...]} object a line)'
)
"""What a trace file holds: the hint of each error about a file that holds something else."""


@dataclass(frozen=True)
class RecordedTrial:
    """One trial read from a file: what it did, where it was read, and the case it names."""

    trial: Trial
    source: str
    key: str | None = None
    """The case id the trial carries (the match attribute), if any."""
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    order: int = 0
    shape: TraceShape | None = None
    """What the trace looks like (a lone model call, ...); None for a trial line."""


def trace_files(path: Path) -> list[Path]:
    """The trace files `path` names: itself, or the trace files inside a folder."""
    if path.is_dir():
        files = sorted(
            p
            for p in path.rglob("*")
            if p.is_file() and p.name.lower().removesuffix(".gz").endswith(_SUFFIXES)
        )
        if not files:
            raise DatasetError(
                "no trace files in the folder",
                file=path,
                hint="trace files end in .json, .jsonl or .ndjson (optionally .gz)",
            )
        return files
    if not path.exists():
        raise DatasetError(
            "file not found",
            file=path,
            hint=f"check the path; relative paths start at {Path.cwd()}",
        )
    return [path]


def _text(path: Path) -> str:
    file = str(path)
    try:
        data = path.read_bytes()
        if path.suffix.lower() == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise DatasetError(
            f"cannot read the file: {getattr(exc, 'strerror', None) or exc}",
            file=file,
            hint="check that the path names a readable trace file",
        ) from exc
    try:
        return decode_text(data)
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"not {encoding_name(data)} text",
            file=file,
            line=data.count(b"\n", 0, exc.start) + 1,
            hint=FORMAT_HINT,
        ) from exc


def _values(text: str, file: str) -> Iterator[tuple[Any, int | None]]:
    """The JSON values of a file: one document, or one a line."""
    if not text.strip():
        return
    try:
        value = json.loads(text)
    except RecursionError as exc:  # one document, or a line of many, nested past what it reads
        raise too_deep(text, file) from exc
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Extra data"):
            raise DatasetError(
                f"invalid JSON: {exc.msg} (column {exc.colno})",
                file=file,
                line=exc.lineno,
                hint=FORMAT_HINT,
            ) from exc
    else:
        lines = text.strip().split("\n")
        yield value, (text[: text.index(lines[0])].count("\n") + 1 if len(lines) == 1 else None)
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield parse_json(line, file, number), number


def _trial(data: Any, file: str, line: int | None) -> Trial:
    if isinstance(data, dict) and not is_otlp(data):
        try:
            return Trial.model_validate(data)
        except ValidationError as exc:
            message, where = first_problem(exc)
            raise DatasetError(
                f"not a valid trial: {message}",
                file=file,
                line=line,
                field=where or None,
                hint=FORMAT_HINT,
            ) from exc
    raise DatasetError(
        "expected a trial object here, as on the lines before",
        file=file,
        line=line,
        hint="keep one format per file",
    )


def _trial_key(trial: Trial, attribute: str) -> str | None:
    if trial.case_id:
        return trial.case_id
    value = trial.metadata.get(attribute)
    return str(value) if value is not None and value != "" else None


def case_key(spans: list[SpanRecord], attribute: str) -> str | None:
    """The case a trace names: `attribute` on its root span, else on its other spans (in the
    order they started), else on the resource."""
    ids = {span.span_id for span in spans}
    ordered = sorted(spans, key=lambda s: s.start_ns)
    roots = [s for s in ordered if s.parent_id is None or s.parent_id not in ids]
    root_ids = {s.span_id for s in roots}
    others = [s for s in ordered if s.span_id not in root_ids]
    for span in [*roots, *others]:
        value = span.attributes.get(attribute)
        if value is not None and value != "":
            return str(value)
    for span in roots:
        value = span.resource.get(attribute)
        if value is not None and value != "":
            return str(value)
    return None


def _from_trace(trace: SpanTrace, attribute: str) -> list[RecordedTrial]:
    """The trials of one trace: one, or one per span naming a case below a span of the app's
    own that holds several (`shape.trials_of_trace`)."""
    parts = trials_of_trace(trace.spans, attribute)
    recorded = []
    for spans in parts:
        reading = read_spans(spans)
        trial = reading.trial(metadata={"trace_id": trace.trace_id})
        # The trial's one root span (a trace's, or the span naming its case in a trace holding
        # several trials) is the trial's span: scores sent out are parented to it.
        ids = {span.span_id for span in spans}
        roots = [s.span_id for s in spans if s.parent_id is None or s.parent_id not in ids]
        trial.trace_id, trial.span_id = trace.trace_id, roots[0] if len(roots) == 1 else None
        where = f"trace {trace.trace_id}"
        if len(parts) > 1:
            where += f", span {spans[0].span_id}"
        recorded.append(
            RecordedTrial(
                trial=trial,
                source=f"{trace.source} ({where})",
                key=case_key(spans, attribute),
                tools=reading.tools,
                order=trace.order,
                shape=trace_shape(spans, trace.spans),
            )
        )
    return recorded


def read_recorded(path: str | Path, attribute: str = CASE_ID_ATTRIBUTE) -> list[RecordedTrial]:
    """Every recorded trial in `path` (a file or a folder), in the order the files hold them;
    each carries the case it names through `attribute` (or a trial's `case_id`), if any."""
    exports: list[tuple[Any, str, int | None, int]] = []
    recorded: list[RecordedTrial] = []
    order = 0
    for file_path in trace_files(Path(path)):
        file = str(file_path)
        kind: str | None = None
        for value, line in _values(_text(file_path), file):
            order += 1
            if kind is None:
                kind = "otlp" if is_otlp(value) else "trials"
                if kind == "trials" and not (
                    isinstance(value, dict) or (isinstance(value, list) and value)
                ):
                    raise DatasetError("not a trace file", file=file, line=line, hint=FORMAT_HINT)
            if kind == "otlp":
                if not is_otlp(value):
                    raise DatasetError(
                        "expected an OTLP export here, as on the lines before",
                        file=file,
                        line=line,
                        hint="keep one format per file",
                    )
                exports.append((value, file, line, order))
                continue
            items = value if isinstance(value, list) else [value]
            for number, item in enumerate(items, start=1):
                trial = _trial(item, file, line)
                where = (
                    f"{file}:{line}"
                    if len(items) == 1 and line is not None
                    else f"{file}, trial {number}"
                )
                recorded.append(
                    RecordedTrial(trial, where, _trial_key(trial, attribute), order=order)
                )
                order += 1
    for trace in traces_from_exports(exports):
        recorded += _from_trace(trace, attribute)
    return sorted(recorded, key=lambda r: r.order)
