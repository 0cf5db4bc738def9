"""`EvalSet`: a named set of cases, read from a Google ADK eval set or any agenteval case file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from agenteval.case import EvalCase
from agenteval.casefiles.adk_walk import AdkEvalSet
from agenteval.casefiles.loading import read_case_file
from agenteval.casefiles.read_adk import adk_from_data, has_adk_name, read_adk_folder, set_name
from agenteval.casefiles.write_adk import adk_json, write_adk
from agenteval.casefiles.writing import dump_cases
from agenteval.errors import DatasetError

__all__ = ["EvalSet", "eval_set_of"]


class EvalSet(BaseModel):
    """A named set of cases: what `AgentEvaluator.evaluate` runs.

    `EvalSet.load` reads Google ADK eval sets (`*.evalset.json`), ADK test files (`*.test.json`,
    in the current or the legacy format), a folder of those, or any agenteval case file. ADK's
    names are accepted too: `eval_set_id` for `id`, `eval_cases` for `cases`.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(validation_alias=AliasChoices("id", "eval_set_id", "evalSetId"))
    name: str | None = None
    description: str | None = None
    cases: list[EvalCase] = Field(
        default_factory=list, validation_alias=AliasChoices("cases", "eval_cases", "evalCases")
    )

    @model_validator(mode="after")
    def _distinct_ids(self) -> EvalSet:
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise ValueError(f"two cases have the id {case.id!r}; case ids must be distinct")
            seen.add(case.id)
        return self

    @property
    def eval_set_id(self) -> str:
        """The id, under ADK's name."""
        return self.id

    @property
    def eval_cases(self) -> list[EvalCase]:
        """The cases, under ADK's name."""
        return self.cases

    def __len__(self) -> int:
        return len(self.cases)

    def case(self, case_id: str) -> EvalCase:
        """The case with this id (KeyError when there is none)."""
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        initial_session: Mapping[str, Any] | str | Path | None = None,
    ) -> EvalSet:
        """Read an eval set from `path`.

        - `*.evalset.json` and `*.test.json`: Google ADK eval sets, in the current format
          (`eval_set_id`, `eval_cases`) or the legacy one (a list of `query` turns); see
          `agenteval.evalset.adk` for how ADK fields map onto `EvalCase`. `initial_session`
          (a mapping, or the path of ADK's session file) gives legacy files their session;
          without it, an `initial.session.json` beside the file is used when there is one.
        - a folder: every `*.evalset.json` and `*.test.json` under it, as one set named after
          the folder (ADK's `AgentEvaluator.evaluate` takes a folder the same way).
        - a `.json` file under another name that holds an ADK eval set (`eval_cases`) or
          legacy turns (`query`): read as ADK's.
        - any other case file (YAML, JSON, JSONL, CSV): read with `agenteval.load_cases`.

        Raises `DatasetError` naming the file, case and field of the first mistake.
        """
        source = Path(path)
        if source.is_dir():
            return eval_set_of(read_adk_folder(source, initial_session=initial_session))
        found = read_case_file(source, initial_session=initial_session)
        if isinstance(found, AdkEvalSet):
            return eval_set_of(found)
        return cls(id=set_name(source), cases=found)

    @classmethod
    def from_adk(cls, data: Any, *, source: str = "<eval set>") -> EvalSet:
        """An eval set from ADK data already parsed from JSON (an `EvalSet` mapping, or a legacy
        list of turns); `source` names it in error messages."""
        return eval_set_of(adk_from_data(data, source=source))

    def to_adk(self) -> dict[str, Any]:
        """This set as ADK's `EvalSet` JSON (snake_case keys, as ADK writes them).

        Reading the result back (`EvalSet.from_adk`) gives this set again for sets read from
        ADK files; cases written with a single `input` come back as one-turn conversations.
        """
        return adk_json(self)

    def save(self, path: str | Path) -> Path:
        """Write the set to `path` and return it: ADK's format for `*.evalset.json` and
        `*.test.json`, else an agenteval case file (`agenteval.dump_cases`)."""
        target = Path(path)
        if has_adk_name(target):
            return write_adk(self, target)
        if not self.cases:
            raise DatasetError(
                "the eval set has no cases to write", file=str(target), hint="add cases first"
            )
        return dump_cases(self.cases, target)


def eval_set_of(found: AdkEvalSet) -> EvalSet:
    """The eval set an ADK file held, as an `EvalSet`."""
    return EvalSet(id=found.id, name=found.name, description=found.description, cases=found.cases)
