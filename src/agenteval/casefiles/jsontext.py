"""JSON text, as the JSON, JSONL and ADK readers read it: parsed with the first key given twice
noted, explained when it is not valid JSON, and mapped to lines (`JsonTree`)."""

from __future__ import annotations

import ast
import bisect
import json
import re
from typing import Any

from agenteval.casefiles.positions import TREE_DEPTH, Loc, Node, Twice
from agenteval.errors import DatasetError
from agenteval.json_syntax import explain_json_error

__all__ = ["JsonTree", "parse_json"]


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


def parse_json(text: str, file: str, line: int | None = None) -> tuple[Any, str | None]:
    """The value `text` holds and the first key given twice in one of its objects (or None);
    `line`, for a line of a .jsonl file, is that line's number. Raises `DatasetError` for text
    that is not valid JSON."""
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
    return explain_json_error(
        exc,
        one_value="a .json file holds one value (wrap the cases in [ ]); use .jsonl for one per line",
    )


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


class JsonTree:
    """Where each value of a (valid) JSON document starts, and the first key given twice."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [match.start() for match in re.finditer("\n", text)]
        self.decoder = json.JSONDecoder()
        self.duplicate: Twice | None = None

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1

    def skip(self, offset: int) -> int:
        match = _JSON_SPACE.match(self.text, offset)
        return match.end() if match else offset

    def build(self) -> Node:
        return self.walk(self.skip(0), ())[0]

    def walk(self, offset: int, path: Loc) -> tuple[Node, int]:
        text = self.text
        offset = self.skip(offset)
        node = Node(self.line(offset))
        opening = text[offset]
        if len(path) > TREE_DEPTH:  # past what any message points at: skip it whole
            _, end = self.decoder.raw_decode(text, offset)
            return node, end
        if opening == "{":
            children: dict[str, Node] = {}
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
                    self.duplicate = Twice((*path, key), key_line, first)
                children[key] = child
                offset = self.skip(offset)
                if text[offset] == ",":
                    offset += 1
                    continue
                return node, offset + 1
        if opening == "[":
            items: list[Node] = []
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
