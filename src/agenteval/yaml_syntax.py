"""A YAML syntax error explained: the line to look at, and an edit that makes the file parse.

PyYAML's words name the parser's state, not the mistake: a key indented one space too far is
"mapping values are not allowed here", exactly like text holding `: ` that needs quotes. So the
likely mistakes (a quote never closed, a tab, a line indented differently from its neighbours,
`: ` inside text) are each tried as an edit of the text, and a hint names an edit only when,
made, the file parses, or at least parses past that line. Otherwise the hint is general. Case
files (`datasets.py`) and `agenteval.yaml` (`config.py`) explain their syntax errors here; it
runs only once a file has failed to parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["YamlProblem", "explain_yaml_error", "file_key_line", "item_line", "key_line"]

_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)

# When no edit is found: what PyYAML's words usually mean.
_GENERAL_HINTS = (
    ("mapping values are not allowed", "text containing ': ' needs quotes, e.g. input: \"a: b\""),
    ("found character '\\t'", "indent with spaces; YAML does not allow tabs"),
    ("could not find expected ':'", "each field needs `name: value`; check this line's colon"),
    ("expected <block end>", "check the indentation: items of one list line up under each other"),
    ("found undefined alias", "define the anchor (&name) before using the alias (*name)"),
    ("expected a single document", "keep one YAML document per file (remove the extra `---`)"),
)
_FALLBACK = "check the indentation and quoting on this line and the one before"

# `key: value` at the start of a line, after any `- ` list markers.
_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<dashes>(?:- +)*)(?P<key>[^\s:#'\"\-][^:#]*?):(?: +|$)")


@dataclass(frozen=True)
class YamlProblem:
    """What a YAML syntax error means for the user: a message, the line, and how to fix it."""

    message: str
    line: int | None
    hint: str


def explain_yaml_error(exc: yaml.MarkedYAMLError, text: str) -> YamlProblem:
    """The message, line and hint for a syntax error PyYAML raised on `text`."""
    problem = exc.problem or exc.context or "not valid YAML"
    if exc.context and exc.problem and exc.problem.startswith("but "):
        problem = f"{exc.context}, {exc.problem}"
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    message = f"invalid YAML: {problem}" + (f" (column {mark.column + 1})" if mark else "")
    lines = text.split("\n")
    for fixed, at, hint, meaning in _edits(exc, lines):
        if _parses_past(fixed, at):
            if meaning is None:
                return YamlProblem(message, at, hint)
            column = f" (column {mark.column + 1})" if mark and mark.line + 1 == at else ""
            return YamlProblem(f"invalid YAML: {meaning}{column}", at, hint)
    words = f"{exc.context} {problem}"
    hint = next((fix for found, fix in _GENERAL_HINTS if found in words), _FALLBACK)
    return YamlProblem(message, line, hint)


def _parses_past(lines: list[str], line: int) -> bool:
    """Whether the edited text parses, or fails only after `line` (another mistake, later)."""
    try:
        yaml.load("\n".join(lines), Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return mark is not None and mark.line + 1 > line
    except (yaml.YAMLError, RecursionError):  # the constructor recurses once per level
        return False
    return True


_Edit = tuple[list[str], int, str, str | None]  # the edited lines, the line, hint, message


def _edits(exc: yaml.MarkedYAMLError, lines: list[str]) -> Iterator[_Edit]:
    """Likely fixes, most likely first: each the edited text, the 1-based line it changes, the
    hint that says it, and a plainer message (or None to keep PyYAML's)."""
    problem = str(exc.problem)
    at = exc.problem_mark.line if exc.problem_mark is not None else None
    opened = exc.context_mark
    # YAML also breaks lines at NEL, LS and PS, which `lines` (split at "\n") does not: a mark
    # past them names no line of `lines`, and no edit is tried there.
    quoted = exc.context == "while scanning a quoted scalar"
    if quoted and opened is not None and opened.line < len(lines):
        yield from _close_quote(lines, opened.line, opened.column)
    if at is None or at >= len(lines):
        return
    if "'\\t'" in problem:
        yield from _reindent(lines, at, "YAML does not allow tabs: ", "a tab indents this line")
    yield from _open_quotes(lines, at)
    if problem.startswith("mapping values are not allowed") or "expected <block end>" in problem:
        key = _KEY_LINE.match(lines[at])
        if key is not None and ": " in lines[at][key.end() :]:
            yield _quoted_value(lines, at, key)
        yield from _reindent(lines, at, "", "this line's indentation does not fit the lines above")


def _close_quote(lines: list[str], opened: int, column: int) -> Iterator[_Edit]:
    text = lines[opened]
    quote = text[column : column + 1]
    if quote in ("'", '"'):
        fixed = [*lines]
        fixed[opened] = text.rstrip() + quote
        yield (
            fixed,
            opened + 1,
            f"add the closing {quote} at the end of line {opened + 1}",
            f"the quote opened on line {opened + 1} is never closed",
        )


def _open_quotes(lines: list[str], upto: int) -> Iterator[_Edit]:
    """A quoted value that runs on past its line (the next quote then ends it, and the text
    after that is the error), nearest the error first."""
    for index in range(min(upto, len(lines) - 1), -1, -1):
        key = _KEY_LINE.match(lines[index])
        rest = lines[index][key.end() :] if key else ""
        if key is not None and rest[:1] in ("'", '"') and not _closes(rest):
            yield from _close_quote(lines, index, key.end())
            return


def _closes(value: str) -> bool:
    quote, body = value[0], value[1:]
    if quote == "'":
        return body.replace("''", "").count("'") > 0
    return re.search(r'(?<!\\)(?:\\\\)*"', body) is not None


def _quoted_value(lines: list[str], at: int, key: re.Match[str]) -> _Edit:
    value = lines[at][key.end() :].strip()
    written = lines[at][len(key.group("indent")) : key.end()].rstrip() + " " + json.dumps(value)
    fixed = [*lines]
    fixed[at] = key.group("indent") + written
    return (
        fixed,
        at + 1,
        f"text containing ': ' needs quotes: `{written}`",
        "text containing ': ' without quotes",
    )


def _reindent(lines: list[str], at: int, prefix: str, meaning: str) -> Iterator[_Edit]:
    """The line indented as a line above it is: as the key before it, or as a list item."""
    text = lines[at].lstrip(" \t")
    now = len(lines[at]) - len(text)
    columns: list[int] = []
    for above in range(at - 1, -1, -1):
        key = _KEY_LINE.match(lines[above])
        if key is None:
            continue
        dashes = key.group("dashes")
        indent = len(key.group("indent"))
        if text.startswith("- ") and dashes:
            columns.append(indent)
        columns.append(indent + len(dashes))
        if len(columns) >= 4:
            break
    # The lines under it (indented deeper) belong with it: a list item indented too far
    # takes its fields along.
    end = at + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip(" ")) > now
    ):
        end += 1
    while end > at + 1 and not lines[end - 1].strip():
        end -= 1
    for column in dict.fromkeys(columns):
        if column == now and "\t" not in lines[at][:now]:
            continue
        fixed = [*lines]
        fixed[at] = " " * column + text
        if end > at + 1 and "\t" not in lines[at][:now]:
            shift = column - now
            for index in range(at + 1, end):
                if lines[index].strip():
                    fixed[index] = (
                        lines[index][-shift:] if shift < 0 else " " * shift + lines[index]
                    )
            way = f"{-shift} fewer" if shift < 0 else f"{shift} more"
            yield (
                fixed,
                at + 1,
                f"{prefix}indent lines {at + 1} to {end} by {way} spaces",
                meaning,
            )
        single = [*lines]
        single[at] = " " * column + text
        yield single, at + 1, f"{prefix}indent line {at + 1} with {column} spaces", meaning


# --- where a top-level key of a YAML mapping is written, for messages that name a line


def key_line(text: str, key: str, *inner: str) -> int | None:
    """The line (1-based) of the top-level `key` in the YAML `text`, if it parses and has it;
    with `inner` keys (a list's item by its number), of the deepest of them it has."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line: int | None = None
    for step in (key, *inner):
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next(((k, v) for k, v in node.value if k.value == step), None)
        elif isinstance(node, yaml.SequenceNode) and step.isdigit() and int(step) < len(node.value):
            child = (node.value[int(step)], node.value[int(step)])
        if child is None:
            return line
        line = int(child[0].start_mark.line) + 1
        node = child[1]
    return line


def file_key_line(path: Path, key: str, *inner: str) -> int | None:
    """`key_line` of the file at `path` (None when it cannot be read)."""
    try:
        return key_line(path.read_text(encoding="utf-8"), key, *inner)
    except (OSError, UnicodeDecodeError):
        return None


def item_line(text: str, key: str, index: int) -> int | None:
    """The line of item `index` of the list under the top-level `key` (else of the key)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            items = value.value if isinstance(value, yaml.SequenceNode) else []
            if key_node.value == key and index < len(items):
                return int(items[index].start_mark.line) + 1
    return key_line(text, key)
