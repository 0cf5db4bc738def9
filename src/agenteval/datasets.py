"""Reading and writing case files, with one clear error for every mistake in them.

`load_cases` reads a file of `EvalCase`s; the format comes from the extension:

- **YAML** (`.yaml`, `.yml`) and **JSON** (`.json`): a list of cases, or a mapping whose only
  key is `cases:`, holding that list. In YAML the text fields `id`, `input`, `expected_output`
  and `context` are read as written: `expected_output: 1.50` is the text "1.50", not the number
  1.5, and `input: yes` is the text "yes".
- **JSONL** (`.jsonl`): one JSON object (one case) per line; blank lines are skipped.
- **CSV** (`.csv`, comma-separated, UTF-8): a header row, then one row per case; blank rows are
  skipped. The columns are

  - text: `id`, `input`, `expected_output`, `context`;
  - a whole number: `max_tool_calls`;
  - lists: `expected_tools` (or its other name `expected_tool_calls`), `expected_trajectory`
    (tool names, or a JSON array of `{"name": ..., "arguments": {...}}` objects),
    `relevant_docs`, `must_not_contain`, `keywords`, `tags`, `rubrics`. A list cell is either a
    JSON array (`["a", "b"]`) or items separated by `|` (`a|b`); each item is stripped of
    surrounding spaces;
  - `metadata.<key>`: one column per metadata key; the cell's text becomes `metadata[<key>]`.

  An empty cell leaves its field unset. Cases with a `conversation` or an `agent_trace` need a
  YAML, JSON or JSONL file.

Every mistake raises one `DatasetError` naming the file, the line, the case (its `id` when the
file gives one, else its 1-based position, as in "case 3"), the field (a dotted path such as
`agent_trace.0.tool_calls.1.arguments`, whose list positions count from 0 as in the file's
data), what is wrong and, as a hint, how to fix it. Only the first mistake in the file is
reported. For example::

    cases.yaml:14, case 'refund-policy', field 'expeted_output': unknown field — did you mean 'expected_output'?
      hint: rename 'expeted_output' to 'expected_output'

`dump_cases` writes cases back as YAML, JSON or JSONL, so that reading the file gives the same
cases again; `case_file_schema` is the JSON Schema of a case file.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import csv
import dataclasses
import difflib
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Protocol, get_args

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from agenteval.case import EvalCase, ExpectedCall, Rubric
from agenteval.errors import DatasetError
from agenteval.expansion import too_many_values
from agenteval.jsonsafe import MAX_DEPTH, MAX_VALUES
from agenteval.suggestions import meant, normalised
from agenteval.yaml_syntax import explain_yaml_error

__all__ = ["case_file_schema", "dump_cases", "load_cases"]

_READ_FORMATS = {
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".jsonl": "jsonl",
    ".csv": "csv",
}
_WRITE_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonl": "jsonl"}

_NO_CASES_HINTS = {
    "yaml": "add cases as a list of mappings, e.g. `- input: What is 2 + 2?`",
    "json": 'add cases as a list of objects, e.g. [{"input": "What is 2 + 2?"}]',
    "jsonl": 'add one case per line, e.g. {"input": "What is 2 + 2?"}',
    "csv": "add a header row such as `id,input,expected_output` and one row per case",
}

# The fields that name what the agent is given; a case needs one of them.
_INPUT_FIELDS = ("input", "conversation", "agent_trace")

# In YAML, plain scalars of these fields are kept as the text written (`id: 007` is "007").
_YAML_TEXT_FIELDS = frozenset({"id", "input", "expected_output", "context"})
_YAML_STR = "tag:yaml.org,2002:str"
_YAML_IMPLICIT = frozenset(
    {
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:timestamp",
    }
)
_YAML_MERGE = "tag:yaml.org,2002:merge"

_CSV_TEXT = ("id", "input", "expected_output", "context")
_CSV_NUMBERS = ("max_tool_calls",)
_CSV_LISTS = (
    "expected_tools",
    "expected_tool_calls",
    "expected_trajectory",
    "relevant_docs",
    "must_not_contain",
    "keywords",
    "tags",
    "rubrics",
)
_CSV_COLUMNS = (*_CSV_TEXT, *_CSV_NUMBERS, *_CSV_LISTS)
_METADATA_PREFIX = "metadata."

# How deep the maps of where things are in a file go: a case sits at most three levels into its
# document (`cases:` mapping, list, case), and nothing past a case's `MAX_DEPTH` levels is
# pointed at (such a case is refused). Bounded, a file nested thousands deep cannot exhaust
# the stack.
_TREE_DEPTH = MAX_DEPTH + 4

_Loc = tuple[str | int, ...]


# ---------------------------------------------------------------------------------------------
# Public API


def load_cases(path: str | Path) -> list[EvalCase]:
    """The cases in a YAML, JSON, JSONL or CSV case file, in file order.

    Google ADK eval sets (`*.evalset.json`, `*.test.json`, or a `.json` file holding an ADK
    eval set) are read as ADK writes them (see `agenteval.evalset.adk`).

    Raises `DatasetError` for the first mistake in the file: a missing or unreadable file, a
    syntax error, a case that is not valid, or two cases with the same id.
    """
    file = str(path)
    source = Path(path)
    # Google ADK eval sets have a reader of their own: `*.evalset.json`, `*.test.json`, and a
    # `.json` file holding ADK's shape (`is_adk_file`, the detection `EvalSet.load` uses too).
    from agenteval.evalset.adk import is_adk_file, load_adk_cases

    if is_adk_file(source):
        return load_adk_cases(source)
    fmt = _format_of(source, file, _READ_FORMATS, "read")
    text = _read_text(source, file)
    if fmt == "yaml":
        records = _yaml_records(text, file)
    elif fmt == "json":
        records = _json_records(text, file)
    elif fmt == "jsonl":
        records = _jsonl_records(text, file)
    else:
        records = _csv_records(text, file)

    cases: list[EvalCase] = []
    seen: dict[str, _Record] = {}
    for record in records:
        case = _validate(record, file)
        earlier = seen.get(case.id)
        if earlier is not None:
            raise _duplicate_id(case, earlier, record, file)
        seen[case.id] = record
        cases.append(case)
    if not cases:
        raise _no_cases(file, fmt)
    return cases


def dump_cases(cases: Iterable[EvalCase], path: str | Path) -> Path:
    """Write `cases` to a YAML, JSON or JSONL file (by extension) and return its path.

    Fields left at their defaults are omitted, and so are ids derived from the content (reading
    the file derives them again), so `load_cases(dump_cases(cases, path)) == cases` for any
    non-empty list of cases with distinct ids. Parent folders are created as needed.
    """
    file = str(path)
    target = Path(path)
    fmt = _format_of(target, file, _WRITE_FORMATS, "write")
    records = [_case_record(case, file) for case in cases]
    if fmt == "yaml":
        text = yaml.dump(
            records, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True, width=100
        )
    elif fmt == "json":
        text = json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    else:
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
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


def case_file_schema() -> dict[str, Any]:
    """The JSON Schema of a case file: a list of cases, or a mapping with a `cases:` list."""
    schema = TypeAdapter(_CaseList | CaseFile).json_schema()
    definitions: dict[str, Any] = schema.get("$defs", {})
    for model in _models_under(EvalCase):
        definition = definitions.get(model.__name__)
        if definition is None:
            continue
        properties = definition.get("properties", {})
        for name, info in model.model_fields.items():
            prop = properties.get(name)
            if prop is None:
                continue
            for other in _other_names(name, info.validation_alias):
                if other not in properties:
                    properties[other] = {**prop, "description": f"Another name for `{name}`."}
    if "EvalCase" in definitions:
        definitions["EvalCase"]["anyOf"] = [{"required": [field]} for field in _INPUT_FIELDS]
    for model, shorthand in ((ExpectedCall, "The tool's name alone."), (Rubric, "The text alone.")):
        definition = definitions.get(model.__name__)
        if definition is not None:
            definitions[model.__name__] = {
                "anyOf": [{"type": "string", "description": shorthand}, definition]
            }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agenteval case file",
        "description": "A list of cases, or a mapping with a `cases:` list.",
        **schema,
    }


# ---------------------------------------------------------------------------------------------
# The case file's shape, for the schema


_CaseList = Annotated[list[EvalCase], Field(min_length=1)]


class CaseFile(BaseModel):
    """A case file written as a mapping with a `cases:` list."""

    model_config = ConfigDict(extra="forbid")

    cases: _CaseList


# ---------------------------------------------------------------------------------------------
# Where things are in the file


@dataclasses.dataclass
class _Node:
    """A value in the file: the line it starts on, the line of its key, and its children."""

    line: int
    key_line: int | None = None
    children: dict[str, _Node] | list[_Node] | None = None

    @property
    def shown_line(self) -> int:
        return self.key_line if self.key_line is not None else self.line


def _line_in(root: _Node, path: _Loc) -> int:
    """The line of the value at `path`, or of the deepest part of `path` the file has."""
    node = root
    for step in path:
        child: _Node | None = None
        if isinstance(node.children, dict):
            child = node.children.get(str(step))
        elif isinstance(node.children, list) and _is_index(step, node.children):
            child = node.children[int(step)]
        if child is None:
            break
        node = child
    return node.shown_line


class _Where(Protocol):
    def line(self, path: _Loc) -> int | None:
        """The line of the field at `path` inside the case."""


@dataclasses.dataclass
class _FixedLine:
    """A case that sits on one line (JSONL) or one row (CSV)."""

    at: int | None

    def line(self, path: _Loc) -> int | None:
        return self.at


@dataclasses.dataclass
class _InTree:
    """A case inside a YAML or JSON document, whose node tree is built when first needed."""

    tree: Callable[[], _Node]
    root: _Loc

    def line(self, path: _Loc) -> int | None:
        return _line_in(self.tree(), (*self.root, *path))


def _cached(build: Callable[[], _Node]) -> Callable[[], _Node]:
    built: list[_Node] = []

    def get() -> _Node:
        if not built:
            try:
                built.append(build())
            except RecursionError:  # too deep to map; every field then points at line 1
                built.append(_Node(1))
        return built[0]

    return get


@dataclasses.dataclass
class _Twice:
    """A key given twice in one mapping: its path, its line, and the line it was first given on."""

    path: _Loc
    line: int | None
    first_line: int | None

    def relative_to(self, root: _Loc) -> _Twice:
        return _Twice(self.path[len(root) :], self.line, self.first_line)


@dataclasses.dataclass
class _Record:
    """One case as read from the file, before validation."""

    number: int  # 1-based position among the file's cases
    data: Any
    where: _Where
    fmt: str
    twice: _Twice | None = None  # a key the case gives twice

    @property
    def label(self) -> str | int:
        """How messages name the case: its id when the file gives one, else its position."""
        if isinstance(self.data, dict):
            given = self.data.get("id")
            if isinstance(given, str) and given.strip():
                return given
        return self.number


# ---------------------------------------------------------------------------------------------
# Reading the file


def _format_of(path: Path, file: str, formats: dict[str, str], verb: str) -> str:
    suffix = path.suffix.lower()
    if suffix in formats:
        return formats[suffix]
    names = list(formats)
    supported = ", ".join(names[:-1]) + " or " + names[-1]
    message = (
        f"cannot {verb} '{path.suffix}' files"
        if path.suffix
        else "cannot tell the file's format: it has no extension"
    )
    raise DatasetError(message, file=file, hint=f"use a case file ending in {supported}")


def _read_text(path: Path, file: str) -> str:
    if path.is_dir():
        raise DatasetError(
            "this is a folder, not a case file", file=file, hint="give the path of a case file"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise DatasetError("file not found", file=file, hint=_missing_file_hint(path)) from exc
    except PermissionError as exc:
        raise DatasetError(
            "cannot read the file: permission denied",
            file=file,
            hint="make the file readable (e.g. `chmod u+r`) or run as a user who may read it",
        ) from exc
    except OSError as exc:
        raise DatasetError(
            f"cannot read the file: {exc.strerror or exc}",
            file=file,
            hint="check that the path names a readable file",
        ) from exc
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"  # spreadsheet programs save "Unicode text" this way
    else:
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DatasetError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {column} is not valid UTF-8",
            file=file,
            line=line,
            hint="save the file with UTF-8 encoding",
        ) from exc


def _missing_file_hint(path: Path) -> str:
    folder = path.parent
    if not folder.is_dir():
        return f"the folder '{folder}' does not exist either; relative paths start at {Path.cwd()}"
    try:
        nearby = [child.name for child in folder.iterdir() if child.suffix.lower() in _READ_FORMATS]
    except OSError:
        nearby = []
    close = difflib.get_close_matches(path.name, nearby, n=1, cutoff=0.8)
    if close:
        return f"did you mean '{folder / close[0]}'?"
    return f"check the path; relative paths start at {Path.cwd()}"


def _no_cases(file: str, fmt: str) -> DatasetError:
    return DatasetError("no cases in the file", file=file, hint=_NO_CASES_HINTS[fmt])


def _case_items(
    data: Any, file: str, fmt: str, line_of: Callable[[_Loc], int | None]
) -> tuple[list[Any], _Loc]:
    """The list of cases in a YAML or JSON document, and where that list is in the document."""
    if data is None:
        raise _no_cases(file, fmt)
    if isinstance(data, list):
        if not data:
            raise _no_cases(file, fmt)
        return data, ()
    if not isinstance(data, dict):
        raise DatasetError(
            f"expected a list of cases or a mapping with a `cases:` list, got {_describe(data)}",
            file=file,
            line=line_of(()),
            hint=_NO_CASES_HINTS[fmt],
        )
    if "cases" not in data:
        keys = [str(key) for key in data]
        if set(keys) & set(_accepted_names(EvalCase)):
            raise DatasetError(
                "expected a list of cases or a mapping with a `cases:` list, got a single case",
                file=file,
                line=line_of(()),
                hint="put the case in a list (start it with `- ` in YAML, wrap it in [ ] in JSON)",
            )
        close = difflib.get_close_matches("cases", keys, n=1, cutoff=0.75)
        hint = (
            f"rename '{close[0]}' to 'cases'"
            if close
            else "put the cases under a `cases:` key, or make the file a list of cases"
        )
        shown = ", ".join(repr(key) for key in keys[:5])
        raise DatasetError(
            "expected a list of cases or a mapping with a `cases:` list, "
            f"got a mapping with the keys {shown}",
            file=file,
            line=line_of((keys[0],)) if keys else line_of(()),
            hint=hint,
        )
    for key in data:
        if key != "cases":
            raise DatasetError(
                f"unknown top-level key {str(key)!r}; a case file's mapping holds only `cases:`",
                file=file,
                line=line_of((str(key),)),
                field=str(key),
                hint=f"remove {str(key)!r}, or move it into a case's `metadata`",
            )
    cases = data["cases"]
    if cases is None or cases == []:
        raise _no_cases(file, fmt)
    if not isinstance(cases, list):
        raise DatasetError(
            f"`cases:` should hold a list of cases, got {_describe(cases)}",
            file=file,
            line=line_of(("cases",)),
            field="cases",
            hint=_NO_CASES_HINTS[fmt],
        )
    return cases, ("cases",)


def _split_duplicate(
    duplicate: _Twice | None, root: _Loc, count: int, file: str
) -> dict[int, _Twice]:
    """Assign a key given twice to the case it is in (or raise when it is outside every case)."""
    if duplicate is None:
        return {}
    path = duplicate.path
    inside = path[: len(root)] == root and len(path) > len(root) + 1
    index = path[len(root)] if inside else None
    if isinstance(index, int) and 0 <= index < count:
        return {index: duplicate.relative_to((*root, index))}
    raise DatasetError(
        f"key {str(path[-1])!r} is given twice{_first_given(duplicate)}",
        file=file,
        line=duplicate.line,
        field=".".join(str(step) for step in path),
        hint="keep one of them",
    )


# --- YAML


class _YamlLoader(yaml.SafeLoader):
    """A safe loader; a fresh subclass so nothing registered here leaks into `yaml.SafeLoader`."""


_FAST_YAML_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", _YamlLoader
)


def _yaml_records(text: str, file: str) -> Iterator[_Record]:
    try:
        root, data, duplicate = _parse_yaml(text, _FAST_YAML_LOADER)
    except (yaml.YAMLError, RecursionError) as fast_error:
        # libyaml is fast, but the Python parser explains mistakes better: let it say what.
        try:
            _parse_yaml(text, _YamlLoader)
        except (yaml.YAMLError, RecursionError) as exc:
            raise _yaml_error(exc, text, file) from exc
        raise _yaml_error(fast_error, text, file) from fast_error
    if root is None:
        raise _no_cases(file, "yaml")
    tree = _cached(lambda: _yaml_tree(root, {}))

    def line_of(path: _Loc) -> int:
        return _line_in(tree(), path)

    items, where = _case_items(data, file, "yaml", line_of)
    duplicates = _split_duplicate(duplicate, where, len(items), file)
    for index, item in enumerate(items):
        yield _Record(
            index + 1,
            item,
            _InTree(tree, (*where, index)),
            "yaml",
            duplicates.get(index),
        )


def _parse_yaml(
    text: str, loader_class: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
) -> tuple[yaml.Node | None, Any, _Twice | None]:
    """The document's node tree (with lines), its data, and the first key given twice."""
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None, None
        duplicate = _prepare_yaml(root)
        return root, loader.construct_document(root), duplicate
    finally:
        loader.dispose()


