"""Loading a Python object from a reference: `module:attribute` or `path/to/file.py:attribute`."""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.errors import AgentEvalError, AgentLoadError

__all__ = ["load_object"]


def _import_file(path: Path, kind: type[AgentEvalError], ref: str) -> ModuleType:
    resolved = path.resolve()
    # A module loaded twice (once per run in one process) would register its tools twice; reuse it.
    module_name = f"agenteval_user_{abs(hash(str(resolved))):x}_{resolved.stem}"
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
        raise kind(
            f"importing {path} failed: {type(exc).__name__}: {exc}",
            hint=f"fix the error in {path} (run it with python to see the traceback)",
        ) from exc
    return module


def _import_module(
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
        raise kind(
            f"importing {name!r} failed: {exc}", hint=f"install {exc.name!r} or fix the import"
        ) from exc
    except Exception as exc:
        raise kind(
            f"importing {name!r} failed: {type(exc).__name__}: {exc}",
            hint=f"fix the error in module {name!r}",
        ) from exc


def load_object(
    ref: str, *, base_dir: Path | None = None, kind: type[AgentEvalError] = AgentLoadError
) -> Any:
    """Load the object a reference names.

    `ref` is `module:attribute` (an importable module, the current directory included) or
    `path/to/file.py:attribute` (relative to `base_dir`, else the current directory). A missing
    module, file or attribute raises `kind` with a hint.
    """
    module_part, sep, attr = ref.rpartition(":")
    if not sep or not module_part or not attr:
        raise kind(
            f"{ref!r} is not a reference to a function",
            hint="write module:function or path/to/file.py:function",
        )
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        path = Path(module_part)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise kind(
                f"no file {path} (in {ref!r})",
                hint="check the path; it is relative to the config file",
            )
        module = _import_file(path, kind, ref)
    else:
        module = _import_module(module_part, kind, ref, base_dir)
    try:
        return getattr(module, attr)
    except AttributeError:
        names = [n for n in dir(module) if not n.startswith("_")]
        close = difflib.get_close_matches(attr, names, n=1)
        hint = (
            f"did you mean {module_part}:{close[0]}?"
            if close
            else f"define {attr} in {module_part}"
        )
        raise kind(f"{module_part} has no attribute {attr!r}", hint=hint) from None
