"""The catalog: turning what the user names (`"exact_match"`, `"my_scorers:concise"`,
`{name: ..., settings}`, a function, an object) into the scorers a run applies, and back into
references a rescore can load again.

It sits above the scoring layer's three front doors and is the only place that knows them all:
names cover the built-in deterministic scorers (`agenteval.scorers`), the judge rubrics
(`agenteval.judge.rubrics`), the scores of a conversation with a simulated user
(`agenteval.scorers.conversation`: `goal_completion`, a judge rubric, and `turns_to_goal`), the agent evaluators (`agenteval.evaluators`, also by the names
their scores carry: `tool_call_accuracy[require_order]`) and the criterion API's
`agenteval.criteria.CRITERIA_REGISTRY` (their settings are `CriterionConfig` fields). Nothing
below imports it. A scorer that needs the run's context (its tools, its judge) gets it here:
built-ins by their fields, and any object with a `for_run(context)` method (the criteria, the
evaluators) by what that method returns (`agenteval.scorers.context.ScoringContext`).
"""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, fields, replace
from typing import Any, Protocol, TypeAlias

from agenteval.criteria.base import BaseCriterion
from agenteval.criteria.registry import (
    CRITERIA_REGISTRY,
    criterion_from_settings,
    criterion_reference,
)
from agenteval.errors import ScorerError
from agenteval.evaluators.catalog import EVALUATORS
from agenteval.evaluators.naming import named_settings
from agenteval.judge.rubrics import RUBRICS, JudgeRubric
from agenteval.loading import load_object
from agenteval.scorers.base import RenamedScorer, scorer_name, unrenamed
from agenteval.scorers.builtin import BUILTIN_SCORERS
from agenteval.scorers.context import ScoringContext
from agenteval.scorers.conversation import CONVERSATION_SCORERS

__all__ = [
    "CRITERIA_PREFIX",
    "SCORER_REFS",
    "ResolvedScorers",
    "ScorerRef",
    "StoredSettings",
    "named_scorers",
    "resolve_run_scorers",
    "resolve_scorers",
    "scorer_reference",
    "scorer_references",
]

ScorerRef: TypeAlias = str | dict[str, Any]
"""How a run stores a scorer: a name, `module:function`, or a name with settings."""

# Fields a scorer gets from the run, never from the user's settings.
_CONTEXT_FIELDS = frozenset({"tools", "judge", "unavailable", "name"})


class StoredSettings(Protocol):
    """A stored run's record as the catalog reads it (`agenteval.records.RunInfo`): its stored
    settings."""

    @property
    def settings(self) -> Mapping[str, Any]:
        """The run's stored settings (`RunInfo.settings`), `SCORER_REFS` among them."""
        ...


def named_scorers() -> dict[str, type[Any]]:
    """Every scorer that can be named: the built-ins, the judge rubrics, the conversation
    scores of a simulated user (`goal_completion`, a judge rubric too, and `turns_to_goal`),
    then the agent evaluators."""
    return {
        **BUILTIN_SCORERS,
        **dict.fromkeys(RUBRICS, JudgeRubric),
        **CONVERSATION_SCORERS,
        **EVALUATORS,
    }


def _default_of(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _build(name: str, scorer_settings: Mapping[str, Any], context: ScoringContext) -> Any:
    criterion = name.removeprefix(CRITERIA_PREFIX)
    if criterion != name and criterion in CRITERIA_REGISTRY:
        return criterion_from_settings(criterion, scorer_settings)
    cls = named_scorers().get(name)
    if cls is None and name in CRITERIA_REGISTRY:
        return criterion_from_settings(name, scorer_settings)
    if cls is None:
        every = [*named_scorers(), *(n for n in CRITERIA_REGISTRY if n not in named_scorers())]
        close = difflib.get_close_matches(name, every, n=1)
        raise ScorerError(
            f"no scorer named {name!r}",
            hint=f"did you mean {close[0]!r}?" if close else "known scorers: " + ", ".join(every),
        )
    own = {f.name for f in fields(cls) if f.init}
    unknown = sorted(set(scorer_settings) - (own - _CONTEXT_FIELDS))
    if unknown:
        known = sorted(own - _CONTEXT_FIELDS)
        close = difflib.get_close_matches(unknown[0], known, n=1)
        raise ScorerError(
            f"{name} has no setting {unknown[0]!r}",
            field="scorers",
            hint=f"did you mean {close[0]!r}?"
            if close
            else "its settings: " + (", ".join(known) or "none"),
        )
    values: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in scorer_settings.items()
    }
    if issubclass(cls, JudgeRubric):  # the four rubrics, goal_completion
        values.update(name=name, judge=context.judge, unavailable=context.judge_problem)
    elif "tools" in own:
        values["tools"] = context.tools
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ScorerError(f"bad settings for {name}: {exc}", field="scorers") from exc