def _yaml_error(exc: BaseException, text: str, file: str) -> DatasetError:
    if isinstance(exc, yaml.MarkedYAMLError):
        return _yaml_syntax_error(exc, text, file)
    if isinstance(exc, yaml.reader.ReaderError):
        return DatasetError(
            f"invalid YAML: the character {exc.character:#06x} is not allowed in YAML text",
            file=file,
            line=text.count("\n", 0, exc.position) + 1,
            hint='remove it, or write it as an escape such as "\\x1f" inside double quotes',
        )
    if isinstance(exc, RecursionError):
        return DatasetError(
            "invalid YAML: nested too deeply", file=file, hint="flatten the nesting"
        )
    return DatasetError(
        f"invalid YAML: {str(exc).splitlines()[0]}",
        file=file,
        hint="check that the file is YAML text",
    )


def _case_nodes(root: yaml.Node) -> list[yaml.Node]:
    if isinstance(root, yaml.SequenceNode):
        return list(root.value)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            cases = isinstance(key, yaml.ScalarNode) and key.value == "cases"
            if cases and isinstance(value, yaml.SequenceNode):
                return list(value.value)
    return []


def _prepare_yaml(root: yaml.Node) -> _Twice | None:
    """Keep the text fields' plain scalars as text; find the first key given twice, if any."""
    for case in _case_nodes(root):
        if isinstance(case, yaml.MappingNode):
            for key, value in case.value:
                if (
                    isinstance(key, yaml.ScalarNode)
                    and key.value in _YAML_TEXT_FIELDS
                    and isinstance(value, yaml.ScalarNode)
                    and not value.style  # plain: None in PyYAML, '' in libyaml
                    and value.tag in _YAML_IMPLICIT
                ):
                    value.tag = _YAML_STR
    return _yaml_duplicate_key(root, (), set())


