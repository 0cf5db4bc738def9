"""The ADK reader: Google ADK eval sets (`*.evalset.json`) and test files (`*.test.json`, current
or legacy) as agenteval cases, and the detection of ADK files among `.json` case files.

How ADK's fields land on `EvalCase` is documented in `agenteval.evalset.adk`, the ADK API over
this reader; the walk itself is `adk_evalset`, `adk_turns` and `adk_legacy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenteval.case import EvalCase
from agenteval.casefiles.adk_evalset import EvalSetReader
from agenteval.casefiles.adk_keys import LEVELS
from agenteval.casefiles.adk_scenario import settings_beside
from agenteval.casefiles.adk_walk import AdkEvalSet
from agenteval.casefiles.jsontext import JsonTree, parse_json
from agenteval.casefiles.positions import cached_tree, dotted, line_in
from agenteval.casefiles.source import read_text
from agenteval.errors import DatasetError

__all__ = [
    "ADK_SUFFIXES",
    "ADK_TEST_CONFIG",
    "INITIAL_SESSION_FILE",
    "adk_cases",
    "adk_from_data",
    "empty_adk_file",
    "has_adk_name",
    "has_adk_shape",
    "is_adk_data",
    "is_adk_file",
    "load_adk_cases",
    "read_adk",
    "read_adk_folder",
    "read_adk_json",
    "set_name",
]

ADK_TEST_CONFIG = "test_config.json"
"""ADK's eval config, looked for beside an eval set: its criteria (`EvalConfig.for_file`) and
its `user_simulator_config`, which the simulated cases read from the file take."""

ADK_SUFFIXES = (".evalset.json", ".test.json")
"""File names read as ADK eval sets."""

INITIAL_SESSION_FILE = "initial.session.json"
"""ADK's session file for legacy test files, picked up beside a `*.test.json` file."""


def has_adk_name(path: str | Path) -> bool:
    """Whether `path` is named as ADK names its eval files (`*.evalset.json`, `*.test.json`)."""
    return Path(path).name.lower().endswith(ADK_SUFFIXES)


def is_adk_file(path: str | Path) -> bool:
    """Whether the file at `path` is read as an ADK eval set: by its name (`*.evalset.json`,
    `*.test.json`) unless it holds agenteval's own case list (every case with an `id`, `input`
    or `conversation`, as `dump_cases` writes it under any name), or, for another `.json` file,
    by its content (ADK's shape, not agenteval's case list).

    The one detection `agenteval.load_cases` (so `agenteval run FILE`) and `EvalSet.load` share
    (`is_adk_data`, on the text they parse once): ADK's own benchmarks keep eval sets under
    other names (`bigquerybench_eval.json`).
    """
    source = Path(path)
    named = has_adk_name(source)
    if source.suffix.lower() != ".json" or not source.is_file():
        return named
    file = str(source)
    try:
        data, _ = parse_json(read_text(source, file), file)
    except DatasetError:
        return named  # the reader the name picks says what is wrong with it
    return is_adk_data(data, named)


def is_adk_data(data: Any, named: bool) -> bool:
    """Whether parsed JSON from a `.json` file is read as ADK's: for a file with ADK's name
    (`named`), unless it is agenteval's own case list; for another, when it has ADK's shape."""
    if named:
        # `dump_cases(cases, "smoke.test.json")` writes agenteval's list under ADK's name:
        # such a file is read back as written, not refused as ADK with unknown keys.
        return not _has_case_file_shape(data)
    return has_adk_shape(data)


def _has_case_file_shape(data: Any) -> bool:
    """Whether parsed JSON is unmistakably an agenteval case file: a list of cases, or a
    `cases` mapping holding one, every case with an `id`, `input` or `conversation` (keys
    `dump_cases` writes and no top-level list of ADK's takes)."""
    if isinstance(data, dict):
        if has_adk_shape(data) or "cases" not in data:
            return False
        data = data["cases"]
    return (
        isinstance(data, list)
        and bool(data)
        and all(
            isinstance(item, dict) and not {"id", "input", "conversation"}.isdisjoint(item)
            for item in data
        )
    )


def has_adk_shape(data: Any) -> bool:
    """Whether parsed JSON is shaped as an ADK eval set rather than an agenteval case file.

    ADK's: an object with `eval_set_id` or `eval_cases` (either spelling); a list of legacy test
    turns (each with a `query` and only legacy turn keys); a list of legacy cases (each with
    `name` and `data`). agenteval's: a list of cases (`input`, ...) or a `cases:` mapping; a
    list of `{"query": ..., "expected_output": ...}` is an agenteval file with a mistake, left
    to that reader's hints.
    """
    if isinstance(data, dict):
        return any(key in data for key in ("eval_set_id", "evalSetId", "eval_cases", "evalCases"))
    if not (isinstance(data, list) and data and all(isinstance(item, dict) for item in data)):
        return False
    turns, cases = LEVELS["a legacy turn"].names, LEVELS["a legacy eval case"].names
    return all("query" in item and turns.issuperset(item) for item in data) or all(
        "data" in item and "name" in item and cases.issuperset(item) for item in data
    )


