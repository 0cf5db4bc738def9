"""A run as JUnit XML (`--junit FILE`), for CI systems that show test results.

One `<testcase>` per eval case, its trials inside, judged by the scorers that decide whether
a trial passes (the run's `passing`, `--passing`; default: every scorer), as the summary judges
it; what the other scorers said is in `<system-out>` only:
- `<failure>` when a scorer failed on at least one trial; its message names the failing scorers
  only (with how many trials each failed), and its text gives each failing trial's reason. A
  scorer that passed, or did not apply, is never reported as failed.
- `<error>`, apart from failures, when a trial did not complete (its failure cause: a timeout, a
  rate limit, the agent's own exception, ...) or a scorer crashed. A case can have both.
- `<skipped>` when nothing went wrong and either no scorer applied to any trial, or a scorer
  that applies could not score a trial because its trace does not record what the scorer reads
  (`scorers.recorded`: an OpenTelemetry instrumentation without content capture): nothing
  checked that, so the case is no pass; the message names the scorers and the fix.
- `<system-out>`: each trial's answer and scores.

A run with trials missing (no stored result) gets one more `<testcase>`, `run completeness`,
with an `<error type="missing_trials">` naming them: a CI reading the file never takes the
stored cases alone for the whole run.

The file follows the JUnit XML format as Jenkins reads it (`testsuites` > `testsuite` >
`testcase`); text that XML 1.0 cannot hold (control characters) is written as `\\xNN` escapes.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from xml.sax.saxutils import quoteattr

from agenteval.records import MissingTrials, RunInfo, TrialResult
from agenteval.redaction import Redactor
from agenteval.score import Score
from agenteval.scorers.recorded import is_not_recorded

__all__ = ["JUnitTotals", "write_junit"]

_MESSAGE_CHARS = 500
_OUTPUT_CHARS = 4000
# Everything XML 1.0 does not allow (C0 controls but tab/newline/return, lone surrogates,
# U+FFFE/U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class JUnitTotals:
    """What the file counts: eval cases, and those that failed, errored or were skipped."""

    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    time_s: float = 0.0


def _clean(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _short(text: str, limit: int) -> str:
    text = _clean(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _testcase(
    case_id: str,
    classname: str,
    results: list[TrialResult],
    passing: Collection[str] | None = None,
) -> tuple[ET.Element, str]:
    """The case's `<testcase>` and its outcome: 'failure', 'error', 'both', 'skipped' or 'ok'.
    Only the scorers in `passing` (None: every scorer) decide it, as they decide whether a
    trial passes (`statistics.trial_passed`); the others' verdicts go to `<system-out>`."""
    trials = len(results)
    time_s = sum(r.trial.latency_s or 0.0 for r in results)
    element = ET.Element(
        "testcase", {"name": _clean(case_id), "classname": classname, "time": f"{time_s:.3f}"}
    )
    failing: dict[str, int] = {}
    failure_lines: list[str] = []
    error_lines: list[str] = []
    error_types: list[str] = []
    applied = False
    unscored: dict[str, int] = {}
    unscored_why: dict[str, str] = {}
    unscored_lines: list[str] = []
    out_lines: list[str] = []
    for result in results:
        trial = result.trial
        if trial.failure is not None:
            cause = trial.failure.cause.value
            error_types.append(cause)
            message = trial.failure.message or trial.failure.error_type or ""
            error_lines.append(
                f"trial {trial.trial}: {cause}" + (f": {message}" if message else "")
            )
        verdicts: list[str] = []
        for name, score in result.scores.items():
            if passing is not None and name not in passing:
                verdicts.append(_said(name, score))
                continue
            if score.error is not None:
                error_types.append("scorer_error")
                error_lines.append(f"trial {trial.trial}: scorer {name} errored: {score.error}")
                verdicts.append(f"{name} error")
            elif score.value is None:
                if is_not_recorded(score):
                    unscored[name] = unscored.get(name, 0) + 1
                    why = (score.reason or "").removeprefix("not scored: ")
                    unscored_why.setdefault(name, why)
                    unscored_lines.append(f"trial {trial.trial} · {name}: {why}")
                    verdicts.append(f"{name} not scored")
                continue
            else:
                applied = True
                if score.passed:
                    verdicts.append(f"{name} passed")
                else:
                    failing[name] = failing.get(name, 0) + 1
                    failure_lines.append(
                        f"trial {trial.trial} · {name} ({score.value:.2f}): {score.reason or 'failed'}"
                    )
                    verdicts.append(f"{name} FAILED ({score.value:.2f})")
        answer = "(no answer)" if trial.output is None else _short(trial.output, _OUTPUT_CHARS)
        out_lines.append(f"trial {trial.trial}: {answer}")
        if verdicts:
            out_lines.append("  " + ", ".join(verdicts))
    if failing:
        message = "; ".join(
            f"{name} failed in {count} of {_plural(trials, 'trial')}"
            for name, count in failing.items()
        )
        failure = ET.SubElement(
            element,
            "failure",
            {"message": _short(message, _MESSAGE_CHARS), "type": " ".join(failing)},
        )
        failure.text = _clean("\n".join(failure_lines))
    if error_lines:
        error = ET.SubElement(
            element,
            "error",
            {
                "message": _short(error_lines[0], _MESSAGE_CHARS)
                + (f" (and {len(error_lines) - 1} more)" if len(error_lines) > 1 else ""),
                "type": error_types[0],
            },
        )
        error.text = _clean("\n".join(error_lines))
    skipped = (not applied or bool(unscored)) and not failing and not error_lines
    if skipped and unscored:
        message = "not judged: " + "; ".join(
            f"{name} not scored in {count} of {_plural(trials, 'trial')}: {unscored_why[name]}"
            for name, count in unscored.items()
        )
        skip = ET.SubElement(element, "skipped", {"message": _short(message, _MESSAGE_CHARS)})
        skip.text = _clean("\n".join(unscored_lines))
    elif skipped:
        deciding = "" if passing is None else f" of those deciding ({', '.join(sorted(passing))})"
        ET.SubElement(element, "skipped", {"message": f"no scorer{deciding} applied to any trial"})
    system_out = ET.SubElement(element, "system-out")
    system_out.text = _clean("\n".join(out_lines))
    outcome = (
        "both"
        if failing and error_lines
        else "failure"
        if failing
        else "error"
        if error_lines
        else "skipped"
        if skipped
        else "ok"
    )
    return element, outcome