def _yaml_duplicate_key(node: yaml.Node, path: _Loc, visited: set[int]) -> _Twice | None:
    if id(node) in visited or len(path) > _TREE_DEPTH:
        return None
    visited.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found = _yaml_duplicate_key(item, (*path, index), visited)
            if found:
                return found
    elif isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == _YAML_MERGE:
                continue
            line = key.start_mark.line + 1
            if key.value in seen:
                return _Twice((*path, key.value), line, seen[key.value])
            seen[key.value] = line
            found = _yaml_duplicate_key(value, (*path, key.value), visited)
            if found:
                return found
    return None


def _yaml_tree(node: yaml.Node, built: dict[int, _Node], depth: int = 0) -> _Node:
    known = built.get(id(node))
    if known is not None:  # an alias, or a structure that contains itself
        return dataclasses.replace(known)
    result = _Node(node.start_mark.line + 1)
    built[id(node)] = result
    if depth > _TREE_DEPTH:
        return result
    if isinstance(node, yaml.SequenceNode):
        result.children = [_yaml_tree(item, built, depth + 1) for item in node.value]
    elif isinstance(node, yaml.MappingNode):
        children: dict[str, _Node] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = dataclasses.replace(_yaml_tree(value, built, depth + 1))
                child.key_line = key.start_mark.line + 1
                children[str(key.value)] = child
        result.children = children
    return result


