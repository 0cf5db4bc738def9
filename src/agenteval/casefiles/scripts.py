"""A case file's scripted users (`user_simulation: {script: users.py:refund_user}`): the
reference checked and made independent of the working directory when the file is read, and
each script loaded once before a run starts.

A reference in a case file is relative to the case file's folder, as a reader of the file
expects (`users.py` beside `cases.yaml`), not to wherever the command happens to run. So reading
the file turns a relative `path/to/users.py:fn` into an absolute one, and a `users:fn` whose
module is a file beside the case file (`users.py`, or `pkg/users.py` for `pkg.users`) into that
file's absolute path; any other `module:fn` (an installed module) is kept as written. The case's
id is derived from the reference as written, before it was resolved, so it does not change with
the folder the project lives in. A stored run keeps the resolved reference: a resume loads the
same scripts from any working directory.

`script_check.py` loads each script before a run starts.
"""

from __future__ import annotations

from pathlib import Path

from agenteval.case import EvalCase
from agenteval.casefiles.fields import SCRIPT_PATH, written_as
from agenteval.casefiles.records import Record
from agenteval.errors import DatasetError

__all__ = ["resolve_script"]

_FORMAT_HINT = (
    "write the function that plays the user as module:function (users:refund_user) or "
    "path/to/file.py:function (users.py:refund_user, relative to the case file's folder)"
)


def resolve_script(case: EvalCase, record: Record, file: str) -> EvalCase:
    """`case` with its scripted user's reference checked (`module:function`) and resolved
    against the case file's folder (see the module); the case itself when it has no script."""
    simulation = case.user_simulation
    if simulation is None or simulation.script is None:
        return case
    reference = simulation.script
    module_part, colon, function = reference.strip().rpartition(":")
    if not colon or not module_part.strip() or not function.strip() or "/" in function:
        raise DatasetError(
            f"the scripted user {reference!r} is not a reference to a function",
            file=file,
            line=record.where.line(SCRIPT_PATH),
            case=record.label,
            field=written_as(SCRIPT_PATH, record.fmt),
            hint=_format_hint(reference),
        )
    resolved = _resolved(module_part.strip(), Path(file).resolve().parent)
    if resolved is None:
        return case
    script = f"{resolved}:{function.strip()}"
    return case.model_copy(
        update={"user_simulation": simulation.model_copy(update={"script": script})}
    )


def _format_hint(reference: str) -> str:
    text = reference.strip()
    if text.endswith(".py"):
        return f"write {text}:FUNCTION, naming the function in {text} that plays the user"
    module, dot, function = text.rpartition(".")
    if dot and module and function and "/" not in text:
        return f"did you mean {module}:{function}? ({_FORMAT_HINT})"
    return _FORMAT_HINT


def _resolved(module_part: str, folder: Path) -> str | None:
    """The absolute file a reference's module part names, relative to `folder`; None for an
    importable module that is no file there (kept as written)."""
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        path = Path(module_part)
        return str(path if path.is_absolute() else folder / path)
    beside = folder.joinpath(*module_part.split(".")).with_suffix(".py")
    return str(beside) if beside.is_file() else None
