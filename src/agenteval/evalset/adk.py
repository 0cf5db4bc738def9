"""Google ADK eval sets (`*.evalset.json`) and test files (`*.test.json`) as agenteval cases.

Three shapes are read, with snake_case or camelCase keys (`eval_cases` or `evalCases`,
`user_content` or `userContent`, ...):

- **ADK's `EvalSet`** (`eval_set_id`, `name`, `description`, `eval_cases`), the format of
  `*.evalset.json` files and of current `*.test.json` files.
- **The legacy test file**: a list of turns `{query, expected_tool_use: [{tool_name,
  tool_input}], reference}`, one file being one multi-turn case named after the file. Its
  session comes from ADK's initial session file (`{state, app_name, user_id}`).
- **The legacy eval set**: a list of `{name, data: [turns...], initial_session}`.

How ADK's fields land on `EvalCase`:

| ADK | agenteval |
|---|---|
| `eval_set_id`, `name`, `description` | `EvalSet.id`, `.name`, `.description` |
| `eval_cases[].eval_id` | `EvalCase.id` |
| `conversation[]` (one invocation per user turn) | `EvalCase.conversation[]` (`Invocation`) |
| `user_content.parts[].text` | `Invocation.input` (text parts joined by a newline) |
| `final_response.parts[].text` | `Invocation.expected_final_response` |
| `intermediate_data.tool_uses[]` `{name, args, id}` | `Invocation.expected_tool_trajectory[]` (`ToolCall(name, arguments, id)`) |
| `intermediate_data.tool_responses[]` `{id, name, response}` | `.result` of the matching expected `ToolCall` |
| `intermediate_data.invocation_events[]` | tool calls and responses as above, text as intermediate responses |
| `intermediate_data.intermediate_responses[]` `[author, parts]` | `metadata["adk"]["intermediate_responses"]` (per turn) |
| `conversation[].invocation_id` | `metadata["adk"]["invocation_ids"]` (per turn) |
| `conversation[].rubrics[]` | `Invocation.rubrics[]` |
| `eval_cases[].rubrics[]` | `EvalCase.rubrics[]` |
| `rubric_id`, `rubric_content.text_property` | `Rubric.rubric_id`, `Rubric.content` |
| `session_input` `{app_name, user_id, session_id, state}` | `metadata["session_input"]` (same keys) |
| `final_session_state` | `metadata["final_session_state"]` (checked by `final_session_state_match`) |
| legacy `query`, `reference` | `Invocation.input`, `.expected_final_response` |
| legacy `expected_tool_use[]` `{tool_name, tool_input, mock_tool_output}` | `expected_tool_trajectory[]` (`name`, `arguments`, `result`) |
| legacy `expected_intermediate_agent_responses[]` `{author, text}` | `metadata["adk"]["intermediate_responses"]` |
| legacy `initial_session` / session file | `metadata["session_input"]` |

Not carried over: timestamps, `app_details`, rubric `description` and `type`, thought parts.
A `conversation_scenario` (ADK's user simulator) cannot be played from a file and is refused
with a message. A key ADK's models do not take is refused, naming the key meant (`adk_keys`).

What agenteval writes, google-adk's models accept. ADK keeps an eval case's extra keys and
refuses them below it, so agenteval's own data goes on the case: `tags`, `metadata` (other
metadata keys), and `agenteval` (`AGENTEVAL_KEY`: each turn's `expected_node_order` and rubric
weights, the case rubrics' weights, and the case fields ADK has none for, `CASE_ONLY`:
`expected_tools`, `keywords`, `max_tool_calls`, ...). A tool result that is not a JSON object is written
`{"result": value}`, as ADK's tools return it; a session without `app_name` or `user_id` gets
"" for them, as ADK's converter of legacy sessions does. Files from earlier agenteval versions
(`expected_node_order` on an invocation, `weight` on a rubric) are still read.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.case import EvalCase, Invocation, Rubric
from agenteval.datasets import _cached, _json_value, _JsonTree, _line_in, _read_text
from agenteval.errors import DatasetError
from agenteval.evalset.adk_keys import CASE_ONLY, LEVELS, camel, unknown_key
from agenteval.evalset.evalset import EvalSet
from agenteval.jsonsafe import MAX_DEPTH, model_json
from agenteval.trace import ToolCall

__all__ = [
    "ADK_METADATA",
    "ADK_SUFFIXES",
    "AGENTEVAL_KEY",
    "CASE_ONLY",
    "FINAL_SESSION_STATE",
    "INITIAL_SESSION_FILE",
    "SESSION_INPUT",
    "eval_set_from_adk",
    "eval_set_to_adk",
    "has_adk_name",
    "has_adk_shape",
    "is_adk_file",
    "load_adk_cases",
    "read_adk_file",
    "read_adk_folder",
    "write_adk_file",
]

ADK_SUFFIXES = (".evalset.json", ".test.json")
"""File names read as ADK eval sets."""

INITIAL_SESSION_FILE = "initial.session.json"
"""ADK's session file for legacy test files, picked up beside a `*.test.json` file."""

SESSION_INPUT = "session_input"
"""`EvalCase.metadata` key of ADK's `session_input`: `app_name`, `user_id`, `session_id`, and
the initial `state`."""

FINAL_SESSION_STATE = "final_session_state"
"""`EvalCase.metadata` key of the session state the case expects at the end of the conversation."""

AGENTEVAL_KEY = "agenteval"
"""The eval case key under which agenteval writes what ADK's schema has no place for (ADK keeps
an eval case's extra keys, and refuses them everywhere below): per turn (`turns`, one object a
turn) the `expected_node_order` and the `rubric_weights`; the case rubrics' `rubric_weights`;
and under `case` the `EvalCase` fields ADK has no field for (`CASE_ONLY`, in `adk_keys`)."""

