"""Exception classes named by reference, as a run declares its infrastructure failures
(`infrastructure_errors`: `module:Class`, `module.Class`, `path/to/file.py:Class`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agenteval.errors import ConfigError
from agenteval.loading import load_object

__all__ = ["exception_class", "exception_classes"]


def exception_class(
    ref: str | type[BaseException], base_dir: Path | None, where: str
) -> type[BaseException]:
    """The exception class `ref` names (`module:Class`, `module.Class`,
    `path/to/file.py:Class`, relative to `base_dir`; a class is taken as it is); a reference
    that does not load, or names something else, is a `ConfigError` naming `where`."""
    value: Any = ref
    if isinstance(ref, str):
        module, dot, name = ref.rpartition(".")
        spec = ref if ":" in ref else f"{module}:{name}" if dot and module else ""
        if not spec:
            raise ConfigError(
                f"{ref!r} is not a reference to an exception class",
                field=where,
                hint="write module:Class, module.Class or path/to/file.py:Class",
            )
        try:
            value = load_object(spec, base_dir=base_dir, kind=ConfigError)
        except ConfigError as exc:
            raise ConfigError(exc.message, field=where, hint=exc.hint) from exc
    if not (isinstance(value, type) and issubclass(value, BaseException)):
        raise ConfigError(
            f"{ref!r} is not an exception class",
            field=where,
            hint="name a class that an agent raises, e.g. mypackage.errors:ServiceBusy",
        )
    if value in _CATCH_ALL:
        # Every bug an agent has would be retried and never scored: its pass rate could only
        # go up, and a gate would pass it.
        raise ConfigError(
            f"{ref!r} would make every error an agent raises infrastructure (retried, never "
            "scored)",
            field=where,
            hint="name the exception classes of the service that fails, e.g. "
            "mypackage.errors:ServiceBusy, or raise agenteval.InfrastructureError for it",
        )
    return value


_CATCH_ALL = (BaseException, Exception)


def exception_classes(
    refs: Sequence[str | type[BaseException]], *, base_dir: Path | None = None
) -> tuple[type[BaseException], ...]:
    """The exception classes `refs` name (`module:Class`, `module.Class`,
    `path/to/file.py:Class`; classes are taken as they are); a reference that does not load,
    or names something else, is a `ConfigError` naming its place in `infrastructure_errors`."""
    return tuple(
        exception_class(ref, base_dir, f"infrastructure_errors[{index}]")
        for index, ref in enumerate(refs)
    )
