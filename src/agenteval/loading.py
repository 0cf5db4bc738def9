"""Loading a Python object from a reference: `module:attribute` or `path/to/file.py:attribute`."""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import sys
import sysconfig
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.errors import AgentEvalError, AgentLoadError

__all__ = [
    "FRAMEWORK_EXTRAS",
    "framework_hint",
    "import_file",
    "import_named_module",
    "load_object",
]


def import_file(path: Path, kind: type[AgentEvalError], ref: str) -> ModuleType:
    resolved = path.resolve()
    # A module loaded twice (once per run in one process) would register its tools twice; reuse it.
    # The name is the same in every process (not `hash()`, which Python salts per process):
    # stored runs name a scorer by it, and a rescore in another process must find it again.
    digest = hashlib.blake2b(str(resolved).encode("utf-8", "surrogatepass"), digest_size=8)
    module_name = f"agenteval_user_{digest.hexdigest()}_{resolved.stem}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise kind(f"cannot import {path} as Python", hint="the file must be a .py module")
    module = importlib.util.module_from_spec(spec)
    # The file's own folder goes on the path, so `import tools` beside an agent works.
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise _import_failed(exc, str(path), kind) from exc
    return module


FRAMEWORK_EXTRAS: dict[str, str] = {
    "google.adk": "agenteval[adk]",
    "agents": "agenteval[openai-agents]",
    "langgraph": "agenteval[langgraph]",
    "langchain_core": "agenteval[langgraph]",
    "langchain": "agenteval[langgraph]",
    "pydantic_ai": "agenteval[pydantic-ai]",
}
"""The agent frameworks agenteval runs agents of, by their top-level module, and the agenteval
extra that installs each (`agents` is the OpenAI Agents SDK's module)."""

_FRAMEWORK_NAMES = {
    "agenteval[adk]": "Google ADK",
    "agenteval[openai-agents]": "the OpenAI Agents SDK",
    "agenteval[langgraph]": "LangGraph",
    "agenteval[pydantic-ai]": "pydantic-ai",
}


def framework_hint(missing: str | None) -> str | None:
    """How to install the agent framework whose module `missing` is (a `ModuleNotFoundError`'s
    `name`, which may be a submodule), or None when it is no framework's."""
    for module, extra in FRAMEWORK_EXTRAS.items():
        if missing is not None and (missing == module or missing.startswith(module + ".")):
            return f"install {_FRAMEWORK_NAMES[extra]}: pip install '{extra}'"
    return None


def _import_failed(exc: Exception, shown: str, kind: type[AgentEvalError]) -> AgentEvalError:
    """The error for a module that raised while being imported: the user's file and line the
    failure came from (the deepest frame in a file of theirs, not in a library), and the fix."""
    file, line = _failing_line(exc)
    what = f"{type(exc).__name__}: {exc}"
    if file is None:
        return kind(f"importing {shown} failed: {what}", hint=f"fix the error in {shown}")
    framework = framework_hint(exc.name) if isinstance(exc, ModuleNotFoundError) else None
    if framework is not None:
        hint = framework
    elif isinstance(exc, ModuleNotFoundError) and exc.name:
        hint = f"install {exc.name!r}, or remove the import on line {line} of {file}"
    else:
        hint = f"fix line {line} of {file} (`python {file}` shows the traceback)"
    return kind(f"importing {shown} failed: {what}", file=file, line=line, hint=hint)


def _failing_line(exc: BaseException) -> tuple[str | None, int | None]:
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return _shown_path(exc.filename), exc.lineno
    found: tuple[str | None, int | None] = (None, None)
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        if path.is_file() and _is_users(path):
            found = (_shown_path(frame.filename), frame.lineno)
    return found


def _is_users(path: Path) -> bool:
    """A file of the user's project: not Python's own, nor an installed package's, nor ours."""
    resolved = str(path.resolve())
    return not (
        "site-packages" in resolved
        or "dist-packages" in resolved
        or resolved.startswith(_NOT_USERS)
    )


_NOT_USERS = (
    str(Path(sysconfig.get_paths()["stdlib"]).resolve()),
    str(Path(__file__).resolve().parents[1]),
)


def _shown_path(filename: str) -> str:
    """A path as a message shows it: relative to the current directory when inside it."""
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return filename


def import_named_module(
    name: str, kind: type[AgentEvalError], ref: str, base_dir: Path | None
) -> ModuleType:
    # The seed's `--scorer my_scorers:concise` expects the current directory to be importable,
    # and a config's `agent: my_agent:run` the config's own folder.
    for folder in (Path.cwd(), base_dir):
        if folder is not None and str(folder.resolve()) not in sys.path:
            sys.path.insert(0, str(folder.resolve()))
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise kind(
                f"no module named {name!r} (in {ref!r})",
                hint="use module:function for an importable module, or path/to/file.py:function",
            ) from exc
        raise _import_failed(exc, repr(name), kind) from exc
    except Exception as exc:
        raise _import_failed(exc, repr(name), kind) from exc