def load_adk_cases(path: str | Path) -> list[EvalCase]:
    """The cases of an ADK file, for `agenteval.load_cases`."""
    return adk_cases(read_adk(path), str(path))


def adk_cases(found: AdkEvalSet, file: str) -> list[EvalCase]:
    """The cases of an ADK file read, refusing a file without any (a case file needs one)."""
    if not found.cases:
        raise DatasetError(
            "no eval cases in the file",
            file=file,
            hint='add cases under "eval_cases", each with an "eval_id" and a "conversation"',
        )
    return found.cases


def read_adk(
    path: str | Path,
    *,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> AdkEvalSet:
    """Read an ADK eval set or test file (see `agenteval.evalset.adk` for the mapping)."""
    source = Path(path)
    file = str(path)
    text = read_text(source, file)
    if not text.strip():
        raise empty_adk_file(file)
    data, duplicated = parse_json(text, file)
    return read_adk_json(text, data, duplicated, source, initial_session)


def empty_adk_file(file: str) -> DatasetError:
    """The error for an ADK file that holds nothing but white space."""
    return DatasetError(
        "the file is empty",
        file=file,
        hint='an ADK eval set is a JSON object with "eval_set_id" and "eval_cases"',
    )


def read_adk_json(
    text: str,
    data: Any,
    duplicated: str | None,
    source: Path,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> AdkEvalSet:
    """The eval set of the ADK file `source`, whose `text` is parsed already as `data` (with
    `duplicated`, the first key given twice in it, or None)."""
    file = str(source)
    positions = JsonTree(text)
    tree = cached_tree(positions.build)
    if duplicated is not None:
        tree()
        twice = positions.duplicate
        raise DatasetError(
            f"the key {duplicated!r} is given twice"
            + (f" (first on line {twice.first_line})" if twice and twice.first_line else ""),
            file=file,
            line=twice.line if twice else None,
            field=dotted(twice.path) if twice else duplicated,
            hint="keep one of them",
        )
    session = _session_file(source, initial_session, data)
    reader = EvalSetReader(file, lambda loc: line_in(tree(), loc), set_name(source))
    found = reader.eval_set(data, session)
    # ADK's simulated users take the `user_simulator_config` of the eval config beside the file.
    found.cases = settings_beside(source, found.cases, ADK_TEST_CONFIG)
    return found


def read_adk_folder(
    folder: str | Path,
    *,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> AdkEvalSet:
    """Every ADK file under `folder` (recursively), as one set named after the folder."""
    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file() and has_adk_name(p))
    if not files:
        raise DatasetError(
            "no ADK eval files in this folder",
            file=str(root),
            hint="ADK eval files end in .evalset.json or .test.json",
        )
    cases: list[EvalCase] = []
    first: dict[str, Path] = {}
    for file in files:
        for case in read_adk(file, initial_session=initial_session).cases:
            if case.id in first:
                raise DatasetError(
                    f"the case id {case.id!r} is also used in {first[case.id]}",
                    file=str(file),
                    case=case.id,
                    hint="give each eval case its own eval_id",
                )
            first[case.id] = file
            cases.append(case)
    return AdkEvalSet(root.name, root.name, None, cases)


def adk_from_data(data: Any, *, source: str = "<eval set>") -> AdkEvalSet:
    """An eval set from ADK data already parsed from JSON; `source` names it in messages."""
    return EvalSetReader(source, lambda loc: None, "eval_set").eval_set(data, None)


def set_name(path: Path) -> str:
    """The name of a file without its ADK suffix (`smoke.evalset.json` → `smoke`) or extension:
    the id of the set read from it."""
    name = path.name
    for suffix in ADK_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _session_file(
    source: Path, given: Mapping[str, Any] | str | Path | None, data: Any
) -> dict[str, Any] | None:
    """The initial session of a legacy test file: given, or ADK's file beside it."""
    if isinstance(given, Mapping):
        return dict(given)
    if given is not None:
        path = Path(given)
    else:
        if not isinstance(data, list):
            return None  # only legacy files take a session file
        path = source.parent / INITIAL_SESSION_FILE
        if not path.is_file():
            return None
    file = str(path)
    session, _ = parse_json(read_text(path, file), file)
    if not isinstance(session, dict):
        raise DatasetError(
            "an initial session file holds a JSON object",
            file=file,
            hint='write {"state": {...}, "app_name": "...", "user_id": "..."}',
        )
    return session
