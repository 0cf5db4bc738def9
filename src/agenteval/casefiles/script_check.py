"""A run's scripted users loaded before its first trial (`checked_scripts`): a script that
does not load (a missing file, a typo in the function's name, an import error in it) is one
`DatasetError` naming the case file, the line, the case and the fix, not a failure mid-run.
Each reference is loaded once; the run's `UserPlan` then finds the module already imported."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agenteval.case import EvalCase
from agenteval.casefiles.fields import SCRIPT_PATH, written_as
from agenteval.casefiles.locate import find_record
from agenteval.errors import AgentEvalError, DatasetError
from agenteval.loading import load_object

__all__ = ["check_scripts", "checked_scripts"]


def check_scripts(
    cases: Iterable[EvalCase], source: Any = None, base_dir: Path | None = None
) -> None:
    """Load the script of every case that has one, each reference once; raises `DatasetError`
    naming the case file (`source`, when a path), the line, the case and the fix for the first
    that does not load or is not a function."""
    loaded: set[str] = set()
    for case in cases:
        _check(case, source, base_dir, loaded)


def checked_scripts(
    cases: Iterable[EvalCase], source: Any = None, base_dir: Path | None = None
) -> Iterable[EvalCase]:
    """`cases` with their scripts checked: a list now, a stream as it is read (before the
    first trial: a run reads its stream into the store before it starts)."""
    if isinstance(cases, Sequence):
        check_scripts(cases, source, base_dir)
        return cases
    return _checking(cases, source, base_dir)


def _checking(cases: Iterable[EvalCase], source: Any, base_dir: Path | None) -> Iterator[EvalCase]:
    loaded: set[str] = set()
    for case in cases:
        _check(case, source, base_dir, loaded)
        yield case


def _check(case: EvalCase, source: Any, base_dir: Path | None, loaded: set[str]) -> None:
    simulation = case.user_simulation
    if simulation is None or simulation.script is None or simulation.script in loaded:
        return
    reference = simulation.script
    try:
        function = load_object(reference, base_dir=base_dir)
    except AgentEvalError as exc:
        raise _not_loaded(case, source, f"cannot be loaded: {exc.message}", exc.hint) from None
    except Exception as exc:  # whatever importing the user's module raised
        raise _not_loaded(
            case, source, f"cannot be loaded: {type(exc).__name__}: {exc}", None
        ) from None
    if not callable(function):
        raise _not_loaded(
            case,
            source,
            f"is not a function (it is {type(function).__name__})",
            "name a function of the conversation so far that returns the next message, "
            "or None to stop",
        )
    loaded.add(reference)


def _not_loaded(case: EvalCase, source: Any, what: str, hint: str | None) -> DatasetError:
    file = str(source) if isinstance(source, str | Path) else None
    record = find_record(file, case.id) if file is not None else None
    reference = str(case.user_simulation.script if case.user_simulation else None)
    hint = hint or "fix the script's file, or the reference to it"
    written = _written_reference(record.data if record is not None else None)
    if written is not None and written != reference:
        # Said as the file says it: the file it resolved to is where it was looked for.
        resolved, mine = reference.rpartition(":")[0], written.rpartition(":")[0]
        what, hint = what.replace(resolved, mine), hint.replace(resolved, mine)
        if resolved.endswith(mine):  # a path: what the hint names beside it, as relative
            hint = hint.replace(resolved[: -len(mine)], "")
        what += f" (looked for in {resolved})"
        reference = written
    return DatasetError(
        f"the scripted user {reference} {what}",
        file=file,
        line=record.where.line(SCRIPT_PATH) if record is not None else None,
        case=case.id,
        field=written_as(SCRIPT_PATH, record.fmt if record is not None else ""),
        hint=hint,
    )


def _written_reference(data: Any) -> str | None:
    block = data.get("user_simulation") if isinstance(data, dict) else None
    script = block.get("script") if isinstance(block, dict) else None
    return script.strip() if isinstance(script, str) else None
