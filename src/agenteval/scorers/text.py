"""How the built-in scorers read text: normalised for comparison, numbers found and compared by value.

- `normalise` forgives what a reader would forgive: case, accents, runs of whitespace, and one
  final period. `fold` does the same but keeps the period.
- `find_numbers` and `parse_number` read numbers as written in English: `19,753`, `19753.0`,
  `-3.5`, `1,234,567.89`, `.5`, `12%`. A comma is a thousands separator only between groups of
  three digits; a decimal comma (`1,5`) is not understood (it reads as the two numbers 1 and 5).
  Exponents (`1e3`), fractions (`1/2`) and number words (`three`) are not numbers here. A number
  glued to the end of a word (`H2O`, `gpt4`, `v2`) is not a number; one followed by letters
  (`10km`, `3rd`) is. A `%` right after a number marks it as a percentage.
- `numbers_equal` compares by value within `NUMBER_TOLERANCE` (0.01, absolute, inclusive).
- `content_words` gives the words that carry meaning: normalised, three letters or more, not an
  English stopword, not a number.
- `json_value` reads a tool result that is a string holding JSON as that JSON.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EXCERPT_CHARS",
    "EXCERPT_ITEMS",
    "NUMBER_TOLERANCE",
    "STOPWORDS",
    "NumberMention",
    "content_words",
    "excerpt",
    "excerpts",
    "find_numbers",
    "fold",
    "folded",
    "json_value",
    "normalise",
    "number_matches",
    "number_value",
    "number_values",
    "numbers_equal",
    "parse_number",
    "word_list",
    "words",
]

NUMBER_TOLERANCE = 0.01
"""Two numbers within this of each other (absolute) are the same number."""

EXCERPT_CHARS = 200
"""How much of a text a score's details quote: details are stored with every score, so they
carry excerpts and counts, never a copy of the whole answer, argument or error."""
EXCERPT_ITEMS = 50
"""How many items of a list a score's details show (their count says how many there were)."""

_NUMBER = re.compile(
    r"""
    (?P<number>
        [-+\u2212.0-9]                # a sign, ASCII or the Unicode minus, a digit or a point
        (?<![\w.].)                   # not glued to a word, nor the tail of `1.2.3`
        (?:
            (?<=[-+\u2212])                                     # after the sign:
            (?:(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?  #   1,234,567.89 or 19753.0
              | \.[0-9]+)                                       #   or .5
          | (?<=[0-9])                                          # a first digit, then the rest
            (?:[0-9]{0,2}(?:,[0-9]{3})+|[0-9]*)(?:\.[0-9]+)?    #   of one of those
          | (?<=\.)[0-9]+                                       # a first point: .5
        )
        (?![0-9]|\.[0-9]|,[0-9]{3})   # not cut out of a longer number or a version string
    )
    (?P<percent>\s?%)?
    """,
    re.VERBOSE,
)
# What a number is, written the plain way (the reference `tests/scorers/test_quick_paths.py`
# checks `_NUMBER` against, match for match):
#     (?<![\w.]) (?P<sign>[-+\u2212])?
#     (?P<digits>(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)? | \.[0-9]+)
#     (?![0-9]|\.[0-9]|,[0-9]{3}) (?P<percent>\s?%)?
# `_NUMBER` finds the same matches, written so that it starts with the set of characters a
# number can start with: `re` then skips to the next such character in C instead of trying
# the whole pattern at every position (the lookbehind moves after that first character).
# W5's tool results' text (~150 characters, 7 numbers): 8.1 -> 4.4 us; a question: 3.4 -> 1.3 us.

_WORD = re.compile(r"[^\W_]+")
# The same words in ASCII text, for which `\w` is `[a-zA-Z0-9_]`: a plain character set is
# quicker than the Unicode word class (W5's tool results' text: 5.6 -> 3.5 us).
_ASCII_WORD = re.compile(r"[a-zA-Z0-9]+")

_STOPWORDS = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either
    else ever every few for from further had has have having he her here hers herself him himself
    his how however i if in into is it its itself just least less let like made make many may me
    might more most much must my myself neither no nor not now of off often on once one only or
    other otherwise our ours ourselves out over own per perhaps please rather really same say says
    said shall she should since so some such than that the their theirs them themselves then there
    therefore these they this those though through thus to too under until up upon us very via was
    we well were what whatever when where whether which while who whom whose why will with within
    without would yes yet you your yours yourself yourselves answer result results
