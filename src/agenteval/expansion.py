"""How large plain data is once written out, when parts of it are shared: YAML aliases.

An alias (`*name`) stands for its anchor's value wherever it is used, and a YAML loader builds
it once and shares it: a "billion laughs" file twelve levels deep loads in a blink and is
9**12 values written out. Case files (`datasets.py`) and `agenteval.yaml` (`config.py`) are
measured here, in time linear in what is held in memory, and refused past the size budget a
stored record keeps (`jsonsafe.MAX_VALUES`), before anything walks them in full.
"""

from __future__ import annotations

from typing import Any

from agenteval.jsonsafe import MAX_VALUES

__all__ = ["too_many_values"]


def too_many_values(data: Any, limit: int = MAX_VALUES) -> tuple[str | int, ...] | None:
    """Where plain data (dicts and lists, as a YAML loader builds them) passes `limit` values
    once written out, every shared part written wherever it is used (a YAML alias), or None.

    Counted as a record is (`MAX_VALUES`: the items of every list and mapping), in time linear
    in the parts held in memory, whatever they expand to; a part that contains itself counts
    once (the depth checks refuse it). The path ends at the first part, in order, with which
    the count passes the limit: a part used more than once (an alias) is named, not entered.
    """
    sizes: dict[int, int] = {}  # written-out size of each part: its items, and theirs
    uses: dict[int, int] = {}  # how many times each part is used
    working: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:  # post-order without recursion: the data may be nested thousands deep
        value, done = stack.pop()
        items = value.values() if type(value) is dict else value
        if done:
            sizes[id(value)] = len(items) + sum(sizes.get(id(i), 0) for i in items if _nests(i))
            continue
        if id(value) in sizes or id(value) in working:
            continue
        working.add(id(value))
        stack.append((value, True))
        for item in items:
            if _nests(item):
                uses[id(item)] = uses.get(id(item), 0) + 1
                if id(item) not in sizes and id(item) not in working:
                    stack.append((item, False))
    if not _nests(data) or sizes[id(data)] <= limit:
        return None
    path: list[str | int] = []
    spent = 0
    value = data
    while True:
        pairs = value.items() if type(value) is dict else enumerate(value)
        spent += len(value)
        if spent > limit:
            return tuple(path)
        for key, item in pairs:
            if not _nests(item):
                continue
            size = sizes.get(id(item), 0)
            if spent + size > limit:
                path.append(key)
                if uses.get(id(item), 0) > 1:
                    return tuple(path)
                value = item
                break
            spent += size
        else:  # pragma: no cover - the sizes add up to more than the limit
            return tuple(path)


def _nests(value: Any) -> bool:
    return type(value) is dict or type(value) is list
