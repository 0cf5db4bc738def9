"""The options several commands share, each written once, and `with_options`, the decorator that
gives a command the ones it takes (their values reach it as one `Flags`)."""

# `_shared(...)` returns a `dataclasses.field`, which RUF009 does not know:
# ruff: noqa: RUF009

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import typer

__all__ = [
    "BaseRunArgument",
    "CandidateRunArgument",
    "Flags",
    "RunIdArgument",
    "names",
    "with_options",
]


def _run_argument(metavar: str, which: str) -> Any:
    return typer.Argument(
        metavar=metavar, help=f"{which}: an id, a unique prefix of one, or `latest`."
    )


RunIdArgument = Annotated[str, _run_argument("RUN_ID", "The run")]
BaseRunArgument = Annotated[str, _run_argument("BASE_RUN", "The base run")]
CandidateRunArgument = Annotated[str, _run_argument("CANDIDATE_RUN", "The candidate run")]


def _shared(declaration: str, help: str, default: bool | None = None) -> Any:
    """A shared option, as a field of `Flags`: `declaration` is its flags and the metavar of
    its value (`--store FILE`, `--verbose -v`), `help` its help."""
    return dataclasses.field(
        default=default, metadata={"declaration": declaration.split(), "help": help}
    )


@dataclasses.dataclass(frozen=True)
class Flags:
    """The values of the options several commands share, each declared here once; an option
    the command does not take keeps its default."""

    scorer: list[str] | None = _shared(
        "--scorer NAME", "Add a scorer: a built-in name or module:function (repeatable)."
    )
    no_builtins: bool = _shared("--no-builtins", "Leave out the built-in scorers.", False)
    store: Path | None = _shared(
        "--store FILE", "The SQLite run store; env AGENTEVAL_STORE (default: .agenteval/runs.db)."
    )
    json_path: Path | None = _shared("--json FILE", "Write the run as JSON to FILE.")
    junit_path: Path | None = _shared(
        "--junit FILE", "Write the run as JUnit XML to FILE: one test case per eval case."
    )
    html_path: Path | None = _shared(
        "--html FILE", "Write the run as one self-contained HTML page to FILE."
    )
    verbose: bool = _shared("--verbose -v", "Also list failing trials with their reasons.", False)
    passing: list[str] | None = _shared(
        "--passing NAME",
        "The scorers that decide whether a trial passes (repeatable or comma-separated) "
        "(default: every scorer that applied).",
    )
    judge: str | None = _shared(
        "--judge PROVIDER:MODEL",
        "The LLM judge (provider openai, anthropic or google); env AGENTEVAL_JUDGE.",
    )
    rubric: list[str] | None = _shared(
        "--rubric NAME",
        "Judge rubrics to score (repeatable or comma-separated) (default: all four).",
    )
    no_cache: bool = _shared("--no-cache", "Ask the judge again instead of using its cache.", False)
    otlp_endpoint: str | None = _shared(
        "--otlp-endpoint URL",
        "Also send each score to this OTLP/HTTP endpoint (e.g. http://localhost:4318) as a "
        "gen_ai.evaluation.result event on its trial's span; env AGENTEVAL_OTLP_ENDPOINT.",
    )


def _parameter(field: dataclasses.Field[Any], hint: Any) -> inspect.Parameter:
    """A `Flags` field as the command parameter typer reads the option from."""
    words: list[str] = field.metadata["declaration"]
    option = typer.Option(
        *(word for word in words if word.startswith("-")),
        metavar=next((word for word in words if not word.startswith("-")), None),
        help=field.metadata["help"],
    )
    return inspect.Parameter(
        field.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=field.default,
        annotation=Annotated[hint, option],
    )


_HINTS = get_type_hints(Flags)
_SHARED = {field.name: _parameter(field, _HINTS[field.name]) for field in dataclasses.fields(Flags)}
"""Each shared option, by its `Flags` field."""


def with_options(order: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the shared options `order` names (fields of `Flags`, separated by
    spaces); their values reach it as one `Flags`, its keyword `flags`. `order` is the order
    its `--help` lists them in, and may name the command's own options among them (its own
    parameters not named come first, in their order). So a shared option is declared once, and
    a command says in one line which it takes."""
    wanted = order.split()

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        own = {name: p for name, p in signature.parameters.items() if name != "flags"}
        unknown = [name for name in wanted if name not in own and name not in _SHARED]
        if unknown:
            raise TypeError(f"{command.__name__} has no option {', '.join(unknown)}")
        taken = [name for name in wanted if name not in own]
        listed = [p for name, p in own.items() if name not in wanted] + [
            own.get(name) or _SHARED[name] for name in wanted
        ]
        # Typer passes every value by name: keyword-only, they may come in any order.
        parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in listed]

        @functools.wraps(command)
        def with_flags(**values: Any) -> None:
            flags = Flags(**{name: values.pop(name) for name in taken})
            command(**values, flags=flags)

        with_flags.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        with_flags.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_flags

    return decorate


def names(values: list[str] | None) -> list[str] | None:
    """`--rubric a,b --rubric c` (or `--passing`) as [a, b, c]; None when not given."""
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]