def _said(name: str, score: Score) -> str:
    """What a scorer that does not decide the case said of a trial, for `<system-out>`."""
    if score.error is not None:
        return f"{name} error (not counted)"
    if score.value is None:
        return f"{name} did not apply (not counted)"
    verdict = "passed" if score.passed else f"FAILED ({score.value:.2f})"
    return f"{name} {verdict} (not counted)"


def _attributes(pairs: list[tuple[str, str]]) -> str:
    return " ".join(f"{name}={quoteattr(_clean(value))}" for name, value in pairs)


def _completeness_case(classname: str, missing: MissingTrials) -> ET.Element:
    """The `run completeness` test case of a run with trials missing: an error naming them."""
    element = ET.Element("testcase", {"classname": classname, "name": "run completeness"})
    error = ET.SubElement(
        element,
        "error",
        {"message": _short(missing.describe(), _MESSAGE_CHARS), "type": "missing_trials"},
    )
    error.text = _clean(
        f"{missing.describe()}\nthe run {missing.run_id} is incomplete: the other test cases "
        "cover only its stored trials"
    )
    return element


def write_junit(
    path: Path,
    info: RunInfo,
    results: Iterable[TrialResult],
    missing: MissingTrials | None = None,
    passing: Collection[str] | None = None,
) -> JUnitTotals:
    """Write the run to `path` as JUnit XML; `results` in case order (as the store yields
    them), streamed: only one case's trials are held at a time. `missing`
    (`RunStore.missing_trials`), when some are, adds the `run completeness` error. `passing`
    names the scorers that decide each case (default: the run's own `passing`, else every
    scorer), as they decide the summary's "Trials passing"."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if passing is None:
        stored = info.settings.get("passing")
        passing = list(stored) if stored else None
    deciding = None if passing is None else frozenset(passing)
    # The run's settings may be the ones in memory (the results come from the store).
    info = Redactor.from_environment().redact_model(info)
    stem = Path(info.dataset).stem if info.dataset else ""
    classname = f"agenteval.{stem}" if stem else "agenteval"
    counts = {"failure": 0, "error": 0, "skipped": 0}
    tests = 0
    time_s = 0.0
    # The suite's totals come first in the file but are known only at the end: the test cases
    # go to a scratch file beside the target, which is then copied in after the header.
    with tempfile.TemporaryFile("w+", encoding="utf-8", dir=path.parent) as body:
        for case_id, group in itertools.groupby(results, key=lambda r: r.case.id):
            trials = list(group)
            element, outcome = _testcase(case_id, classname, trials, deciding)
            tests += 1
            time_s += sum(r.trial.latency_s or 0.0 for r in trials)
            if outcome in ("failure", "both"):
                counts["failure"] += 1
            if outcome in ("error", "both"):
                counts["error"] += 1
            if outcome == "skipped":
                counts["skipped"] += 1
            ET.indent(element, space="  ", level=2)
            body.write("    " + ET.tostring(element, encoding="unicode") + "\n")
        if missing is not None and missing.count:
            element = _completeness_case(classname, missing)
            tests += 1
            counts["error"] += 1
            ET.indent(element, space="  ", level=2)
            body.write("    " + ET.tostring(element, encoding="unicode") + "\n")
        body.seek(0)
        totals = JUnitTotals(
            tests=tests,
            failures=counts["failure"],
            errors=counts["error"],
            skipped=counts["skipped"],
            time_s=time_s,
        )
        created = info.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
        totals_attrs = [
            ("tests", str(totals.tests)),
            ("failures", str(totals.failures)),
            ("errors", str(totals.errors)),
            ("time", f"{totals.time_s:.3f}"),
        ]
        properties = [
            ("run_id", info.run_id),
            ("trials_per_case", str(info.trials)),
            *(
                (key, value)
                for key, value in (
                    ("target", info.target),
                    ("agent", info.agent),
                    ("dataset", info.dataset),
                )
                if value
            ),
        ]
        scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with scratch.open("w", encoding="utf-8") as out:
                out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
                out.write(f"<testsuites {_attributes([('name', 'agenteval'), *totals_attrs])}>\n")
                suite_attrs = [
                    ("name", f"agenteval run {info.run_id}"),
                    *totals_attrs[:3],
                    ("skipped", str(totals.skipped)),
                    totals_attrs[3],
                    ("timestamp", created),
                ]
                out.write(f"  <testsuite {_attributes(suite_attrs)}>\n")
                out.write("    <properties>\n")
                for name, value in properties:
                    out.write(
                        f"      <property {_attributes([('name', name), ('value', value)])}/>\n"
                    )
                out.write("    </properties>\n")
                while chunk := body.read(1 << 16):
                    out.write(chunk)
                out.write("  </testsuite>\n</testsuites>\n")
            scratch.replace(path)
        finally:
            scratch.unlink(missing_ok=True)
    return totals