def _yaml_syntax_error(exc: yaml.MarkedYAMLError, text: str, file: str) -> DatasetError:
    problem = explain_yaml_error(exc, text)
    return DatasetError(problem.message, file=file, line=problem.line, hint=problem.hint)


# --- JSON


class _DuplicateKeys:
    """An `object_pairs_hook` that builds dicts as `json` does and notes any key given twice."""

    def __init__(self) -> None:
        self.key: str | None = None

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if self.key is None and len(result) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.key = key
                    break
                seen.add(key)
        return result


def _json_value(text: str, file: str, line: int | None = None) -> tuple[Any, str | None]:
    hook = _DuplicateKeys()
    try:
        return json.loads(text, object_pairs_hook=hook), hook.key
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"invalid JSON: {exc.msg} (column {exc.colno})",
            file=file,
            line=exc.lineno if line is None else line,
            hint=_json_hint(exc) if line is None else _jsonl_hint(text, line, exc),
        ) from exc
    except RecursionError as exc:
        raise DatasetError(
            "invalid JSON: nested too deeply", file=file, line=line, hint="flatten the nesting"
        ) from exc


def _json_hint(exc: json.JSONDecodeError) -> str:
    if exc.msg.startswith("Expecting property name"):
        return 'keys need double quotes, and a mapping cannot end with a comma: {"input": "..."}'
    if exc.msg.startswith("Expecting ',' delimiter"):
        return "add the missing comma between the items before this point"
    if exc.msg.startswith("Extra data"):
        return "a .json file holds one value (wrap the cases in [ ]); use .jsonl for one per line"
    if exc.msg.startswith("Invalid control character"):
        return "write line breaks and tabs inside strings as \\n and \\t"
    return "check the quotes, commas and brackets near this point"


_BARE_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w-]*)\s*:")
_LONGEST_SHOWN_LINE = 200


def _jsonl_hint(text: str, line: int, exc: json.JSONDecodeError) -> str:
    """For a line of a .jsonl file: the line as a JSON object, when a plain edit makes it one
    (keys in double quotes, Python's quotes and constants, or plain text as the input)."""
    written = text.strip()
    quoted = _BARE_KEY.sub(r'\1"\2":', written)
    candidates = [quoted]
    for python in (written, quoted):
        try:
            value = ast.literal_eval(python)  # a Python dict: 'single quotes', True, None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            candidates.append(json.dumps(value, ensure_ascii=False))
    if written[:1] not in ("{", "[", '"'):
        candidates.append(json.dumps({"input": written}, ensure_ascii=False))
    for candidate in candidates:
        try:
            fixed = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(fixed, dict) and len(candidate) <= _LONGEST_SHOWN_LINE:
            return f"each line is one JSON object: write line {line} as `{candidate}`"
    return _json_hint(exc)


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


