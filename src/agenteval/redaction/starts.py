"""Where a match of the combined regex can start: a quick first pass for `Redactor`.

Every match of the combined regex (`regex.combined_regex`) begins with one of its literal heads
(`sk-`, `password`, `_token`, an environment secret, ...), but the heads begin with letters
that are everywhere in JSON (`s`, `e`, `a`, `p`, `c`, `_`, `-`, `:`), so a search enters the
trie at nearly every position: about 85 MB/s over a batch of W1's stored records. This pass
finds the heads by a rarer character instead (`k` in `token`, `w` in `password`, `/` in `://`,
a capital): one regex whose every branch starts with such a character and checks the rest of
the head around it. A head made only of common characters (`secret`, `client_secret`) is
found by `str.find` of a text the heads share (`secret`). Only where a head is found is the
combined regex tried, anchored where that head would start (`Pattern.match` at a position:
its lookbehinds still see what precedes it). On W1's records: 2.7 ms → 0.6 ms for 500 trials
with their scores (200 KB), none holding a secret.

Why it finds exactly what a search finds: a match of the combined regex at position `p`
begins with a head `h`, so `h`'s anchor (its rare character, or its shared text) occurs at
`p + i`. Every anchor occurrence is visited (the regex's matches are one character long, so
`finditer` stops at every position where a head is around; `str.find` is repeated from the
next position), and from each, the combined regex is tried at `at - i` for every offset `i`
that anchor has in any head, so at `p` too. The other way, anything `Pattern.match` finds is
a match of the combined regex.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

_COMMON: Final = frozenset(' "etaoinsrhldcu0123456789:,_.mf-\\\n{}[]')
"""Characters too common in stored JSON to look for one by one (measured on W1's rows and the
engine's golden stored rows: keys, hex ids, times, English text). A head made only of them is
found by `str.find`, which reads about 1.6 GB/s, where a regex stopping at a character costs
~65 ns each time it occurs; `str.find` wins for a character over ~1 % of the text."""

_LESS_RARE: Final = "TZwgypbvSAICPMBHWRDNEOLFGUYxkKVJXQjqz"
"""Characters worth looking for, from the least rare (English text, then JSON's times and ids):
a head is found by its character latest here, or by one not listed at all (`/`), rarer still."""


def _rank(char: str) -> int:
    return _LESS_RARE.find(char) if char in _LESS_RARE else len(_LESS_RARE)


@dataclass(frozen=True)
class StartFinder:
    """Where any of some literal heads occurs, told by each head's rarest character or by a
    text the common-lettered heads share. Built once per combined regex (`Redactor`).

    `pattern` matches one character, an anchor, where a head is around it; `offsets` gives,
    for each anchor character, how far before it the heads anchored on it start; `texts`, for
    each shared text, how far before it the heads containing it start.
    """

    pattern: re.Pattern[str] | None
    offsets: dict[str, tuple[int, ...]]
    texts: tuple[tuple[str, tuple[int, ...]], ...]

    def any_match(self, text: str, regex: re.Pattern[str]) -> bool:
        """Whether `regex`, whose every match starts with one of the heads, matches `text`
        anywhere: `regex.search(text) is not None`, tried only where a head is."""
        match = regex.match
        for shared, before in self.texts:
            at = text.find(shared)
            while at != -1:
                for offset in before:
                    if offset <= at and match(text, at - offset) is not None:
                        return True
                at = text.find(shared, at + 1)
        if self.pattern is not None:
            offsets = self.offsets
            for hit in self.pattern.finditer(text):
                at = hit.start()
                for offset in offsets[text[at]]:
                    if offset <= at and match(text, at - offset) is not None:
                        return True
        return False


def start_finder(heads: Iterable[str]) -> StartFinder:
    """The finder for these heads (each non-empty)."""
    around: dict[str, dict[tuple[str, str], None]] = {}
    offsets: dict[str, set[int]] = {}
    common: list[str] = []
    for head in dict.fromkeys(heads):
        rare = [index for index, char in enumerate(head) if char not in _COMMON]
        if not rare:
            common.append(head)
            continue
        index = max(rare, key=lambda at: _rank(head[at]))  # the first of the rarest
        char = head[index]
        around.setdefault(char, {})[(head[:index], head[index + 1 :])] = None
        offsets.setdefault(char, set()).add(index)
    branches = []
    for char, sides in around.items():
        checks = []
        for before, after in sides:
            check = f"(?<={re.escape(before + char)})" if before else ""
            checks.append(check + (f"(?={re.escape(after)})" if after else ""))
        branches.append(re.escape(char) + "(?:" + "|".join(checks) + ")")
    return StartFinder(
        pattern=re.compile("|".join(branches)) if branches else None,
        offsets={char: tuple(sorted(found)) for char, found in offsets.items()},
        texts=_shared_texts(common),
    )


LONGEST_SHARED: Final = 12
"""The longest text `_shared_texts` considers: any part of a head finds it, a longer one only
fewer times, and counting every part of a long head took the cube of its length (an 800-character
hex secret in the environment: 7.2 s to build the finder; found by issue 21's review)."""


def _shared_texts(heads: list[str]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Texts to find the heads by, each with the offsets at which it occurs in the heads it
    stands for: greedily, the text in the most heads not yet covered (the longest among
    those), so `secret` stands for `secret`, `_secret`, `client_secret`, ..."""
    texts: list[tuple[str, tuple[int, ...]]] = []
    left = set(heads)
    while left:
        candidates = {
            head[start:end]
            for head in left
            for start in range(len(head))
            for end in range(start + 1, min(len(head), start + LONGEST_SHARED) + 1)
        }
        best = max(
            sorted(candidates),
            key=lambda part: (sum(part in head for head in left), len(part)),
        )
        found = {head for head in left if best in head}
        before = {head.find(best, start) for head in found for start in range(len(head))}
        before.discard(-1)
        texts.append((best, tuple(sorted(before))))
        left -= found
    return tuple(texts)