def _resolve_one(ref: Any, context: ScoringContext) -> Any:
    if isinstance(ref, Mapping):
        scorer_settings = dict(ref)
        name = scorer_settings.pop("name", None)
        if not isinstance(name, str):
            raise ScorerError(
                f"a scorer with settings needs a `name`, got {ref!r}",
                field="scorers",
                hint="write `- name: retrieval_recall` followed by its settings",
            )
        return _build(name, scorer_settings, context)
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
    bracketed = named_settings(ref)  # `tool_call_accuracy[require_order]`, as scores are named
    if bracketed is not None:
        return _build(*bracketed, context)
    return _build(ref, {}, context)


SCORER_REFS = "scorer_refs"
"""The key of a run's stored settings (`RunInfo.settings`) holding, by scorer name, the code its
scores came from (see `ResolvedScorers.references`)."""

CRITERIA_PREFIX = "criteria."
"""Names a criterion of the criterion API whose name a built-in scorer also has: `criteria.exact_match`."""


@dataclass(frozen=True)
class ResolvedScorers:
    """The scorers a run applies, each under a name no other scorer of the run has, and what
    each name's scores came from.

    Made once per run (and per rescore), never per trial: the references are stored with the
    run's settings (`SCORER_REFS`), not with each score, and joined to the scores when shown.
    """

    scorers: list[Any]
    references: dict[str, dict[str, Any]]
    """By scorer name: `{"ref": reference}` for a scorer `rescore` loads again (a name, a name
    with settings, `module:function`), else `{"code": "module:qualname"}` (a lambda, a function
    in a script: its stored scores are kept by a rescore)."""
    renamed: list[str]
    """One sentence per scorer given a name other than its own, to warn the user with."""


@dataclass(frozen=True)
class _Entry:
    """One scorer of the run being resolved, under the name it will be scored as."""

    scorer: Any
    name: str
    ref: ScorerRef | None
    explicit: bool
    """Its name is one the user wrote (in a config, a flag, a `name` attribute of their own)."""
    default: bool = False
    """One of the built-ins every run gets (not named by the user)."""

    @property
    def identity(self) -> dict[str, Any]:
        """What is stored of it by name: the reference a rescore loads, else where its code is."""
        return {"ref": self.ref} if self.ref is not None else {"code": _code(self.scorer)}


def resolve_scorers(
    refs: Sequence[Any],
    *,
    builtins: bool = True,
    context: ScoringContext | None = None,
) -> list[Any]:
    """The scorers of a run: the built-in set (unless `builtins=False`) plus `refs`, in that
    order, each under a name of its own (see `resolve_run_scorers`)."""
    return resolve_run_scorers(refs, builtins=builtins, context=context).scorers