class _JsonTree:
    """Where each value of a (valid) JSON document starts, and the first key given twice."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [match.start() for match in re.finditer("\n", text)]
        self.decoder = json.JSONDecoder()
        self.duplicate: _Twice | None = None

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1

    def skip(self, offset: int) -> int:
        match = _JSON_SPACE.match(self.text, offset)
        return match.end() if match else offset

    def build(self) -> _Node:
        return self.walk(self.skip(0), ())[0]

    def walk(self, offset: int, path: _Loc) -> tuple[_Node, int]:
        text = self.text
        offset = self.skip(offset)
        node = _Node(self.line(offset))
        opening = text[offset]
        if len(path) > _TREE_DEPTH:  # past what any message points at: skip it whole
            _, end = self.decoder.raw_decode(text, offset)
            return node, end
        if opening == "{":
            children: dict[str, _Node] = {}
            node.children = children
            offset = self.skip(offset + 1)
            if text[offset] == "}":
                return node, offset + 1
            while True:
                offset = self.skip(offset)
                key_line = self.line(offset)
                key, offset = self.decoder.raw_decode(text, offset)
                offset = self.skip(offset) + 1  # the ':'
                child, offset = self.walk(offset, (*path, key))
                child.key_line = key_line
                if key in children and self.duplicate is None:
                    first = children[key].key_line
                    self.duplicate = _Twice((*path, key), key_line, first)
                children[key] = child
                offset = self.skip(offset)
                if text[offset] == ",":
                    offset += 1
                    continue
                return node, offset + 1
        if opening == "[":
            items: list[_Node] = []
            node.children = items
            offset = self.skip(offset + 1)
            if text[offset] == "]":
                return node, offset + 1
            while True:
                child, offset = self.walk(offset, (*path, len(items)))
                items.append(child)
                offset = self.skip(offset)
                if text[offset] == ",":
                    offset += 1
                    continue
                return node, offset + 1
        _, end = self.decoder.raw_decode(text, offset)
        return node, end


def _json_records(text: str, file: str) -> Iterator[_Record]:
    if not text.strip():
        raise _no_cases(file, "json")
    data, duplicated = _json_value(text, file)
    positions = _JsonTree(text)
    tree = _cached(positions.build)

    def line_of(path: _Loc) -> int:
        return _line_in(tree(), path)

    items, where = _case_items(data, file, "json", line_of)
    duplicates: dict[int, _Twice] = {}
    if duplicated is not None:
        tree()
        duplicates = _split_duplicate(positions.duplicate, where, len(items), file)
    for index, item in enumerate(items):
        yield _Record(
            index + 1, item, _InTree(tree, (*where, index)), "json", duplicates.get(index)
        )


def _jsonl_records(text: str, file: str) -> Iterator[_Record]:
    number = 0
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        number += 1
        data, duplicated = _json_value(line, file, line_number)
        duplicate = _Twice((duplicated,), line_number, None) if duplicated else None
        yield _Record(number, data, _FixedLine(line_number), "jsonl", duplicate)


# --- CSV


@dataclasses.dataclass
class _Column:
    name: str  # "" for a column without a header
    index: int  # 1-based


def _csv_records(text: str, file: str) -> Iterator[_Record]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[_Column] | None = None
    header_line = 1
    number = 0
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            runs_on = "end of data" in str(exc)
            raise DatasetError(
                "invalid CSV: a quoted cell in this row never ends"
                if runs_on
                else f"invalid CSV: {exc}",
                file=file,
                line=start if runs_on else max(reader.line_num, start),
                hint="close the quoted cell with a quote"
                if runs_on
                else 'inside a quoted cell, write a quote as two quotes ("")',
            ) from exc
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header_line = start
            header = _csv_header(row, file, start)
            continue
        number += 1
        data = _csv_row(row, header, file, start, header_line, number)
        yield _Record(number, data, _FixedLine(start), "csv")
    if header is None:
        raise _no_cases(file, "csv")


def _csv_header(row: list[str], file: str, line: int) -> list[_Column]:
    columns: list[_Column] = []
    seen: dict[str, int] = {}
    for index, cell in enumerate(row, start=1):
        name = cell.strip()
        column = _Column(name, index)
        columns.append(column)
        if not name:
            continue
        if name in seen:
            raise DatasetError(
                f"column {name!r} appears twice (columns {seen[name]} and {index})",
                file=file,
                line=line,
                field=name,
                hint="keep one of the two columns",
            )
        seen[name] = index
        if name in _CSV_COLUMNS:
            continue
        if name.startswith(_METADATA_PREFIX) and name[len(_METADATA_PREFIX) :].strip():
            continue
        close = _csv_meant(name, row)
        raise DatasetError(
            _csv_unknown_column(name, close),
            file=file,
            line=line,
            field=name,
            hint=_csv_column_hint(name, close),
        )
    if "expected_tools" in seen and "expected_tool_calls" in seen:
        raise DatasetError(
            "columns 'expected_tools' and 'expected_tool_calls' are two names for one field",
            file=file,
            line=line,
            field="expected_tool_calls",
            hint="keep one of the two columns",
        )
    return columns


def _csv_meant(name: str, header: list[str]) -> str | None:
    """The column an unknown column most likely means (by meaning, then spelling), when the
    header does not have it already."""
    taken = {cell.strip() for cell in header}
    if name in ("agent_trace", "conversation") or name.startswith("metadata"):
        return None
    return meant(name, _CSV_COLUMNS, _MEANINGS, lambda column: column not in taken)


def _csv_unknown_column(name: str, close: str | None) -> str:
    if name in ("agent_trace", "conversation"):
        return f"a {name.replace('_', ' ')} cannot be given in a CSV file"
    if name == "metadata" or name == _METADATA_PREFIX.rstrip(".") + ".":
        return "metadata goes in one column per key, named `metadata.<key>`"
    if close:
        return f"unknown column — did you mean {close!r}?"
    return "unknown column"


def _csv_column_hint(name: str, close: str | None) -> str:
    if name in ("agent_trace", "conversation"):
        return "write cases with a conversation or an agent trace in a YAML, JSON or JSONL file"
    if name.startswith("metadata"):
        return "name the column after the key, e.g. `metadata.difficulty`"
    if close:
        return f"rename the column {name!r} to {close!r}"
    return (
        "the columns are "
        + ", ".join(_CSV_COLUMNS)
        + " and metadata.<key>; put other values in metadata.<key> columns"
    )


def _csv_row(
    row: list[str], header: list[_Column], file: str, line: int, header_line: int, number: int
) -> dict[str, Any]:
    data: dict[str, Any] = {}
    metadata: dict[str, str] = {}
    id_at = next((column.index - 1 for column in header if column.name == "id"), None)
    row_id = row[id_at].strip() if id_at is not None and id_at < len(row) else ""
    label: str | int = row_id or number
    for index, cell in enumerate(row):
        if not cell.strip():
            continue
        if index >= len(header) or not header[index].name:
            raise DatasetError(
                f"a value in column {index + 1}, which has no name in the header "
                f"(line {header_line})",
                file=file,
                line=line,
                case=label,
                hint="name the column in the header row, or remove the value",
            )
        name = header[index].name
        if name.startswith(_METADATA_PREFIX):
            metadata[name[len(_METADATA_PREFIX) :].strip()] = cell
        elif name in _CSV_LISTS:
            data[name] = _csv_list(cell, name, file, line, label)
        elif name in _CSV_NUMBERS:
            data[name] = cell.strip()
        else:
            data[name] = cell
    if metadata:
        data["metadata"] = metadata
    return data


def _csv_list(cell: str, column: str, file: str, line: int, label: str | int) -> list[Any]:
    text = cell.strip()
    if not text.startswith("["):
        return [item.strip() for item in text.split("|") if item.strip()]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"a cell starting with '[' is read as a JSON array, and this one is not valid JSON: "
            f"{exc.msg} (character {exc.pos + 1} of the cell)",
            file=file,
            line=line,
            case=label,
            field=column,
            hint='write a JSON array such as ["a", "b"], or items separated by | such as a|b',
        ) from exc
    if not isinstance(value, list):  # pragma: no cover - text starting with '[' is an array
        value = [value]
    return value


# ---------------------------------------------------------------------------------------------
# Validating a case, and explaining what is wrong with it


def _validate(record: _Record, file: str) -> EvalCase:
    data = record.data
    if not isinstance(data, dict):
        raise DatasetError(
            f"a case must be a mapping of fields, got {_describe(data)}",
            file=file,
            line=record.where.line(()),
            case=record.number,
            hint=_mapping_hint(data, record.fmt),
        )
    too_deep = _too_deep(data, record.fmt)
    if too_deep is not None:
        raise DatasetError(
            f"nested more than {MAX_DEPTH} levels deep (or contains itself)",
            file=file,
            line=record.where.line(too_deep),
            case=record.label,
            field=_dotted(too_deep[:_SHOWN_STEPS]) + (".…" if len(too_deep) > _SHOWN_STEPS else ""),
            hint=f"flatten the data: a case keeps at most {MAX_DEPTH} levels (the case is level 1)",
        )
    too_many = too_many_values(data) if record.fmt == "yaml" else None  # only YAML shares
    if too_many is not None:
        raise DatasetError(
            f"its YAML aliases expand to more than {MAX_VALUES:,} values",
            file=file,
            line=record.where.line(too_many),
            case=record.label,
            field=_dotted(too_many[:_SHOWN_STEPS]) + (".…" if len(too_many) > _SHOWN_STEPS else ""),
            hint="an alias (*name) is written out in full wherever it is used: use it fewer "
            "times, or keep such data in a file the agent reads",
        )
    if record.twice is not None:
        raise DatasetError(
            f"the field is given twice{_first_given(record.twice)}",
            file=file,
            line=record.twice.line,
            case=record.label,
            field=_dotted(record.twice.path),
            hint="keep one of the two",
        )
    try:
        return EvalCase.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, record, file) from exc
    except RecursionError as exc:
        raise DatasetError(
            "the case is nested too deeply (or contains itself)",
            file=file,
            line=record.where.line(()),
            case=record.label,
            hint="remove the YAML alias that points back into its own value",
        ) from exc


_SHOWN_STEPS = 5


def _too_deep(case: Any, fmt: str) -> _Loc | None:
    """Where a case (level 1) first holds a list or mapping more than `MAX_DEPTH` levels deep,
    in file order, or None."""
    if not _exceeds(case, 1, {} if fmt == "yaml" else None):
        return None
    stack: list[tuple[Any, int, _Loc]] = [(case, 1, ())]
    deepest: dict[int, int] = {}
    while stack:  # the path to it, without recursion: it may be thousands of levels down
        value, level, path = stack.pop()
        if level > MAX_DEPTH:
            return path
        if deepest.get(id(value), 0) >= level:
            continue
        deepest[id(value)] = level
        children = value.items() if isinstance(value, dict) else enumerate(value)
        inner = [(child, level + 1, (*path, key)) for key, child in children if _nests(child)]
        stack.extend(reversed(inner))
    return None  # pragma: no cover - `_exceeds` found one


def _exceeds(value: dict[Any, Any] | list[Any], level: int, seen: dict[int, int] | None) -> bool:
    """Whether `value` (at `level`) holds a list or mapping past `MAX_DEPTH`.

    `seen` is for YAML, whose aliases can share one part many times over, or make it contain
    itself: a part is looked at again only from deeper down, so the check stays linear, and a
    loop ends past the limit. JSON shares nothing, and needs no such bookkeeping.
    """
    if level > MAX_DEPTH:
        return True
    if seen is not None:
        if seen.get(id(value), 0) >= level:
            return False
        seen[id(value)] = level
    items = value.values() if type(value) is dict else value
    if _FLAT.issuperset(map(type, items)):  # the usual list or mapping: one check, in C
        return False
    for item in items:
        kind = type(item)
        if (kind is dict or kind is list) and _exceeds(item, level + 1, seen):
            return True
    return False


def _nests(value: Any) -> bool:
    return type(value) is dict or type(value) is list


_FLAT = frozenset({str, int, float, bool, type(None), date, datetime})


def _first_given(twice: _Twice) -> str:
    if twice.first_line is None or twice.first_line == twice.line:
        return " in one mapping"
    return f" (first on line {twice.first_line})"


def _mapping_hint(data: Any, fmt: str) -> str:
    text = data if isinstance(data, str) else "What is 2 + 2?"
    if fmt == "yaml":
        return f"write each case as a mapping, e.g. `- input: {json.dumps(text)}`"
    if fmt == "csv":  # pragma: no cover - CSV rows are always mappings
        return "give each case one row"
    where = "each line of a .jsonl file" if fmt == "jsonl" else "each case"
    return f'{where} must be a JSON object, e.g. {{"input": {json.dumps(text)}}}'


@dataclasses.dataclass
class _Problem:
    path: _Loc
    error: Any  # a pydantic ErrorDetails
    line: int | None
    order: int


def _explain(exc: ValidationError, record: _Record, file: str) -> DatasetError:
    problems: list[_Problem] = []
    for order, error in enumerate(exc.errors(include_url=False)):
        path = _data_path(error["loc"], record.data, error["type"])
        problems.append(_Problem(path, error, None, order))
    # A value that fits one branch of a union (say, the list in `input: [...]`) also fails the
    # other branches' type checks; the deeper error inside the fitting branch is the real one.
    problems = [
        problem
        for problem in problems
        if not (
            problem.error["type"].endswith("_type")
            and any(
                len(other.path) > len(problem.path)
                and other.path[: len(problem.path)] == problem.path
                for other in problems
            )
        )
    ] or problems
    for problem in problems:
        problem.line = record.where.line(problem.path)
    # On one line, an unknown field before a missing one: `- tool: search` misses `name`
    # because `tool` is what the user wrote for it.
    first = min(
        problems,
        key=lambda p: (
            p.line if p.line is not None else 1 << 62,
            p.error["type"] != "extra_forbidden",
            p.order,
        ),
    )
    alike = [p.error for p in problems if p.path == first.path]
    message, hint, field = _message(first.path, alike, record)
    return DatasetError(
        message,
        file=file,
        line=first.line,
        case=record.label,
        field=field,
        hint=hint,
    )


def _data_path(loc: Sequence[str | int], data: Any, kind: str) -> _Loc:
    """The error's location as a path in the case's data, without pydantic's union-branch tags."""
    path: list[str | int] = []
    node = data
    for position, step in enumerate(loc):
        last = position == len(loc) - 1
        if _has_child(node, step):
            path.append(step)
            node = node[step]
        elif last and kind == "missing":
            path.append(step)
        elif isinstance(step, str):
            continue  # a union branch such as 'str' or 'list[Message]'
        else:
            path.append(step)
            node = None
    return tuple(path)