def load_object(
    ref: str, *, base_dir: Path | None = None, kind: type[AgentEvalError] = AgentLoadError
) -> Any:
    """Load the object a reference names.

    `ref` is `module:attribute` (an importable module, the current directory included) or
    `path/to/file.py:attribute` (relative to `base_dir`, else the current directory). A missing
    module, file or attribute raises `kind` with a hint: the reference the user most likely
    meant, when one loads.
    """
    module_part, sep, attr = ref.rpartition(":")
    if not sep or not module_part or not attr:
        meant = _with_attribute(ref, base_dir)
        raise kind(
            f"{ref!r} is not a reference to a function",
            hint=f"did you mean {meant}?"
            if meant
            else "write module:function or path/to/file.py:function",
        )
    module = _module(module_part, ref, base_dir, kind)
    try:
        return getattr(module, attr)
    except AttributeError:
        names = _functions(module)
        lowered = {name.lower(): name for name in reversed(names)}
        close = difflib.get_close_matches(attr.lower(), list(lowered), n=1)
        if close:
            hint = f"did you mean {module_part}:{lowered[close[0]]}?"
        elif names:
            hint = f"its functions: {', '.join(names[:10])}"
        else:
            hint = f"define {attr} in {module_part}"
        raise kind(f"{module_part} has no attribute {attr!r}", hint=hint) from None


def _is_path(module_part: str) -> bool:
    return module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def _module(
    module_part: str, ref: str, base_dir: Path | None, kind: type[AgentEvalError]
) -> ModuleType:
    if not _is_path(module_part):
        return import_named_module(module_part, kind, ref, base_dir)
    path = Path(module_part)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise kind(f"no file {path} (in {ref!r})", hint=_missing_file_hint(module_part, path, ref))
    return import_file(path, kind, ref)


def _missing_file_hint(module_part: str, path: Path, ref: str) -> str:
    """Where a relative path is looked for (the folder named, so a user at another directory
    sees why), and the file of a close name in the same folder, when there is one."""
    folder = path.parent
    relative = Path(module_part).parent
    try:
        nearby = [child.name for child in folder.iterdir() if child.suffix == ".py"]
    except OSError:
        nearby = []
    close = difflib.get_close_matches(path.name, nearby, n=1, cutoff=0.6)
    base = path.parent if Path(module_part).is_absolute() else _base_of(path, module_part)
    if not close and not Path(module_part).is_absolute():
        # `run proj/cases.yaml --agent agent.py:run` from the folder above: proj/agent.py.
        below = sorted(base.glob(f"*/{Path(module_part).as_posix()}"))
        if len(below) == 1:
            relative = below[0].parent.relative_to(base) / relative
            close = [below[0].name]
    here = Path.cwd().resolve()
    start = (
        f"the current directory, {here}"
        if base.resolve() == here
        else f"{base}, the folder of the file that names it"
    )
    where = f"a relative path starts at {start}"
    if close:
        attr = ref.rpartition(":")[2]
        return f"did you mean {(relative / close[0]).as_posix()}:{attr}? ({where})"
    return f"check the path: {where}"


def _base_of(path: Path, module_part: str) -> Path:
    parts = len(Path(module_part).parts)
    return path.parents[parts - 1] if parts <= len(path.parents) else path.parent


def _functions(module: ModuleType) -> list[str]:
    """The public callables of a module, those defined in it first."""
    own: list[str] = []
    other: list[str] = []
    for name, value in vars(module).items():
        if name.startswith("_") or not callable(value):
            continue
        mine = getattr(value, "__module__", None) == module.__name__
        (own if mine else other).append(name)
    return own + other


def _with_attribute(ref: str, base_dir: Path | None) -> str | None:
    """The reference `ref` (written without `:function`) most likely meant: `agent.py`'s one
    function, or `agent.run` as `agent:run`; only one that loads."""
    if ref.endswith(".py"):
        candidates = []
        try:
            path = Path(ref) if Path(ref).is_absolute() or base_dir is None else base_dir / ref
            if path.is_file():
                module = import_file(path, AgentLoadError, ref)
                own = [
                    name
                    for name in _functions(module)
                    if getattr(getattr(module, name), "__module__", None) == module.__name__
                ]
                candidates = [f"{ref}:{name}" for name in own[:1]] if len(own) == 1 else []
        except AgentEvalError:
            return None
        return candidates[0] if candidates else None
    module_part, dot, attr = ref.rpartition(".")
    if not dot or not module_part or not attr:
        return None
    try:
        module = _module(module_part, ref, base_dir, AgentLoadError)
    except AgentEvalError:
        return None
    return f"{module_part}:{attr}" if callable(getattr(module, attr, None)) else None
