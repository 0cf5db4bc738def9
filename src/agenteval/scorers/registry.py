"""Turning what the user names (`"exact_match"`, `"my_scorers:concise"`, `{name: ..., settings}`,
a function, an object) into the scorers a run applies, and back into references a rescore can
load again.

Names cover the built-in deterministic scorers, the judge rubrics, the agent evaluators of
seed 004 (also by the names their scores carry: `tool_call_accuracy[require_order]`) and the
criteria of `agenteval.criteria.CRITERIA_REGISTRY` (their settings are `CriterionConfig`
fields); a scorer that needs the run's context (its tools, its judge) gets it here: built-ins by
their fields, and any object with a `for_run(context)` method (the criteria, the evaluators) by
what that method returns.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from agenteval.agents.loading import load_object
from agenteval.agents.tools import ToolSpec
from agenteval.errors import ScorerError
from agenteval.judge.rubrics import RUBRICS, JudgeRubric
from agenteval.scorers.base import scorer_name
from agenteval.scorers.builtin import BUILTIN_SCORERS

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge

__all__ = ["ScorerRef", "ScoringContext", "named_scorers", "resolve_scorers", "scorer_reference"]

ScorerRef: TypeAlias = str | dict[str, Any]
"""How a run stores a scorer: a name, `module:function`, or a name with settings."""

# Fields a scorer gets from the run, never from the user's settings.
_CONTEXT_FIELDS = frozenset({"tools", "judge", "unavailable", "name"})


@dataclass(frozen=True)
class ScoringContext:
    """What scorers may need from the run: its tools, and its judge (or why it has none)."""

    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    judge: Judge | None = None
    judge_problem: str | None = None
    base_dir: Path | None = None


def named_scorers() -> dict[str, type[Any]]:
    """Every scorer that can be named: the built-ins, the judge rubrics, then the agent
    evaluators of seed 004."""
    # Imported here: the evaluators are built on this layer.
    from agenteval.evaluators.catalog import EVALUATORS

    return {**BUILTIN_SCORERS, **dict.fromkeys(RUBRICS, JudgeRubric), **EVALUATORS}


def _default_of(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _criteria() -> dict[str, type[Any]]:
    # Imported here: the criteria are built on this layer.
    from agenteval.criteria.registry import CRITERIA_REGISTRY

    return CRITERIA_REGISTRY


def _build(name: str, settings: Mapping[str, Any], context: ScoringContext) -> Any:
    cls = named_scorers().get(name)
    if cls is None and name in _criteria():
        from agenteval.criteria.registry import criterion_from_settings

        return criterion_from_settings(name, settings)
    if cls is None:
        every = [*named_scorers(), *(n for n in _criteria() if n not in named_scorers())]
        close = difflib.get_close_matches(name, every, n=1)
        raise ScorerError(
            f"no scorer named {name!r}",
            hint=f"did you mean {close[0]!r}?" if close else "known scorers: " + ", ".join(every),
        )
    own = {f.name for f in fields(cls) if f.init}
    unknown = sorted(set(settings) - (own - _CONTEXT_FIELDS))
    if unknown:
        raise ScorerError(
            f"{name} has no setting {unknown[0]!r}",
            field="scorers",
            hint="its settings: " + (", ".join(sorted(own - _CONTEXT_FIELDS)) or "none"),
        )
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in settings.items()}
    if cls is JudgeRubric:
        values.update(name=name, judge=context.judge, unavailable=context.judge_problem)
    elif "tools" in own:
        values["tools"] = context.tools
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ScorerError(f"bad settings for {name}: {exc}", field="scorers") from exc


def _resolve_one(ref: Any, context: ScoringContext) -> Any:
    if isinstance(ref, Mapping):
        settings = dict(ref)
        name = settings.pop("name", None)
        if not isinstance(name, str):
            raise ScorerError(
                f"a scorer with settings needs a `name`, got {ref!r}",
                field="scorers",
                hint="write `- name: retrieval_recall` followed by its settings",
            )
        return _build(name, settings, context)
    if not isinstance(ref, str):
        if not callable(ref):
            raise ScorerError(
                f"{ref!r} is not a scorer",
                hint="pass a scorer name, a module:function reference, or a callable (case, trial)",
            )
        return ref
    if ":" in ref:
        loaded = load_object(ref, base_dir=context.base_dir, kind=ScorerError)
        if not callable(loaded):
            raise ScorerError(f"{ref!r} is not callable", hint="a scorer takes (case, trial)")
        return loaded
    from agenteval.evaluators.naming import named_settings

    bracketed = named_settings(ref)  # `tool_call_accuracy[require_order]`, as scores are named
    if bracketed is not None:
        return _build(*bracketed, context)
    return _build(ref, {}, context)


def resolve_scorers(
    refs: Sequence[Any],
    *,
    builtins: bool = True,
    context: ScoringContext | None = None,
) -> list[Any]:
    """The scorers of a run: the built-in set (unless `builtins=False`) plus `refs`, by name.

    Naming a scorer already in the set adds nothing; the same scorer with other settings takes
    the place of the one before, and so does any scorer named like a default built-in; two
    other scorers with the same name are an error.
    """
    context = context or ScoringContext()
    scorers: dict[str, Any] = {}
    if builtins:
        scorers = {name: _build(name, {}, context) for name in BUILTIN_SCORERS}
    known = named_scorers()
    for ref in refs:
        scorer = _resolve_one(ref, context)
        name = scorer_name(scorer)
        if name in scorers:
            if (isinstance(ref, str) and ref in known) or scorers[name] is scorer:
                continue
            if name in known and isinstance(scorer, known[name]):
                scorers[name] = scorer
                continue
            if name in BUILTIN_SCORERS and _is_default(scorers[name]):
                # A scorer the user names explicitly takes the place of the default built-in
                # of the same name (seed 003's `exact_match` criterion, say).
                scorers[name] = scorer
                continue
            same = scorer_reference(scorer)
            if same is not None and same == scorer_reference(scorers[name]):
                continue  # the same scorer named twice (a stored reference and the object)
            raise ScorerError(
                f"two scorers are named {name!r}",
                hint="give one of them another name (set its `name` attribute)",
            )
        scorers[name] = scorer
    return [_for_run(scorer, context) for scorer in scorers.values()]


def _for_run(scorer: Any, context: ScoringContext) -> Any:
    """The scorer as this run applies it: given the run's context when it asks for it."""
    for_run = getattr(scorer, "for_run", None)
    return for_run(context) if callable(for_run) else scorer