def _dotted(path: _Loc) -> str:
    return ".".join(str(step) for step in path)


_EXPECTED = {
    "string_type": "text",
    "string_sub_type": "text",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dataclass_type": "a mapping",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "datetime_type": "a date and time (ISO 8601)",
    "datetime_parsing": "a date and time (ISO 8601)",
    "datetime_from_date_parsing": "a date and time (ISO 8601)",
    "none_required": "nothing (null)",
}


def _message(path: _Loc, errors: list[Any], record: _Record) -> tuple[str, str, str | None]:
    """One line saying what is wrong at `path`, a hint saying the fix, and the field's name."""
    error = errors[0]
    kind: str = error["type"]
    field = _dotted(path) or None
    data = record.data
    if kind == "extra_forbidden" and path:
        return _unknown_field(path, data)
    if kind == "missing" and path:
        noun = _noun(_model_at(path[:-1]))
        return "required field is missing", f"add `{path[-1]}` to this {noun}", field
    if kind == "invalid_key":
        return (
            f"field names must be text, got {_describe(path[-1] if path else error['input'])}",
            "quote the field name, or remove it",
            field,
        )
    if "circular reference" in str(error["msg"]).lower():
        return (
            "the case contains itself",
            "remove the YAML alias (*name) that points back into its own case",
            field,
        )
    if kind == "value_error" and not path and not any(data.get(name) for name in _INPUT_FIELDS):
        return (
            "the case has no input: it needs an `input`, a `conversation` or an `agent_trace`",
            "add `input:` with what to ask the agent",
            "input",
        )
    if kind == "greater_than_equal":
        bound = error.get("ctx", {}).get("ge")
        return (
            f"must be {bound} or more, got {_describe(error['input'])}",
            f"write a value of {bound} or more",
            field,
        )
    if all(e["type"] in _EXPECTED for e in errors):
        message, hint = _wrong_type(path, errors)
        return message, hint, field
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    message = message[:1].lower() + message[1:]
    return message, "correct the value", field


