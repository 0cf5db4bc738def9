"""Everything is compiled into one regular expression: a trie of literal heads (environment values,
key prefixes, header and credential names), then what must come after the head that matched,
written once for all the heads that share it (see `combined_regex`), compiled on first use (about
10 milliseconds). Every top-level branch starts with a literal character, so the regex engine
skips ahead to candidate positions: searching 200 characters of ordinary text takes about 3
microseconds, and `redact_text` then returns the very same string object. When something
matched, one substitution pass does the work; a second pass, normally finding nothing, makes sure
the result is stable (a mask can expose a word start that was glued to a secret).

This module writes that regex from `(literal head, boundary, body)` entries; `redactor` feeds it
the environment's secrets and every rule of `rules`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from agenteval.redaction.rules import Boundary


@dataclass
class _Node:
    """A node of the trie of heads: the heads through it continue with one of its children."""

    children: dict[str, _Node] = field(default_factory=dict)
    entries: list[tuple[Boundary, str]] = field(default_factory=list)
    """`(boundary, body)` of the heads ending here, in the order given."""
    boundaries: set[Boundary] = field(default_factory=set)
    bodies: set[str] = field(default_factory=set)
    """The boundaries and bodies of every head through this node."""


def combined_regex(entries: Iterable[tuple[str, Boundary, str]]) -> str:
    """One regex for many `(literal head, boundary, body)` entries: at any position it matches
    what the alternation of `head + boundary + body`, longest head first, would match there.

    The heads form a trie, so the engine follows at most one path of literals, and every
    top-level branch starts with a literal character, so the engine skips straight to candidate
    positions. Longer heads are tried before shorter ones (a longer secret wins), and at one
    head the entries in the order given, a plain literal (empty body) last.

    A body shared by several heads is written once, after the trie, rather than after each of
    them (107 credential names share one; copied 107 times it took ~70 ms to compile): each
    subtree whose heads all lead to it is a named group, and after the trie comes the body of
    the group that took part in the match. When that body fails, the engine backtracks into
    the trie and tries the next head, exactly as with the body written after every head. A
    body that follows one head stays right after it, where a failing match costs least (`://`
    comes with every URL). Likewise a boundary shared by a subtree is checked once where its
    heads have a few characters in common, looking back past them. (A body or a boundary
    before a trie of heads would cost the literal first characters that make searching fast.)
    """
    root = _Node()
    heads_of: dict[str, set[str]] = {}
    for head, boundary, body in entries:
        node = root
        for char in head:
            node = node.children.setdefault(char, _Node())
            node.boundaries.add(boundary)
            node.bodies.add(body)
        if (boundary, body) not in node.entries:
            node.entries.append((boundary, body))
        heads_of.setdefault(body, set()).add(head)
    shared = frozenset(body for body, heads in heads_of.items() if body and len(heads) > 1)
    writer = _TrieWriter(shared)
    trie = writer.node(root, "", checked=False, grouped=False)
    return f"(?:{trie}){writer.tail()}"


_CHECK_DEPTH: Final = 3
"""How many characters of a head are read before a boundary shared by several is checked:
fewer, and the lookbehinds run at every common letter of ordinary text."""


class _TrieWriter:
    """Writes a trie of `_Node`s as a regex, with a named group for each subtree whose heads
    all lead to one shared body, and that body after the trie."""

    def __init__(self, shared: frozenset[str]) -> None:
        self._shared = shared
        self._groups: dict[str, list[str]] = {}
        self._count = 0

    def node(self, node: _Node, path: str, *, checked: bool, grouped: bool) -> str:
        """The regex for the subtree of `node`, reached by reading `path`. `checked`: every
        boundary below has been checked; `grouped`: an enclosing group names every body below."""
        check = ""
        if not checked and len(path) >= _CHECK_DEPTH and len(node.boundaries) == 1:
            (boundary,) = node.boundaries
            check, checked = boundary.after(path), True
        branches = []
        for char, child in node.children.items():
            label, end = char, child
            while len(end.children) == 1 and not end.entries:  # a chain of single letters
                (next_char, end), *_ = end.children.items()
                label += next_char
            (body, *others) = end.bodies
            if grouped or others or body not in self._shared:
                rest = self.node(end, path + label, checked=checked, grouped=grouped)
            else:  # every head below leads to one shared body: name it once, here
                inner = self.node(end, path + label, checked=checked, grouped=True)
                rest = self._group(body, inner)
            branches.append(re.escape(label) + rest)
        for boundary, body in sorted(node.entries, key=lambda entry: entry[1] == ""):
            own = "" if checked else boundary.after(path)
            if not grouped:
                own = self._group(body, own) if body in self._shared else own + body
            branches.append(own)
        if len(branches) == 1:
            return check + branches[0]
        return check + "(?:" + "|".join(branches) + ")"

    def _group(self, body: str, regex: str) -> str:
        name = f"b{self._count}"
        self._count += 1
        self._groups.setdefault(body, []).append(name)
        return f"(?P<{name}>{regex})"

    def tail(self) -> str:
        """What follows the trie: the body of the group that took part in the match, if any.

        An atomic group first notes which body that is (each of its alternatives checks the
        groups leading to one body, a chain of conditionals), then conditionals pick the body.
        So when the body fails, as it does after almost every head found in ordinary text,
        nothing here is tried again: the engine goes straight back into the trie.
        """
        if not self._groups:
            return ""
        # Most heads lead to the credential names' body: check its groups first.
        bodies = sorted(self._groups, key=lambda body: -len(self._groups[body]))
        picks = []
        for index, body in enumerate(bodies):
            took_part = "(?!)"
            for name in self._groups[body]:
                took_part = f"(?({name})|{took_part})"
            picks.append(f"{took_part}(?P<t{index}>)")
        chosen = ""
        for index in reversed(range(len(bodies))):
            chosen = f"(?(t{index}){bodies[index]}|{chosen})"
        return f"(?>{'|'.join(picks)}|){chosen}"