ADK_METADATA = "adk"
"""`EvalCase.metadata` key of ADK's other per-turn fields: `invocation_ids` and
`intermediate_responses` (per turn, a list of `{author, text}`)."""

_Loc = tuple[str | int, ...]


def has_adk_name(path: str | Path) -> bool:
    """Whether `path` is named as ADK names its eval files (`*.evalset.json`, `*.test.json`)."""
    return Path(path).name.lower().endswith(ADK_SUFFIXES)


def is_adk_file(path: str | Path) -> bool:
    """Whether the file at `path` is read as an ADK eval set: by its name (`*.evalset.json`,
    `*.test.json`) unless it holds agenteval's own case list (every case with an `id`, `input`
    or `conversation`, as `dump_cases` writes it under any name), or, for another `.json` file, by its content (ADK's
    shape, not agenteval's case list).

    The one detection `agenteval.load_cases` (so `agenteval run FILE`) and `EvalSet.load` share:
    ADK's own benchmarks keep eval sets under other names (`bigquerybench_eval.json`).
    """
    source = Path(path)
    named = has_adk_name(source)
    if source.suffix.lower() != ".json" or not source.is_file():
        return named
    try:
        data = json.loads(source.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return named  # the reader the name picks says what is wrong with it
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
    cases = read_adk_file(path).cases
    if not cases:
        raise DatasetError(
            "no eval cases in the file",
            file=str(path),
            hint='add cases under "eval_cases", each with an "eval_id" and a "conversation"',
        )
    return cases


def read_adk_file(
    path: str | Path,
    *,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> EvalSet:
    """Read an ADK eval set or test file (see the module's docstring for the mapping)."""
    source = Path(path)
    file = str(path)
    text = _read_text(source, file)
    if not text.strip():
        raise DatasetError(
            "the file is empty",
            file=file,
            hint='an ADK eval set is a JSON object with "eval_set_id" and "eval_cases"',
        )
    data, duplicated = _json_value(text, file)
    positions = _JsonTree(text)
    tree = _cached(positions.build)
    if duplicated is not None:
        tree()
        twice = positions.duplicate
        raise DatasetError(
            f"the key {duplicated!r} is given twice"
            + (f" (first on line {twice.first_line})" if twice and twice.first_line else ""),
            file=file,
            line=twice.line if twice else None,
            field=_dotted(twice.path) if twice else duplicated,
            hint="keep one of them",
        )
    session = _session_file(source, initial_session, data)
    reader = _Reader(file, lambda loc: _line_in(tree(), loc), _stem(source))
    return reader.eval_set(data, session)


def read_adk_folder(
    folder: str | Path,
    *,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> EvalSet:
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
        for case in read_adk_file(file, initial_session=initial_session).cases:
            if case.id in first:
                raise DatasetError(
                    f"the case id {case.id!r} is also used in {first[case.id]}",
                    file=str(file),
                    case=case.id,
                    hint="give each eval case its own eval_id",
                )
            first[case.id] = file
            cases.append(case)
    return EvalSet(id=root.name, name=root.name, cases=cases)


def eval_set_from_adk(data: Any, *, source: str = "<eval set>") -> EvalSet:
    """An eval set from ADK data already parsed from JSON."""
    return _Reader(source, lambda loc: None, "eval_set").eval_set(data, None)


# ---------------------------------------------------------------------------------------------
# Reading


def _stem(path: Path) -> str:
    name = path.name
    for suffix in ADK_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _dotted(path: Sequence[str | int]) -> str:
    return ".".join(str(step) for step in path)


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
    session, _ = _json_value(_read_text(path, file), file)
    if not isinstance(session, dict):
        raise DatasetError(
            "an initial session file holds a JSON object",
            file=file,
            hint='write {"state": {...}, "app_name": "...", "user_id": "..."}',
        )
    return session


@dataclass
class _Reader:
    """Walks ADK data, raising one `DatasetError` (file, line, case, field, hint) per mistake."""

    file: str
    line_of: Callable[[_Loc], int | None]
    stem: str

    # --- errors and access

    def error(
        self,
        message: str,
        loc: _Loc,
        *,
        case: str | int | None = None,
        hint: str | None = None,
    ) -> DatasetError:
        return DatasetError(
            message,
            file=self.file,
            line=self.line_of(loc),
            case=case,
            field=_dotted(loc) if loc else None,
            hint=hint,
        )

    def known(
        self, mapping: Mapping[str, Any], loc: _Loc, what: str, case: str | int | None
    ) -> None:
        """Refuse a key ADK's model for `what` does not take (see `adk_keys`): read silently, a
        misspelt key drops an expectation."""
        found = unknown_key(mapping, what)
        if found is None:
            return
        other = _OTHER_FORMAT.get((what, found.key))
        if other is not None:
            hint = other
        elif found.meant is not None:
            hint = f"did you mean {found.meant!r}?"
        else:
            hint = f"{what} takes: " + ", ".join(found.known)
        raise self.error(
            f"unknown key {found.key!r} in {what}", (*loc, found.key), case=case, hint=hint
        )

    @staticmethod
    def key(mapping: Mapping[str, Any], name: str) -> str | None:
        """The key under which `mapping` gives the field `name` (snake_case or camelCase)."""
        if name in mapping:
            return name
        alias = camel(name)
        if alias in mapping:
            return alias
        return None

    def get(self, mapping: Mapping[str, Any], name: str) -> tuple[Any, str]:
        key = self.key(mapping, name)
        return (mapping[key], key) if key is not None else (None, name)

    def mapping(
        self, value: Any, loc: _Loc, what: str, case: str | int | None, hint: str
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(
                f"{what} should be a JSON object, got {_describe(value)}", loc, case=case, hint=hint
            )
        return value

    def items(self, value: Any, loc: _Loc, what: str, case: str | int | None) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(
                f"{what} should be a list, got {_describe(value)}",
                loc,
                case=case,
                hint=f"write {what} as a JSON array [ ... ]",
            )
        return value

    def text(self, value: Any, loc: _Loc, what: str, case: str | int | None) -> str:
        if not isinstance(value, str):
            raise self.error(
                f"{what} should be text, got {_describe(value)}",
                loc,
                case=case,
                hint=f"write {what} as a JSON string",
            )
        return value

    # --- the whole file

    def eval_set(self, data: Any, session: Mapping[str, Any] | None) -> EvalSet:
        if isinstance(data, list):
            if data and all(isinstance(item, dict) and self.key(item, "data") for item in data):
                legacy = [self.legacy_case(item, (i,), session) for i, item in enumerate(data)]
                return self.build_set(self.stem, None, None, legacy)
            return self.build_set(self.stem, None, None, [self.legacy_test(data, session)])
        if not isinstance(data, dict):
            raise self.error(
                f"expected an ADK eval set (a JSON object), got {_describe(data)}",
                (),
                hint='an eval set is {"eval_set_id": ..., "eval_cases": [...]}',
            )
        cases_value, cases_key = self.get(data, "eval_cases")
        if cases_value is None and cases_key not in data:
            if self.key(data, "conversation") or self.key(data, "eval_id"):
                raise self.error(
                    "this is a single eval case, not an eval set",
                    (),
                    hint='wrap it: {"eval_set_id": "...", "eval_cases": [ <the case> ]}',
                )
            close = difflib.get_close_matches("eval_cases", [str(k) for k in data], n=1)
            raise self.error(
                'an ADK eval set needs "eval_cases"',
                (close[0],) if close else (),
                hint=f"rename {close[0]!r} to 'eval_cases'"
                if close
                else 'list the cases under "eval_cases"',
            )
        self.known(data, (), "an eval set", None)
        set_id, id_key = self.get(data, "eval_set_id")
        name, name_key = self.get(data, "name")
        description, description_key = self.get(data, "description")
        if session is not None:
            raise self.error(
                "an initial session file only applies to legacy test files",
                (),
                hint="put the session in each case's session_input",
            )
        cases: list[EvalCase] = []
        first: dict[str, int] = {}
        for index, item in enumerate(self.items(cases_value, (cases_key,), "eval_cases", None)):
            case = self.eval_case(item, (cases_key, index), index + 1)
            if case.id in first:
                raise self.error(
                    f"the eval_id {case.id!r} is also used by case {first[case.id]}",
                    (cases_key, index),
                    case=case.id,
                    hint="give each eval case its own eval_id",
                )
            first[case.id] = index + 1
            cases.append(case)
        return self.build_set(
            self.text(set_id, (id_key,), "eval_set_id", None) if set_id is not None else self.stem,
            self.text(name, (name_key,), "name", None) if name is not None else None,
            self.text(description, (description_key,), "description", None)
            if description is not None
            else None,
            cases,
        )

    def build_set(
        self, set_id: str, name: str | None, description: str | None, cases: list[EvalCase]
    ) -> EvalSet:
        return EvalSet(id=set_id, name=name, description=description, cases=cases)

    # --- ADK's EvalCase

    def eval_case(self, data: Any, loc: _Loc, number: int) -> EvalCase:
        item = self.mapping(
            data,
            loc,
            "an eval case",
            number,
            'write each case as {"eval_id": ..., "conversation": [...]}',
        )
        eval_id, id_key = self.get(item, "eval_id")
        label: str | int = number
        if eval_id is not None:
            label = self.text(eval_id, (*loc, id_key), "eval_id", number)
        self.known(item, loc, "an eval case", label)
        conversation, conversation_key = self.get(item, "conversation")
        if conversation is None:
            if self.get(item, "conversation_scenario")[0] is not None:
                raise self.error(
                    "conversation_scenario (ADK's user simulator) is not supported: agenteval "
                    "plays the turns written in the file",
                    (*loc, self.key(item, "conversation_scenario") or "conversation_scenario"),
                    case=label,
                    hint="write the turns as a conversation of invocations",
                )
            raise self.error(
                "the eval case has no conversation",
                loc,
                case=label,
                hint='add "conversation": [{"user_content": {"parts": [{"text": "..."}]}}]',
            )
        turns = self.items(conversation, (*loc, conversation_key), "conversation", label)
        if not turns:
            raise self.error(
                "the conversation has no invocations",
                (*loc, conversation_key),
                case=label,
                hint="add at least one invocation with a user_content",
            )
        invocations: list[Invocation] = []
        ids: list[str] = []
        intermediate: list[list[dict[str, str]]] = []
        for index, turn in enumerate(turns):
            invocation, invocation_id, responses = self.invocation(
                turn, (*loc, conversation_key, index), label
            )
            invocations.append(invocation)
            ids.append(invocation_id)
            intermediate.append(responses)
        metadata: dict[str, Any] = {}
        extra, extra_key = self.get(item, "metadata")
        if extra is not None:
            metadata.update(
                self.mapping(
                    extra, (*loc, extra_key), "metadata", label, "write metadata as a JSON object"
                )
            )
        session, session_key = self.get(item, "session_input")
        if session is not None:
            metadata[SESSION_INPUT] = self.session_input(session, (*loc, session_key), label)
        final, final_key = self.get(item, "final_session_state")
        if final is not None:
            state = self.mapping(
                final,
                (*loc, final_key),
                "final_session_state",
                label,
                "write the expected state as a JSON object",
            )
            if state:  # ADK's default is {}: nothing expected
                metadata[FINAL_SESSION_STATE] = state
        adk = _adk_metadata(ids, intermediate)
        if adk:
            metadata[ADK_METADATA] = adk
        rubrics, rubrics_key = self.get(item, "rubrics")
        tags, tags_key = self.get(item, "tags")
        case_rubrics = self.rubrics(rubrics, (*loc, rubrics_key), label) if rubrics else None
        own = item.get(AGENTEVAL_KEY)
        case_only: dict[str, Any] = {}
        if own is not None:
            invocations, case_rubrics, case_only = self.agenteval_key(
                own, (*loc, AGENTEVAL_KEY), label, invocations, case_rubrics
            )
        fields: dict[str, Any] = {
            **case_only,
            "conversation": invocations,
            "metadata": metadata,
            "rubrics": case_rubrics,
        }
        if eval_id is not None:
            fields["id"] = eval_id
        if tags is not None:
            fields["tags"] = [
                self.text(tag, (*loc, tags_key, i), "a tag", label)
                for i, tag in enumerate(self.items(tags, (*loc, tags_key), "tags", label))
            ]
        return self.validated(fields, loc, label)

    def agenteval_key(
        self,
        data: Any,
        loc: _Loc,
        label: str | int,
        turns: list[Invocation],
        rubrics: list[Rubric] | None,
    ) -> tuple[list[Invocation], list[Rubric] | None, dict[str, Any]]:
        """The turns and case rubrics with what agenteval wrote under the case's `agenteval`
        key (`AGENTEVAL_KEY`): each turn's node order and rubric weights, the case rubrics'
        weights; and the case's own fields (`CASE_ONLY`)."""
        own = self.mapping(data, loc, AGENTEVAL_KEY, label, 'write {"turns": [{...}, ...]}')
        self.known(own, loc, "the agenteval key", label)
        extensions = self.items(own.get("turns"), (*loc, "turns"), "turns", label)
        if len(extensions) not in (0, len(turns)):
            raise self.error(
                f"{len(extensions)} entries under turns for {len(turns)} invocations",
                (*loc, "turns"),
                case=label,
                hint="give one object per invocation of the conversation ({} for none)",
            )
        updated: list[Invocation] = []
        for index, (turn, extension) in enumerate(zip(turns, extensions, strict=False)):
            where = (*loc, "turns", index)
            entry = self.mapping(extension, where, "a turn", label, "write {} or an object")
            self.known(entry, where, "an agenteval turn", label)
            change: dict[str, Any] = {}
            if "expected_node_order" in entry:
                at = (*where, "expected_node_order")
                nodes = self.items(entry["expected_node_order"], at, "nodes", label)
                change["expected_node_order"] = [
                    self.text(node, (*at, i), "a node name", label) for i, node in enumerate(nodes)
                ]
            if "rubric_weights" in entry:
                change["rubrics"] = self.weighted(
                    turn.rubrics, entry["rubric_weights"], (*where, "rubric_weights"), label
                )
            updated.append(turn.model_copy(update=change) if change else turn)
        if "rubric_weights" in own:
            rubrics = self.weighted(
                rubrics or [], own["rubric_weights"], (*loc, "rubric_weights"), label
            )
        case_only: dict[str, Any] = {}
        if "case" in own:
            case_only = self.mapping(
                own["case"], (*loc, "case"), "case", label, "write the case's fields as an object"
            )
            self.known(case_only, (*loc, "case"), "an agenteval case", label)
        return updated or turns, rubrics, case_only

    def weighted(
        self, rubrics: list[Rubric], data: Any, loc: _Loc, label: str | int
    ) -> list[Rubric]:
        weights = self.items(data, loc, "rubric_weights", label)
        if len(weights) != len(rubrics) or not all(
            isinstance(w, int | float) and not isinstance(w, bool) for w in weights
        ):
            raise self.error(
                f"rubric_weights should be {len(rubrics)} numbers, one per rubric",
                loc,
                case=label,
                hint="give each rubric its weight, in the rubrics' order",
            )
        return [
            r.model_copy(update={"weight": float(w)}) for r, w in zip(rubrics, weights, strict=True)
        ]

    def validated(self, fields: dict[str, Any], loc: _Loc, label: str | int) -> EvalCase:
        try:
            case = EvalCase(**fields)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = tuple(problem["loc"])
            raise self.error(
                f"not a valid case: {problem['msg']}",
                loc,
                case=label,
                hint=f"check {_dotted(where)}" if where else None,
            ) from exc
        # As for every case file: a case past `MAX_DEPTH` levels would be stored cut, and an
        # expected value cut short can compare equal to a wrong one when the run is rescored.
        # The usual case is told in a few C calls (`jsonsafe`'s look before pydantic writes).
        cuts = model_json(case).cuts
        if cuts:
            field, _, _ = cuts[0].rpartition(": ")
            raise DatasetError(
                f"nested more than {MAX_DEPTH} levels deep",
                file=self.file,
                line=self.line_of(loc),
                case=label,
                field=field or None,
                hint=f"flatten the data: a case keeps at most {MAX_DEPTH} levels "
                "(the case is level 1)",
            )
        return case

    def session_input(self, data: Any, loc: _Loc, label: str | int) -> dict[str, Any]:
        session = self.mapping(
            data,
            loc,
            "session_input",
            label,
            'write {"app_name": ..., "user_id": ..., "state": {...}}',
        )
        self.known(session, loc, "session_input", label)
        result: dict[str, Any] = {}
        for name in ("app_name", "user_id", "session_id"):
            value, key = self.get(session, name)
            if value is not None:
                result[name] = self.text(value, (*loc, key), name, label)
        state, state_key = self.get(session, "state")
        result["state"] = (
            self.mapping(
                state, (*loc, state_key), "state", label, "write the session state as a JSON object"
            )
            if state is not None
            else {}
        )
        known = {k for n in ("app_name", "user_id", "session_id", "state") for k in (n, camel(n))}
        result.update({k: v for k, v in session.items() if k not in known})
        return result

    # --- ADK's Invocation

    def invocation(
        self, data: Any, loc: _Loc, label: str | int
    ) -> tuple[Invocation, str, list[dict[str, str]]]:
        turn = self.mapping(
            data,
            loc,
            "an invocation",
            label,
            'write {"user_content": {"parts": [{"text": "..."}]}, ...}',
        )
        self.known(turn, loc, "an invocation", label)
        user, user_key = self.get(turn, "user_content")
        if user is None:
            raise self.error(
                "the invocation has no user_content",
                loc,
                case=label,
                hint='add "user_content": {"role": "user", "parts": [{"text": "..."}]}',
            )
        question = self.content_text(user, (*loc, user_key), "user_content", label)
        if question is None:
            raise self.error(
                "user_content has no text part: agenteval sends the agent text turns",
                (*loc, user_key),
                case=label,
                hint='give the user turn a {"text": "..."} part',
            )
        final, final_key = self.get(turn, "final_response")
        answer = (
            self.content_text(final, (*loc, final_key), "final_response", label)
            if final is not None
            else None
        )
        calls: list[ToolCall] | None = None
        responses: list[dict[str, str]] = []
        steps, steps_key = self.get(turn, "intermediate_data")
        if steps is not None:
            calls, responses = self.intermediate_data(steps, (*loc, steps_key), label)
        invocation_id, id_key = self.get(turn, "invocation_id")
        rubrics, rubrics_key = self.get(turn, "rubrics")
        nodes, nodes_key = self.get(turn, "expected_node_order")
        # Only what the file states is set: a turn without tool uses expects nothing of the
        # tools (the criteria tell "not stated" from "stated empty").
        fields: dict[str, Any] = {"input": question}
        if answer is not None:
            fields["expected_final_response"] = answer
        if calls is not None:
            fields["expected_tool_trajectory"] = calls
        if nodes is not None:
            fields["expected_node_order"] = [
                self.text(node, (*loc, nodes_key, i), "a node name", label)
                for i, node in enumerate(self.items(nodes, (*loc, nodes_key), "nodes", label))
            ]
        if rubrics is not None:
            fields["rubrics"] = self.rubrics(rubrics, (*loc, rubrics_key), label)
        invocation = Invocation(**fields)
        return (
            invocation,
            self.text(invocation_id, (*loc, id_key), "invocation_id", label)
            if invocation_id is not None
            else "",
            responses,
        )

    def content_text(self, data: Any, loc: _Loc, what: str, label: str | int) -> str | None:
        """The text of a genai `Content`: its text parts (thoughts left out), one per line."""
        if isinstance(data, str):
            return data or None
        content = self.mapping(
            data, loc, what, label, f'write {what} as {{"role": ..., "parts": [{{"text": "..."}}]}}'
        )
        self.known(content, loc, "a content", label)
        parts, parts_key = self.get(content, "parts")
        texts: list[str] = []
        for index, part in enumerate(self.items(parts, (*loc, parts_key), "parts", label)):
            piece = self.mapping(
                part,
                (*loc, parts_key, index),
                "a part",
                label,
                'write each part as {"text": "..."}',
            )
            self.known(piece, (*loc, parts_key, index), "a part", label)
            if piece.get("thought") is True:
                continue
            text = piece.get("text")
            if text is not None:
                texts.append(self.text(text, (*loc, parts_key, index, "text"), "text", label))
        joined = "\n".join(t for t in texts if t)
        return joined or None

    def intermediate_data(
        self, data: Any, loc: _Loc, label: str | int
    ) -> tuple[list[ToolCall] | None, list[dict[str, str]]]:
        """The expected tool calls (None when the data states none) and intermediate texts."""
        steps = self.mapping(
            data,
            loc,
            "intermediate_data",
            label,
            'write {"tool_uses": [...], "intermediate_responses": [...]}',
        )
        self.known(steps, loc, "intermediate_data", label)
        events, events_key = self.get(steps, "invocation_events")
        if events is not None:
            return self.invocation_events(events, (*loc, events_key), label)
        uses, uses_key = self.get(steps, "tool_uses")
        calls = (
            [
                self.function_call(use, (*loc, uses_key, i), label)
                for i, use in enumerate(self.items(uses, (*loc, uses_key), "tool_uses", label))
            ]
            if uses_key in steps
            else None
        )
        results, results_key = self.get(steps, "tool_responses")
        for i, result in enumerate(
            self.items(results, (*loc, results_key), "tool_responses", label)
        ):
            self.attach_response(calls or [], result, (*loc, results_key, i), label)
        said, said_key = self.get(steps, "intermediate_responses")
        responses: list[dict[str, str]] = []
        for i, entry in enumerate(
            self.items(said, (*loc, said_key), "intermediate_responses", label)
        ):
            where = (*loc, said_key, i)
            if not (isinstance(entry, list) and len(entry) == 2):
                raise self.error(
                    f"an intermediate response should be a pair [author, parts], got "
                    f"{_describe(entry)}",
                    where,
                    case=label,
                    hint='write ["sub_agent_name", [{"text": "..."}]]',
                )
            author = self.text(entry[0], (*where, 0), "the author", label)
            text = self.content_text({"parts": entry[1]}, (*where, 1), "parts", label)
            if text:
                responses.append({"author": author, "text": text})
        return calls, responses

    def invocation_events(
        self, data: Any, loc: _Loc, label: str | int
    ) -> tuple[list[ToolCall], list[dict[str, str]]]:
        calls: list[ToolCall] = []
        responses: list[dict[str, str]] = []
        for i, event in enumerate(self.items(data, loc, "invocation_events", label)):
            where = (*loc, i)
            entry = self.mapping(
                event,
                where,
                "an invocation event",
                label,
                'write {"author": ..., "content": {"parts": [...]}}',
            )
            self.known(entry, where, "an invocation event", label)
            author = entry.get("author")
            content, content_key = self.get(entry, "content")
            if content is None:
                continue
            body = self.mapping(
                content, (*where, content_key), "content", label, 'write {"parts": [...]}'
            )
            self.known(body, (*where, content_key), "a content", label)
            parts, parts_key = self.get(body, "parts")
            for j, part in enumerate(
                self.items(parts, (*where, content_key, parts_key), "parts", label)
            ):
                at = (*where, content_key, parts_key, j)
                piece = self.mapping(part, at, "a part", label, 'write {"text": "..."}')
                self.known(piece, at, "a part", label)
                call, call_key = self.get(piece, "function_call")
                result, result_key = self.get(piece, "function_response")
                if call is not None:
                    calls.append(self.function_call(call, (*at, call_key), label))
                elif result is not None:
                    self.attach_response(calls, result, (*at, result_key), label)
                elif (
                    isinstance(piece.get("text"), str)
                    and piece["text"]
                    and not piece.get("thought")
                ):
                    responses.append({"author": str(author or ""), "text": piece["text"]})
        return calls, responses

    def function_call(self, data: Any, loc: _Loc, label: str | int) -> ToolCall:
        use = self.mapping(
            data, loc, "a tool use", label, 'write {"name": "tool_name", "args": {...}}'
        )
        self.known(use, loc, "a tool use", label)
        name, name_key = self.get(use, "name")
        if name is None:
            raise self.error(
                "the tool use has no name", loc, case=label, hint='add "name": "<the tool\'s name>"'
            )
        args, args_key = self.get(use, "args")
        call_id, _ = self.get(use, "id")
        return ToolCall(
            name=self.text(name, (*loc, name_key), "the tool name", label),
            arguments=self.mapping(
                args, (*loc, args_key), "args", label, "write the arguments as a JSON object"
            )
            if args is not None
            else {},
            id=call_id if isinstance(call_id, str) and call_id else None,
        )

    def attach_response(
        self, calls: list[ToolCall], data: Any, loc: _Loc, label: str | int
    ) -> None:
        """Set the result of the call a tool response answers: by id, else the first call of
        that name still without a result."""
        response = self.mapping(
            data, loc, "a tool response", label, 'write {"id": ..., "name": ..., "response": {...}}'
        )
        self.known(response, loc, "a tool response", label)
        call_id, name, result = response.get("id"), response.get("name"), response.get("response")
        target = next((c for c in calls if call_id and c.id == call_id), None)
        if target is None:
            target = next((c for c in calls if c.name == name and c.result is None), None)
        if target is not None:
            target.result = result

    def rubrics(self, data: Any, loc: _Loc, label: str | int) -> list[Rubric]:
        rubrics: list[Rubric] = []
        for i, entry in enumerate(self.items(data, loc, "rubrics", label)):
            where = (*loc, i)
            if isinstance(entry, str):
                rubrics.append(Rubric(content=entry))
                continue
            rubric = self.mapping(
                entry,
                where,
                "a rubric",
                label,
                'write {"rubric_id": ..., "rubric_content": {"text_property": "..."}}',
            )
            self.known(rubric, where, "a rubric", label)
            content, content_key = self.get(rubric, "rubric_content")
            text: Any = None
            if isinstance(content, dict):
                self.known(content, (*where, content_key), "rubric_content", label)
                text, _ = self.get(content, "text_property")
            elif isinstance(content, str):
                text = content
            if not isinstance(text, str) or not text.strip():
                raise self.error(
                    "the rubric has no rubric_content.text_property",
                    (*where, content_key),
                    case=label,
                    hint='write "rubric_content": {"text_property": "<what the answer must do>"}',
                )
            rubric_id, id_key = self.get(rubric, "rubric_id")
            weight = rubric.get("weight", 1.0)
            rubrics.append(
                Rubric(
                    rubric_id=self.text(rubric_id, (*where, id_key), "rubric_id", label)
                    if rubric_id is not None
                    else "",
                    content=text,
                    weight=float(weight) if isinstance(weight, int | float) else 1.0,
                )
            )
        return rubrics

    # --- the legacy formats

    def legacy_case(
        self, data: dict[str, Any], loc: _Loc, session: Mapping[str, Any] | None
    ) -> EvalCase:
        name, name_key = self.get(data, "name")
        label: str | int = loc[-1] + 1 if isinstance(loc[-1], int) else self.stem
        case_id = self.text(name, (*loc, name_key), "name", label) if name is not None else None
        self.known(data, loc, "a legacy eval case", case_id or label)
        own, own_key = self.get(data, "initial_session")
        turns, turns_key = self.get(data, "data")
        own_session = (
            self.mapping(
                own,
                (*loc, own_key),
                "initial_session",
                case_id or label,
                'write {"state": {...}, "app_name": ..., "user_id": ...}',
            )
            if own
            else session
        )
        return self.turns(turns, (*loc, turns_key), case_id, own_session)

    def legacy_test(self, data: list[Any], session: Mapping[str, Any] | None) -> EvalCase:
        return self.turns(data, (), self.stem, session)

    def turns(
        self,
        data: Any,
        loc: _Loc,
        case_id: str | None,
        session: Mapping[str, Any] | None,
    ) -> EvalCase:
        label: str | int = case_id or self.stem
        turns = self.items(data, loc, "the turns", label)
        if not turns:
            raise self.error(
                "no turns: a legacy test file is a list of {query, expected_tool_use, reference}",
                loc,
                case=label,
                hint='add a turn: [{"query": "...", "expected_tool_use": [], "reference": "..."}]',
            )
        invocations: list[Invocation] = []
        intermediate: list[list[dict[str, str]]] = []
        for index, turn in enumerate(turns):
            invocation, responses = self.legacy_turn(turn, (*loc, index), label, index + 1)
            invocations.append(invocation)
            intermediate.append(responses)
        metadata: dict[str, Any] = {}
        if session:
            metadata[SESSION_INPUT] = self.session_input(dict(session), (), label)
        adk = _adk_metadata([], intermediate)
        if adk:
            metadata[ADK_METADATA] = adk
        fields: dict[str, Any] = {"conversation": invocations, "metadata": metadata}
        if case_id is not None:
            fields["id"] = case_id
        return self.validated(fields, loc, label)

    def legacy_turn(
        self, data: Any, loc: _Loc, label: str | int, number: int
    ) -> tuple[Invocation, list[dict[str, str]]]:
        turn = self.mapping(
            data,
            loc,
            f"turn {number}",
            label,
            'write each turn as {"query": "...", "expected_tool_use": [...], "reference": "..."}',
        )
        self.known(turn, loc, "a legacy turn", label)
        if "query" not in turn:
            raise self.error(
                f"turn {number} has no query",
                loc,
                case=label,
                hint='add "query": "<what the user says>"',
            )
        query = self.text(turn["query"], (*loc, "query"), "query", label)
        reference = turn.get("reference")
        calls: list[ToolCall] = []
        for i, use in enumerate(
            self.items(
                turn.get("expected_tool_use"),
                (*loc, "expected_tool_use"),
                "expected_tool_use",
                label,
            )
        ):
            where = (*loc, "expected_tool_use", i)
            item = self.mapping(
                use,
                where,
                "an expected tool use",
                label,
                'write {"tool_name": "...", "tool_input": {...}}',
            )
            self.known(item, where, "a legacy tool use", label)
            if "tool_name" not in item:
                raise self.error(
                    "the expected tool use has no tool_name",
                    where,
                    case=label,
                    hint='add "tool_name": "<the tool\'s name>"',
                )
            inputs = item.get("tool_input")
            calls.append(
                ToolCall(
                    name=self.text(item["tool_name"], (*where, "tool_name"), "tool_name", label),
                    arguments=self.mapping(
                        inputs,
                        (*where, "tool_input"),
                        "tool_input",
                        label,
                        "write the arguments as a JSON object",
                    )
                    if inputs is not None
                    else {},
                    result=item.get("mock_tool_output"),
                )
            )
        responses: list[dict[str, str]] = []
        for i, said in enumerate(
            self.items(
                turn.get("expected_intermediate_agent_responses"),
                (*loc, "expected_intermediate_agent_responses"),
                "expected_intermediate_agent_responses",
                label,
            )
        ):
            where = (*loc, "expected_intermediate_agent_responses", i)
            entry = self.mapping(
                said,
                where,
                "an intermediate response",
                label,
                'write {"author": "...", "text": "..."}',
            )
            self.known(entry, where, "a legacy intermediate response", label)
            responses.append(
                {
                    "author": str(entry.get("author", "")),
                    "text": self.text(entry.get("text"), (*where, "text"), "text", label),
                }
            )
        fields: dict[str, Any] = {"input": query}
        answer = (
            self.text(reference, (*loc, "reference"), "reference", label) if reference else None
        )
        if answer:
            fields["expected_final_response"] = answer
        if "expected_tool_use" in turn:
            fields["expected_tool_trajectory"] = calls
        return Invocation(**fields), responses


# Keys of one ADK format written in the other: the fix is a different place, not a spelling.
_OTHER_FORMAT = {
    ("an invocation", "expected_tool_use"): "expected_tool_use belongs to ADK's legacy test "
    'format; in an eval set write the expected calls as "intermediate_data": {"tool_uses": '
    '[{"name": ..., "args": {...}}]} (an empty list expects no call)',
    ("an invocation", "reference"): "reference belongs to ADK's legacy test format; in an eval "
    'set write the expected answer as "final_response": {"parts": [{"text": "..."}]}',
    ("an invocation", "query"): "query belongs to ADK's legacy test format; in an eval set "
    'write the user\'s turn as "user_content": {"parts": [{"text": "..."}]}',
}


def _adk_metadata(ids: list[str], intermediate: list[list[dict[str, str]]]) -> dict[str, Any]:
    adk: dict[str, Any] = {}
    if any(ids):
        adk["invocation_ids"] = ids
    if any(intermediate):
        adk["intermediate_responses"] = intermediate
    return adk


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return type(value).__name__


# ---------------------------------------------------------------------------------------------
# Writing


def _content(text: str, role: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _rubric(rubric: Rubric) -> dict[str, Any]:
    # ADK's Rubric takes no weight: a weight other than 1 goes to the case's `agenteval` key.
    return {"rubric_id": rubric.rubric_id, "rubric_content": {"text_property": rubric.content}}


def _weights(rubrics: Sequence[Rubric]) -> list[float] | None:
    """The rubrics' weights, when one is not 1 (ADK's Rubric has no weight)."""
    return [r.weight for r in rubrics] if any(r.weight != 1.0 for r in rubrics) else None


def _response(result: Any) -> dict[str, Any]:
    """A tool result as ADK's `FunctionResponse.response`, an object: a result that is not one
    is written `{"result": value}`, as ADK's own tools return it."""
    return result if isinstance(result, dict) else {"result": result}


def _session(session: Any) -> Any:
    """ADK's `SessionInput` requires `app_name` and `user_id`: one not given is written "", as
    ADK's own converter of legacy sessions does."""
    if not isinstance(session, dict):
        return session
    return {"app_name": "", "user_id": "", **session}


def _turns_of(case: EvalCase, file: str) -> list[Invocation]:
    if case.conversation:
        return case.conversation
    if isinstance(case.input, str):
        fields: dict[str, Any] = {"input": case.input}
        if case.expected_output is not None:
            fields["expected_final_response"] = case.expected_output
        if case.expected_trajectory is not None:
            fields["expected_tool_trajectory"] = [
                ToolCall(name=call.name, arguments=call.arguments)
                for call in case.expected_trajectory
            ]
        return [Invocation(**fields)]
    raise DatasetError(
        "this case cannot be written as an ADK eval case: it has no text input or conversation",
        file=file,
        case=case.id,
        hint="ADK eval cases are conversations of text turns",
    )


def _invocation(turn: Invocation, invocation_id: str, said: list[dict[str, str]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if invocation_id:
        data["invocation_id"] = invocation_id
    data["user_content"] = _content(turn.input or "", "user")
    if turn.expected_final_response is not None:
        data["final_response"] = _content(turn.expected_final_response, "model")
    steps: dict[str, Any] = {}
    if "expected_tool_trajectory" in turn.model_fields_set or turn.expected_tool_trajectory:
        steps["tool_uses"] = [
            {**({"id": call.id} if call.id else {}), "name": call.name, "args": call.arguments}
            for call in turn.expected_tool_trajectory
        ]
    responses = [
        {
            **({"id": call.id} if call.id else {}),
            "name": call.name,
            "response": _response(call.result),
        }
        for call in turn.expected_tool_trajectory
        if call.result is not None
    ]
    if responses:
        steps["tool_responses"] = responses
    if said:
        steps["intermediate_responses"] = [[r["author"], [{"text": r["text"]}]] for r in said]
    if steps:
        data["intermediate_data"] = steps
    if turn.rubrics:
        data["rubrics"] = [_rubric(r) for r in turn.rubrics]
    return data


def _turn_extension(turn: Invocation) -> dict[str, Any]:
    """What ADK's Invocation cannot hold (it refuses extra keys), for the case's `agenteval`
    key: the expected node order and the rubrics' weights."""
    extension: dict[str, Any] = {}
    if "expected_node_order" in turn.model_fields_set or turn.expected_node_order:
        extension["expected_node_order"] = list(turn.expected_node_order)
    weights = _weights(turn.rubrics)
    if weights is not None:
        extension["rubric_weights"] = weights
    return extension


def eval_set_to_adk(eval_set: EvalSet, *, file: str = "<eval set>") -> dict[str, Any]:
    """The set as ADK's `EvalSet` JSON (see `EvalSet.to_adk`)."""
    cases: list[dict[str, Any]] = []
    for case in eval_set.cases:
        metadata = dict(case.metadata)
        session = metadata.pop(SESSION_INPUT, None)
        final = metadata.pop(FINAL_SESSION_STATE, None)
        adk = metadata.pop(ADK_METADATA, None) or {}
        turns = _turns_of(case, file)
        ids: list[str] = list(adk.get("invocation_ids") or [])
        said: list[list[dict[str, str]]] = list(adk.get("intermediate_responses") or [])
        data: dict[str, Any] = {
            "eval_id": case.id,
            "conversation": [
                _invocation(
                    turn,
                    ids[i] if i < len(ids) else "",
                    said[i] if i < len(said) else [],
                )
                for i, turn in enumerate(turns)
            ],
        }
        if session is not None:
            data["session_input"] = _session(session)
        if final:
            data["final_session_state"] = final
        if case.rubrics:
            data["rubrics"] = [_rubric(r) for r in case.rubrics]
        # ADK keeps an eval case's extra keys: agenteval's own data goes there.
        if case.tags:
            data["tags"] = list(case.tags)
        if metadata:
            data["metadata"] = metadata
        extension: dict[str, Any] = {}
        turn_extensions = [_turn_extension(turn) for turn in turns]
        if any(turn_extensions):
            extension["turns"] = turn_extensions
        weights = _weights(case.rubrics or [])
        if weights is not None:
            extension["rubric_weights"] = weights
        own = case.model_dump(mode="json", include=set(CASE_ONLY), exclude_none=True)
        if own:
            extension["case"] = own
        if extension:
            data[AGENTEVAL_KEY] = extension
        cases.append(data)
    result: dict[str, Any] = {"eval_set_id": eval_set.id}
    if eval_set.name is not None:
        result["name"] = eval_set.name
    if eval_set.description is not None:
        result["description"] = eval_set.description
    result["eval_cases"] = cases
    return result


def write_adk_file(eval_set: EvalSet, path: str | Path) -> Path:
    """Write the set as an ADK eval set JSON file and return its path."""
    target = Path(path)
    file = str(target)
    text = json.dumps(eval_set_to_adk(eval_set, file=file), indent=2, ensure_ascii=False) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DatasetError(
            f"cannot write the file: {exc.strerror or exc}",
            file=file,
            hint="check that the folder exists and is writable",
        ) from exc
    return target