def _wrong_type(path: _Loc, errors: list[Any]) -> tuple[str, str]:
    """What a value of the wrong type should have been, and how to write it."""
    given = errors[0]["input"]
    got = _describe(given)
    model = _model_at(path) if errors[0]["type"] == "model_type" else None
    if model is not None and model in _TEXT_SHORTHAND:
        return f"expected text or a mapping, got {got}", _TEXT_SHORTHAND[model]
    if model is not None:
        fields = ", ".join(model.model_fields)
        return (
            f"expected a mapping, got {got}",
            f"write the {_noun(model)} with its fields: {fields}",
        )
    kinds = list(dict.fromkeys(_EXPECTED[e["type"]] for e in errors))
    wanted = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]
    message = f"expected {wanted}, got {got}"
    if path == ("input",) and len(kinds) > 1:
        return message, (
            'write the question as text, or a list of messages like [{"role": "user", '
            '"content": "..."}]'
        )
    scalar = isinstance(given, int | float | date | datetime) and not isinstance(given, bool)
    if kinds[0] == "text" and (scalar or isinstance(given, bool)):
        shown = given.isoformat() if isinstance(given, date | datetime) else json.dumps(given)
        return message, f'put the value in quotes: "{shown}"'
    if kinds[0] == "a list" and isinstance(given, str):
        return message, f"write a list, e.g. {json.dumps([given])}"
    examples = {
        "a list": 'write a list, e.g. ["first", "second"]',
        "a mapping": 'write a mapping of names to values, e.g. {"name": "value"}',
        "a whole number": "write a whole number, e.g. 3",
        "a number": "write a number, e.g. 0.5",
        "true or false": "write true or false",
        "a date and time (ISO 8601)": "write a date and time such as 2024-05-01T12:00:00Z",
    }
    return message, examples.get(kinds[0], f"write {wanted}")


_TEXT_SHORTHAND: dict[type[BaseModel], str] = {
    Rubric: "write the rubric as text, or as a mapping with `content:` (and `weight:`)",
    ExpectedCall: "write the tool's name, or a mapping with `name:` (and `arguments:`)",
}


def _unknown_field(path: _Loc, data: dict[str, Any]) -> tuple[str, str, str | None]:
    key = str(path[-1])
    model = _model_at(path[:-1])
    names = _accepted_names(model) if model is not None else {}
    field = _dotted(path)
    if key in names:  # another name of a field that is given too
        other = next(
            name
            for name, target in names.items()
            if target == names[key] and name != key and _has(data, (*path[:-1], name))
        )
        return (
            f"{key!r} and {other!r} are two names for one field, and both are given",
            f"keep one of {other!r} and {key!r}",
            field,
        )
    parent = path[:-1]
    close = meant(key, names, _MEANINGS, lambda name: _renamed_fits(data, parent, key, name))
    if close is not None:
        return (
            f"unknown field — did you mean {close!r}?",
            f"rename {key!r} to {close!r}",
            field,
        )
    given = next((n for n in _meanings_of(key) if n in names and _has(data, (*parent, n))), None)
    if given is not None:
        return (
            f"unknown field — it means {given!r}, which is given too",
            f"remove {key!r}",
            field,
        )
    allowed = ", ".join(names) if names else "none"
    return "unknown field", f"the fields allowed here are: {allowed}", field