def resolve_run_scorers(
    refs: Sequence[Any],
    *,
    builtins: bool = True,
    context: ScoringContext | None = None,
    stored: Mapping[str, Any] | None = None,
) -> ResolvedScorers:
    """The scorers of a run: the built-in set (unless `builtins=False`) plus `refs`, in that
    order, each under a name no other scorer of the run has.

    - The same scorer given twice (the same object, or the same reference: `"exact_match"`
      when the built-ins are on, a stored reference and the object) is applied once.
    - A built-in given settings (`{name: step_efficiency, threshold: 0.9}`,
      `ExactMatch(threshold=0.9)`) configures the default built-in of that name.
    - Any other scorer whose name is taken is scored under the name with the first free suffix
      (`exact_match_2`, as pydantic-evals does), unless the user wrote both names (two
      scorers named alike in a config or with `--scorer`, two objects of their own with the
      same `name`): that is an error naming both.

    `stored` (a stored run's `SCORER_REFS`, when it is resumed or rescored) keeps the names
    the run gave: a scorer of a stored reference gets the name stored with it, and a new one
    never takes a name whose stored scores came from other code.
    """
    context = context or ScoringContext()
    stored = stored or {}
    entries: list[_Entry] = []
    if builtins:
        entries = [
            _Entry(_build(name, {}, context), name, name, explicit=False, default=True)
            for name in BUILTIN_SCORERS
        ]
    renamed: list[str] = []
    for ref in refs:
        scorer = _resolve_one(ref, context)
        reference = scorer_reference(scorer)
        if any(
            e.scorer is scorer or (reference is not None and e.ref == reference) for e in entries
        ):
            continue  # the same scorer given twice
        entry = _Entry(scorer, scorer_name(scorer), reference, _named_by_user(ref, scorer))
        taken = next((e for e in entries if e.name == entry.name), None)
        if taken is not None and taken.default and type(taken.scorer) is type(scorer):
            entries[entries.index(taken)] = entry  # the default built-in, configured
            continue
        kept = next((name for name, known in stored.items() if known == entry.identity), None)
        if kept is not None and all(e.name != kept for e in entries):
            entry = replace(entry, name=kept)  # the name this run gave it before
        elif taken is not None or entry.name in stored:
            if taken is not None and taken.explicit and entry.explicit:
                raise ScorerError(
                    f"two scorers are named {entry.name!r}: {_text(taken.identity)} and "
                    f"{_text(entry.identity)}",
                    field="scorers",
                    hint="give one of them another name (its `name`), or leave one out",
                )
            used = {e.name for e in entries} | set(stored)
            free = (f"{entry.name}_{n}" for n in itertools.count(2))
            entry = replace(entry, name=next(name for name in free if name not in used))
            renamed.append(
                f"two scorers are named {scorer_name(scorer)!r}: {_text(entry.identity)} is "
                f"scored as {entry.name!r}"
            )
        entries.append(entry)
    scorers = []
    for entry in entries:
        scorer = _for_run(entry.scorer, context)
        if scorer_name(scorer) != entry.name:
            scorer = RenamedScorer(scorer, entry.name)
        scorers.append(scorer)
    references = {entry.name: entry.identity for entry in entries}
    return ResolvedScorers(scorers, references, renamed)


def _named_by_user(ref: Any, scorer: Any) -> bool:
    """Whether the user wrote the name the scorer's scores carry: a name in a config, on the
    command line or in `scorers=[...]`, or the `name` of a scorer of their own; not a
    function's name, nor the name agenteval gives its own scorers."""
    if isinstance(ref, Mapping) or (isinstance(ref, str) and ":" not in ref):
        return True
    own = str(getattr(scorer, "__module__", "")).startswith("agenteval.")
    return not own and isinstance(getattr(scorer, "name", None), str)


def _code(scorer: Any) -> str:
    """Where a scorer's code is: its function's, or its class's, `module:qualname`."""
    target = scorer if hasattr(scorer, "__qualname__") else type(scorer)
    return f"{getattr(target, '__module__', '?')}:{target.__qualname__}"


def _text(identity: Mapping[str, Any]) -> str:
    """A stored reference as a person reads it."""
    ref = identity.get("ref")
    if ref is None:
        return f"{identity.get('code', '?')} (not loadable again)"
    if isinstance(ref, str):
        return ref
    scorer_settings = {k: v for k, v in ref.items() if k != "name"}
    return f"{ref.get('name')} {json.dumps(scorer_settings, sort_keys=True)}"


def scorer_references(info: StoredSettings) -> dict[str, str]:
    """What each scorer name's scores in a stored run came from, as text to show beside them:
    the reference `rescore` loads, or the code it cannot load again. Empty for a run stored
    before agenteval kept them."""
    stored = info.settings.get(SCORER_REFS)
    if not isinstance(stored, Mapping):
        return {}
    return {name: _text(entry) for name, entry in stored.items() if isinstance(entry, Mapping)}


def _for_run(scorer: Any, context: ScoringContext) -> Any:
    """The scorer as this run applies it: given the run's context when it asks for it."""
    for_run = getattr(scorer, "for_run", None)
    return for_run(context) if callable(for_run) else scorer


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
    scorer = unrenamed(scorer)  # loaded again as itself; the run keeps the name it gave
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
    if name in CRITERIA_REGISTRY:
        ref = criterion_reference(scorer) if isinstance(scorer, BaseCriterion) else None
        if ref is not None and name in known:
            # A built-in scorer has the criterion's name (`exact_match`): qualified, so a
            # rescore loads the criterion, not the built-in.
            if isinstance(ref, str):
                return CRITERIA_PREFIX + ref
            return {**ref, "name": CRITERIA_PREFIX + ref["name"]}
        if ref is not None:
            return ref
    module = getattr(scorer, "__module__", None)
    qualname = getattr(scorer, "__qualname__", None)
    if module and qualname and "<" not in qualname and module != "__main__":
        return f"{module}:{qualname}"
    return None