"""
STOPWORDS = frozenset(_STOPWORDS.split())
"""Words too common to show that an answer is supported: English function words, plus `answer`
and `result`, which answers use to introduce what they say."""


def fold(text: str) -> str:
    """`text` casefolded, without accents, and with each run of whitespace made one space, stripped.

    Accents go by Unicode compatibility decomposition (NFKD), so `É` reads as `e`, a ligature
    as its letters and a full-width digit as an ASCII one. Folding twice gives the same text as folding once.
    """
    if text.isascii():
        # The common case, and the same result: ASCII has no marks nor compatibility forms to
        # decompose, and its casefold is its lowercase.
        return " ".join(text.lower().split())
    # Casefold first (a combining mark may fold to a letter: U+0345 to iota), then again after
    # decomposing, which can produce uppercase letters (℃ decomposes to °C); text that came out
    # ASCII (most accented text) needs only the lowercase of that second round.
    text = _strip_marks(text.casefold())
    text = text.lower() if text.isascii() else _strip_marks(text.casefold())
    return " ".join(text.split())


@functools.lru_cache(maxsize=4)
def folded(text: str) -> str:
    """`fold(text)`, kept for the last few texts: the built-ins each read a trial's answer
    folded (`exact_match`, `avoids_forbidden_text`, `tool_faithfulness`), so it is folded once
    a trial, not three or four times. (`fold` gives a text of its text alone, so a kept one is
    right for any equal text.)"""
    return fold(text)


def normalise(text: str) -> str:
    """`fold(text)` without one final period: `"Paris."` reads as `"paris"`.

    Only a single period goes: `"Paris.."` and `"Wait..."` keep theirs (an ellipsis is part of
    the text), which also makes normalising twice the same as normalising once.
    """
    text = folded(text)
    if text.endswith(".") and not text[:-1].rstrip().endswith("."):
        text = text[:-1].rstrip()
    return text


def _strip_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


@dataclass(frozen=True)
class NumberMention:
    """A number as written in some text: its value, the text it was read from, and whether it
    was a percentage (`12%` has value 12 and `percent` set)."""

    value: float
    text: str
    start: int
    end: int
    percent: bool = False


def find_numbers(text: str) -> list[NumberMention]:
    """Every number written in `text`, in order (see the module docstring for what counts)."""
    return [_mention(match) for match in _NUMBER.finditer(text)]


def number_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches `find_numbers` reads its mentions from, one by one (`number_value` reads
    one's value, its `percent` group says whether it is a percentage)."""
    return _NUMBER.finditer(text)


def _mention(match: re.Match[str]) -> NumberMention:
    return NumberMention(
        value=number_value(match),
        text=match.group(0),
        start=match.start(),
        end=match.end(),
        percent=match["percent"] is not None,
    )


def number_values(text: str) -> list[float]:
    """The values of `find_numbers(text)`, in order (without the rest of each mention)."""
    return [_number_value(number) for number, _ in _NUMBER.findall(text)]


def number_value(match: re.Match[str]) -> float:
    """The value of one of `number_matches`."""
    return _number_value(match["number"])


def _number_value(number: str) -> float:
    # A number as written, its sign included: `float` reads an ASCII sign as the sign it is
    # (`float("-3")` is `-float("3")`, -0.0 included), and the Unicode minus as the ASCII one.
    return float(number.replace(",", "").replace("\u2212", "-"))


def parse_number(text: str) -> NumberMention | None:
    """The number `text` consists of (surrounding whitespace allowed), else None.

    `"19,753"`, `" 19753.0 "`, `"-3.5"` and `"12%"` are numbers; `"19,753 km"`, `"about 3"` and
    `"1e3"` are not.
    """
    stripped = text.strip()
    mentions = find_numbers(stripped)
    if len(mentions) == 1 and mentions[0].text == stripped:
        return mentions[0]
    return None


def numbers_equal(a: float, b: float, tolerance: float = NUMBER_TOLERANCE) -> bool:
    """Whether `a` and `b` are the same number: at most `tolerance` apart (inclusive)."""
    if math.isnan(a) or math.isnan(b):
        return False
    # The slack absorbs float rounding, so 19753.01 is within 0.01 of 19753.
    slack = 1e-9 * max(1.0, abs(a), abs(b))
    return abs(a - b) <= tolerance + slack


def words(text: str) -> list[str]:
    """The words of `text` after `fold`: runs of letters and digits."""
    return word_list(folded(text))


def word_list(folded: str) -> list[str]:
    """The words of text already folded (`words` without the `fold`)."""
    return (_ASCII_WORD if folded.isascii() else _WORD).findall(folded)


def content_words(text: str) -> list[str]:
    """The words of `text` that carry meaning: three characters or more, not in `STOPWORDS`,
    and not a number."""
    return [
        word
        for word in words(text)
        if len(word) >= 3 and word not in STOPWORDS and not word.isdigit()
    ]


def json_value(value: Any) -> Any:
    """`value`, read as JSON when it is a string holding a JSON object or list.

    Many tool wrappers return their result as JSON text (`'{"error": "not found"}'`); this reads
    it as the dict or list it holds. Any other value, and a string that is not a JSON object or
    list (`"plain-id"`, `"{not json"`), comes back as it is.
    """
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            return value
    return value


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The first `limit` characters of `text`, with `…` when there was more."""
    return text if len(text) <= limit else text[:limit] + "…"


def excerpts(items: list[str]) -> list[str]:
    """The first `EXCERPT_ITEMS` items, each an excerpt, with `… and N more` when there were
    more."""
    shown = [excerpt(item) for item in items[:EXCERPT_ITEMS]]
    if len(items) > EXCERPT_ITEMS:
        shown.append(f"… and {len(items) - EXCERPT_ITEMS} more")
    return shown