# What other tools (and people) call a case's fields: a suggestion by meaning comes before one
# by spelling (`question` is not `conversation`). A tuple where a name means different fields in
# different places (a case's answer, a conversation turn's answer); only a field of the mapping
# the key is in, that would accept the value, is suggested.
_MEANINGS: dict[str, str | tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "question",
            "prompt",
            "query",
            "user_input",
            "user_query",
            "user_message",
            "user_prompt",
            "instruction",
            "request",
            "task",
            "messages",
            "user_content",
        ),
        "input",
    ),
    "text": ("input", "content"),
    **dict.fromkeys(
        (
            "expected",
            "answer",
            "expected_answer",
            "ground_truth",
            "groundtruth",
            "reference",
            "reference_answer",
            "expected_response",
            "expected_result",
            "golden_answer",
            "gold",
            "ideal",
            "ideal_answer",
            "target",
            "output",
            "response",
            "final_response",
        ),
        ("expected_output", "expected_final_response"),
    ),
    **dict.fromkeys(
        ("tools", "expected_tool", "tool_calls", "expected_calls", "required_tools"),
        ("expected_tools", "expected_tool_trajectory"),
    ),
    "tool": ("expected_tools", "expected_tool_trajectory", "name"),  # `name` in a call
    **dict.fromkeys(
        ("trajectory", "expected_tool_sequence", "tool_sequence"), "expected_trajectory"
    ),
    **dict.fromkeys(("name", "case_id", "case_name", "key", "uid", "identifier"), "id"),
    **dict.fromkeys(("documents", "docs", "relevant_documents"), "relevant_docs"),
    **dict.fromkeys(
        ("forbidden", "must_not_include", "banned", "forbidden_text"), "must_not_contain"
    ),
    **dict.fromkeys(("must_contain", "required_keywords", "must_include"), "keywords"),
    **dict.fromkeys(("max_calls", "tool_call_budget", "max_tools"), "max_tool_calls"),
    **dict.fromkeys(("turns", "dialogue", "dialog"), "conversation"),
    **dict.fromkeys(("rubric", "criteria"), "rubrics"),
    **dict.fromkeys(("meta", "info", "extra"), "metadata"),
    **dict.fromkeys(("tool_name", "function", "function_name"), "name"),
    **dict.fromkeys(("params", "parameters", "input_args", "kwargs"), "arguments"),
    **dict.fromkeys(("criterion", "description"), "content"),
}


def _meanings_of(key: str) -> tuple[str, ...]:
    meaning = _MEANINGS.get(normalised(key), ())
    return (meaning,) if isinstance(meaning, str) else meaning


def _renamed_fits(data: dict[str, Any], parent: _Loc, key: str, name: str) -> bool:
    """Whether the case, with `key` renamed `name` in the mapping at `parent`, would be valid
    there: no such field given already, and no error at the renamed field (the case may have
    other mistakes; each gets its own message)."""
    copy: Any = dict(data)
    node = copy
    for step in parent:  # copy the path down to the mapping, so `data` stays as it is
        child = node[step]
        node[step] = child = dict(child) if isinstance(child, dict) else list(child)
        node = child
    if not isinstance(node, dict) or name in node:
        return False
    renamed = {name if k == key else k: v for k, v in node.items()}
    node.clear()
    node.update(renamed)
    try:
        EvalCase.model_validate(copy)
    except ValidationError as exc:
        at = (*parent, name)
        field = _accepted_names(_model_at(parent) or EvalCase).get(name, name)
        for error in exc.errors(include_url=False):
            loc = _data_path(error["loc"], copy, error["type"])
            if loc[: len(at)] in (at, (*parent, field)):
                return False
    except RecursionError:
        return False
    return True


def _has(data: Any, path: _Loc) -> bool:
    node = data
    for step in path:
        if not _has_child(node, step):
            return False
        node = node[step]
    return True


def _has_child(node: Any, step: str | int) -> bool:
    if isinstance(node, dict):
        return step in node
    return isinstance(node, list) and _is_index(step, node)


def _is_index(step: str | int, items: list[Any]) -> bool:
    return isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(items)


def _describe(value: Any) -> str:
    """A value as a message shows it: its kind and, when short, itself."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {shown!r}"
    if isinstance(value, datetime | date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


# ---------------------------------------------------------------------------------------------
# The models' field names


def _other_names(name: str, alias: Any) -> list[str]:
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str) and choice != name]
    if isinstance(alias, str) and alias != name:
        return [alias]
    return []


def _accepted_names(model: type[BaseModel]) -> dict[str, str]:
    """Every name a field of `model` may be given by (its name and aliases), to the field."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        names[name] = name
        for other in _other_names(name, info.validation_alias):
            names[other] = name
    return names


def _model_in(annotation: Any) -> type[BaseModel] | None:
    return next(_walk_annotation(annotation), None)


def _model_at(path: _Loc) -> type[BaseModel] | None:
    """The model that describes the mapping at `path` inside a case."""
    model: type[BaseModel] | None = EvalCase
    for step in path:
        if isinstance(step, int):
            continue
        if model is None:
            return None
        name = _accepted_names(model).get(step)
        if name is None:
            return None
        model = _model_in(model.model_fields[name].annotation)
    return model


def _models_under(model: type[BaseModel]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = [model]
    for current in found:
        for info in current.model_fields.values():
            for argument in _walk_annotation(info.annotation):
                if argument not in found:
                    found.append(argument)
    return found


def _walk_annotation(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for argument in get_args(annotation):
        yield from _walk_annotation(argument)


def _noun(model: type[BaseModel] | None) -> str:
    if model is None:
        return "mapping"
    if model is EvalCase:
        return "case"
    return re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()


# ---------------------------------------------------------------------------------------------
# Duplicate ids


def _duplicate_id(case: EvalCase, earlier: _Record, record: _Record, file: str) -> DatasetError:
    given = isinstance(record.data, dict) and "id" in record.data
    first_line = earlier.where.line(("id",) if given else ())
    line = record.where.line(("id",) if given else ())
    at = f" (line {first_line})" if first_line is not None else ""
    if given:
        return DatasetError(
            f"duplicate id: case {earlier.number}{at} already has the id {case.id!r}",
            file=file,
            line=line,
            case=record.label,
            field="id",
            hint="give each case its own id",
        )
    return DatasetError(
        f"duplicate case: the same content as case {earlier.number}{at}, so the same id "
        f"{case.id!r}",
        file=file,
        line=line,
        case=record.number,
        hint="remove one of the two, or give each its own `id`",
    )


# ---------------------------------------------------------------------------------------------
# Writing


def _case_record(case: EvalCase, file: str) -> dict[str, Any]:
    try:
        record = case.model_dump(mode="json", exclude_defaults=True)
    except Exception as exc:  # pydantic cannot serialise some value the case was built with
        raise DatasetError(
            f"cannot write the case: {exc}".splitlines()[0],
            file=file,
            case=case.id,
            hint="give the case only JSON-compatible values (text, numbers, lists, mappings)",
        ) from exc
    if record.get("id") == case.content_id():
        del record["id"]  # derived from the content; reading the file derives it again
    return record


class _YamlDumper(yaml.SafeDumper):
    """A safe dumper that writes multi-line text as a literal block, and keeps odd line breaks."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if any(ch in value for ch in "\r\x85\u2028\u2029"):
        style: str | None = '"'  # PyYAML's other styles turn these into plain line breaks
    elif "\n" in value:
        style = "|"
    else:
        style = None
    return dumper.represent_scalar(_YAML_STR, value, style=style)


_YamlDumper.add_representer(str, _represent_text)