def _is_default(scorer: Any) -> bool:
    return type(scorer) is BUILTIN_SCORERS.get(scorer_name(scorer)) and scorer_reference(
        scorer
    ) == scorer_name(scorer)


def _class_key(scorer: Any, known: Mapping[str, type[Any]]) -> str | None:
    """The one name its class is known by, if it has exactly one."""
    keys = [key for key, cls in known.items() if cls is type(scorer)]
    return keys[0] if len(keys) == 1 else None


def scorer_reference(scorer: Any) -> ScorerRef | None:
    """A reference that loads this scorer again (for rescoring), or None if there is none.

    Named scorers are stored by name (with their settings when they differ from the defaults);
    module-level functions as `module:function`.
    """
    if isinstance(scorer, str | Mapping):
        return scorer if isinstance(scorer, str) else dict(scorer)
    name = scorer_name(scorer)
    known = named_scorers()
    key = name if name in known and type(scorer) is known[name] else _class_key(scorer, known)
    if key is not None:
        changed = {
            f.name: list(value) if isinstance(value, tuple) else value
            for f in fields(scorer)
            if f.init
            and f.name not in _CONTEXT_FIELDS
            and (value := getattr(scorer, f.name)) != _default_of(f)
        }
        # A scorer named after its settings (`tool_call_accuracy[require_order]`) is stored by
        # its class's name; one the user named otherwise cannot be loaded again by name.
        if key == name or scorer_name(_build(key, changed, ScoringContext())) == name:
            return {"name": key, **changed} if changed else key
    if name in _criteria() and name not in known:
        from agenteval.criteria.base import BaseCriterion
        from agenteval.criteria.registry import criterion_reference

        if isinstance(scorer, BaseCriterion):
            return criterion_reference(scorer)
    module = getattr(scorer, "__module__", None)
    qualname = getattr(scorer, "__qualname__", None)
    if module and qualname and "<" not in qualname and module != "__main__":
        return f"{module}:{qualname}"
    return None
