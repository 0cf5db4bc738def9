"""What a mistaken name most likely meant, for the "did you mean" of an error message.

By meaning first: other tools name a case's input `question`, `prompt` or `query`, and its
answer `expected`, `answer` or `ground_truth`; spelling alone would take `question` for
`conversation` and `expected` for `expected_tools`. Then by spelling (`difflib`). And only a
name the caller accepts where the mistake is written: a suggestion that, followed, is rejected
in turn (a text under a field that holds a list) is no help, so the caller tries each one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping

__all__ = ["meant", "normalised"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def normalised(key: str) -> str:
    """`Expected Output`, `expected-output` and `expectedOutput` as `expected_output`."""
    return re.sub(r"[\s\-.]+", "_", _CAMEL.sub("_", key.strip())).lower()


def meant(
    key: str,
    names: Collection[str],
    meanings: Mapping[str, str | tuple[str, ...]],
    accepts: Callable[[str], bool] = lambda name: True,
) -> str | None:
    """The name in `names` that `key` most likely meant, or None.

    In order: `key` written another way (case, dashes, camelCase); what `meanings` says it means
    (keyed by the normalised form; a tuple when it means different fields in different places);
    the closest spellings. The first that `accepts` (the caller's check that the file would then
    be valid there) wins; `key` itself is never suggested.
    """
    wanted = normalised(key)
    meaning = meanings.get(wanted, ())
    candidates = [
        wanted,
        *((meaning,) if isinstance(meaning, str) else meaning),
        *difflib.get_close_matches(key, list(names), n=3, cutoff=0.6),
        *difflib.get_close_matches(wanted, list(names), n=3, cutoff=0.6),
    ]
    for name in dict.fromkeys(candidates):
        if name in names and name != key and accepts(name):
            return name
    return None
