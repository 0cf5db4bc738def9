"""Where things are in a case file: the lines of a document's values, and keys given twice.

A reader maps its document to a tree of `Node`s (YAML from its node tree, JSON with
`jsontext.JsonTree`), or puts every case on one line (JSONL, CSV); a message then finds the line
of any field by its path (`line_in`). Nothing here reads a file or knows a format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

from agenteval.jsonsafe import MAX_DEPTH

__all__ = [
    "TREE_DEPTH",
    "FixedLine",
    "InTree",
    "Loc",
    "Node",
    "Twice",
    "Where",
    "cached_tree",
    "dotted",
    "first_given",
    "is_index",
    "line_in",
]

# How deep the maps of where things are in a file go: a case sits at most three levels into its
# document (`cases:` mapping, list, case), and nothing past a case's `MAX_DEPTH` levels is
# pointed at (such a case is refused). Bounded, a file nested thousands deep cannot exhaust
# the stack.
TREE_DEPTH = MAX_DEPTH + 4

Loc = tuple[str | int, ...]
"""A path into a document or a case: mapping keys and list positions (from 0)."""


@dataclasses.dataclass
class Node:
    """A value in the file: the line it starts on, the line of its key, and its children."""

    line: int
    key_line: int | None = None
    children: dict[str, Node] | list[Node] | None = None

    @property
    def shown_line(self) -> int:
        return self.key_line if self.key_line is not None else self.line


def line_in(root: Node, path: Loc) -> int:
    """The line of the value at `path`, or of the deepest part of `path` the file has."""
    node = root
    for step in path:
        child: Node | None = None
        if isinstance(node.children, dict):
            child = node.children.get(str(step))
        elif isinstance(node.children, list) and is_index(step, node.children):
            child = node.children[int(step)]
        if child is None:
            break
        node = child
    return node.shown_line


class Where(Protocol):
    """Where a case is in its file: the line of any field in it."""

    def line(self, path: Loc) -> int | None:
        """The line of the field at `path` inside the case."""


@dataclasses.dataclass
class FixedLine:
    """A case that sits on one line (JSONL) or one row (CSV)."""

    at: int | None

    def line(self, path: Loc) -> int | None:
        return self.at


@dataclasses.dataclass
class InTree:
    """A case inside a YAML or JSON document, whose node tree is built when first needed."""

    tree: Callable[[], Node]
    root: Loc

    def line(self, path: Loc) -> int | None:
        return line_in(self.tree(), (*self.root, *path))


def cached_tree(build: Callable[[], Node]) -> Callable[[], Node]:
    """The tree `build` makes, built when first asked for and then kept."""
    built: list[Node] = []

    def get() -> Node:
        if not built:
            try:
                built.append(build())
            except RecursionError:  # too deep to map; every field then points at line 1
                built.append(Node(1))
        return built[0]

    return get


@dataclasses.dataclass
class Twice:
    """A key given twice in one mapping: its path, its line, and the line it was first given on."""

    path: Loc
    line: int | None
    first_line: int | None

    def relative_to(self, root: Loc) -> Twice:
        return Twice(self.path[len(root) :], self.line, self.first_line)


def is_index(step: str | int, items: list[Any]) -> bool:
    """Whether `step` is a position in `items`."""
    return isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(items)


def first_given(twice: Twice) -> str:
    """Where a key given twice was first given, as a message continues."""
    if twice.first_line is None or twice.first_line == twice.line:
        return " in one mapping"
    return f" (first on line {twice.first_line})"


def dotted(path: Loc) -> str:
    """A path as messages name a field: `agent_trace.0.tool_calls`."""
    return ".".join(str(step) for step in path)
