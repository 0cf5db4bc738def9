"""Turning what the user names (`"exact_match"`, `"my_scorers:concise"`, a function, an object)
into the list of scorers a run applies, and back into references a rescore can load again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any, TypeAlias

from agenteval.agents.loading import load_object
from agenteval.agents.tools import ToolSpec
from agenteval.errors import ScorerError
from agenteval.scorers.base import scorer_name
from agenteval.scorers.builtin import BUILTIN_SCORERS, builtin_scorer, default_scorers

__all__ = ["ScorerRef", "resolve_scorers", "scorer_reference"]

ScorerRef: TypeAlias = str | dict[str, Any]
"""How a run stores a scorer: a built-in name, `module:function`, or a built-in with settings."""


def _default_of(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _configured_builtin(ref: Mapping[str, Any], tools: Mapping[str, ToolSpec]) -> Any:
    """A built-in with settings, as `agenteval.yaml` writes it: `{name: retrieval_recall, ...}`."""
    settings = dict(ref)
    name = settings.pop("name", None)
    if not isinstance(name, str):
        raise ScorerError(
            f"a scorer with settings needs a `name`, got {ref!r}",
            field="scorers",
            hint="write `- name: retrieval_recall` followed by its settings",
        )
    cls = BUILTIN_SCORERS.get(name)
    if cls is None:
        builtin_scorer(name, tools)  # raises with a did-you-mean
        raise AssertionError("unreachable")
    if "tools" in {f.name for f in fields(cls)}:
        settings.setdefault("tools", tools)
    known = {f.name for f in fields(cls) if f.init} - {"tools"}
    unknown = sorted(set(settings) - known - {"tools"})
    if unknown:
        raise ScorerError(
            f"{name} has no setting {unknown[0]!r}",
            field="scorers",
            hint="its settings: " + ", ".join(sorted(known)),
        )
    for key, value in settings.items():
        if isinstance(value, list):
            settings[key] = tuple(value)
    try:
        return cls(**settings)
    except (TypeError, ValueError) as exc:
        raise ScorerError(f"bad settings for {name}: {exc}", field="scorers") from exc


def _resolve_one(ref: Any, tools: Mapping[str, ToolSpec], base_dir: Path | None) -> Any:
    if isinstance(ref, Mapping):
        return _configured_builtin(ref, tools)
    if not isinstance(ref, str):
        if not callable(ref):
            raise ScorerError(
                f"{ref!r} is not a scorer",
                hint="pass a built-in name, a module:function reference, or a callable (case, trial)",
            )
        return ref
    if ":" in ref:
        loaded = load_object(ref, base_dir=base_dir, kind=ScorerError)
        if not callable(loaded):
            raise ScorerError(f"{ref!r} is not callable", hint="a scorer takes (case, trial)")
        return loaded
    return builtin_scorer(ref, tools)


def resolve_scorers(
    refs: Sequence[Any],
    *,
    builtins: bool = True,
    tools: Mapping[str, ToolSpec] | None = None,
    base_dir: Path | None = None,
) -> list[Any]:
    """The scorers of a run: the built-in set (unless `builtins=False`) plus `refs`, by name.

    Naming a built-in that is already in the set adds nothing; two different scorers with the
    same name are an error.
    """
    tools = tools if tools is not None else {}
    scorers: dict[str, Any] = {}
    if builtins:
        scorers = {scorer_name(s): s for s in default_scorers(tools)}
    for ref in refs:
        scorer = _resolve_one(ref, tools, base_dir)
        name = scorer_name(scorer)
        if name in scorers:
            if (isinstance(ref, str) and ref in BUILTIN_SCORERS) or scorers[name] is scorer:
                continue
            if name in BUILTIN_SCORERS and isinstance(scorer, BUILTIN_SCORERS[name]):
                # A built-in with other settings takes the place of the default one.
                scorers[name] = scorer
                continue
            raise ScorerError(
                f"two scorers are named {name!r}",
                hint="give one of them another name (set its `name` attribute)",
            )
        scorers[name] = scorer
    return list(scorers.values())


def scorer_reference(scorer: Any) -> ScorerRef | None:
    """A reference that loads this scorer again (for rescoring), or None if there is none.

    Built-ins are stored by name (with their settings when they differ from the defaults);
    module-level functions as `module:function`.
    """
    if isinstance(scorer, str | Mapping):
        return scorer if isinstance(scorer, str) else dict(scorer)
    name = scorer_name(scorer)
    if name in BUILTIN_SCORERS and type(scorer) is BUILTIN_SCORERS[name]:
        changed = {
            f.name: list(value) if isinstance(value, tuple) else value
            for f in fields(scorer)
            if f.init and f.name != "tools" and (value := getattr(scorer, f.name)) != _default_of(f)
        }
        return {"name": name, **changed} if changed else name
    module = getattr(scorer, "__module__", None)
    qualname = getattr(scorer, "__qualname__", None)
    if module and qualname and "<" not in qualname and module != "__main__":
        return f"{module}:{qualname}"
    return None
