"""The first pass that finds where a secret can start (`redaction.starts`) changes nothing:
wherever the combined regex finds a match, so does it, and the other way round.

Compared on the equivalence corpus (every rule head in every context, escaped, in records)
and by a differential fuzz: batches of generated JSON records, joined as the store joins them,
with secrets of every rule and environment secrets planted in every JSON escaping, at record
boundaries and glued to keys, for redactors with no, ordinary and colliding literal secrets.
Each text is checked three ways: the first pass against `pattern.search`, and `redact_text`
against a redactor that searches first, as `redact_text` did before the first pass.

    PYTHONPATH=src:. python tests/test_redaction_starts.py [ROUNDS] [SEED]   # a longer fuzz
"""

from __future__ import annotations

import functools
import json
import random
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.secrets_corpus import CORPUS as SHAPES
from tests.test_redaction_equivalence import (
    ASSIGNS,
    BEFORE,
    COLLIDING,
    CORPUS,
    ENV,
    FRAGMENTS,
    KEYS,
    REDACTORS,
    VALUES,
)

from agenteval.redaction import REDACTED, Redactor
from agenteval.redaction.redactor import _MAX_PASSES
from agenteval.redaction.rules import RULES
from agenteval.redaction.starts import LONGEST_SHARED, start_finder


class SearchFirst(Redactor):
    """`redact_text` as it was before the first pass: one search of the combined regex."""

    def redact_text(self, text: str) -> str:
        pattern = self._pattern
        if pattern.search(text) is None:
            return text
        redacted = text
        for _ in range(_MAX_PASSES):
            again = pattern.sub(self._replace, redacted)
            if again == redacted:
                break
            redacted = again
        return text if redacted == text else redacted


# Literal secrets a finder must also find: made only of common characters (found by
# `str.find`), of one character, glued to rule heads, with quotes and escapes.
ODD_SECRETS = (
    "secretsecret1",
    "neither1rare",
    "x",
    "tokentoken99",
    ' "quoted\\slash ',
    "line\nbreak-secret",
    "café-naïve-2026",
    "日本語のひみつ",
)
FUZZ_REDACTORS = {**REDACTORS, "odd": ODD_SECRETS, "all": (*ENV.values(), *COLLIDING, *ODD_SECRETS)}


@functools.cache
def redactors(values: tuple[str, ...]) -> tuple[Redactor, SearchFirst]:
    return Redactor(values), SearchFirst(values)


def differences(values: tuple[str, ...], texts: list[str]) -> list[tuple[str, str]]:
    """The texts on which the first pass, or `redact_text`, disagrees with a plain search."""
    new, old = redactors(values)
    pattern, starts = new._pattern, new._starts
    found = []
    for text in texts:
        searched = pattern.search(text) is not None
        if starts.any_match(text, pattern) != searched:
            found.append((text, f"first pass says {not searched}, search says {searched}"))
        elif new.redact_text(text) != old.redact_text(text):
            found.append((text, "redact_text differs"))
    return found


# --- generated JSON records --------------------------------------------------------------------

PLANTS = [
    *KEYS,
    *(shape.planted for shape in SHAPES if shape.planted),
    *(shape.value for shape in SHAPES),
    *(
        f"{head}{assign}{value}"
        for head in ("api_key", "Password", "X-Auth-Token", "secret")
        for assign in ASSIGNS
        for value in VALUES[:4]
    ),
    *(
        f"{before}{head}"
        for head in dict.fromkeys(h for r in RULES for h, _ in r.heads)
        for before in ("", "x", "\\n")
    ),
    *ENV.values(),
    *COLLIDING,
    *ODD_SECRETS,
]
WORDS = ["Paris", "answer", "the", "case-17", "0.00012", "tokens", "passed", "keyboard", "é", "✓"]


def _text(rng: random.Random) -> str:
    parts = [rng.choice(WORDS) for _ in range(rng.randint(0, 4))]
    for _ in range(rng.choice((0, 0, 1, 2))):
        parts.insert(rng.randint(0, len(parts)), rng.choice(PLANTS))
    return rng.choice(("", " ", "\n")).join(parts)


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(6 if depth < 3 else 3)
    if kind == 0:
        return _text(rng)
    if kind == 1:
        return rng.choice((0, 1.5, True, None, 123456789))
    if kind == 2:
        return rng.choice(PLANTS)
    if kind == 3:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = [*WORDS, "api_key", "password", "token", "client_secret", "output", "x_token"]
    return {
        (rng.choice(keys) if rng.random() < 0.7 else _text(rng)): _value(rng, depth + 1)
        for _ in range(rng.randint(0, 3))
    }


def record(rng: random.Random) -> str:
    """A record as the store writes one, in one of JSON's escapings (or none)."""
    data = {"case_id": f"case-{rng.randrange(100)}", "output": _value(rng), "meta": _value(rng)}
    how = rng.randrange(4)
    if how == 0:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if how == 1:
        return json.dumps(data)  # non-ASCII escaped
    if how == 2:
        return json.dumps(json.dumps(data, ensure_ascii=False))  # escaped twice
    return rng.choice(PLANTS) + json.dumps(data)[: rng.randint(0, 80)] + rng.choice(PLANTS)


def batch(rng: random.Random) -> str:
    """Records joined as `encoding.redacted` joins them, secrets at their boundaries too."""
    return "\n".join(record(rng) for _ in range(rng.randint(1, 12)))


def fuzz(rounds: int, seed: int) -> tuple[int, int, list[tuple[str, str]]]:
    """(texts compared, texts with a match, differences) over `rounds` batches per redactor,
    each batch also cut at random points (a text shorter than the first pass's threshold is
    compared too)."""
    rng = random.Random(seed)
    compared = matched = 0
    found: list[tuple[str, str]] = []
    for values in FUZZ_REDACTORS.values():
        pattern = redactors(values)[0]._pattern
        for _ in range(rounds):
            text = batch(rng)
            start = rng.randrange(len(text) + 1)
            texts = [text, text[start:], text[start : start + rng.randint(1, 70)]]
            compared += len(texts)
            matched += sum(pattern.search(t) is not None for t in texts)
            found.extend(differences(values, texts))
    return compared, matched, found


# --- tests --------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", FUZZ_REDACTORS.values(), ids=FUZZ_REDACTORS.keys())
def test_the_first_pass_agrees_with_a_search_on_the_corpus(values: tuple[str, ...]) -> None:
    assert differences(values, CORPUS) == []


def test_the_first_pass_agrees_with_a_search_on_generated_records() -> None:
    compared, matched, found = fuzz(rounds=150, seed=20261202)
    assert found == [], found[:3]
    assert compared > 2000
    assert compared // 10 < matched < compared - compared // 10  # secrets and none, both


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(list(FUZZ_REDACTORS.values())),
    st.lists(
        st.one_of(st.sampled_from([*FRAGMENTS, *PLANTS, *BEFORE]), st.text(max_size=6)),
        max_size=16,
    ).map("".join),
)
def test_the_first_pass_agrees_with_a_search_on_any_mix(values: tuple[str, ...], text: str) -> None:
    assert differences(values, [text, json.dumps(text), json.dumps(text, ensure_ascii=False)]) == []


def test_every_head_is_found_wherever_it_stands() -> None:
    """Each head alone, at the start, the end and the middle of a long text: the finder stops
    where it is (checked with a regex matching that head alone)."""
    heads = [*dict.fromkeys(h for r in RULES for h, _ in r.heads), *ODD_SECRETS, "a", "::"]
    finder = start_finder(heads)
    filler = "0" * 100
    for head in heads:
        alone = re.compile(re.escape(head))
        for text in (head + filler, filler + head, filler + head + filler, head):
            assert finder.any_match(text, alone), (head, text[:20])
        assert not finder.any_match(filler, alone)


def test_a_redactor_s_answer_is_unchanged_on_long_clean_and_dirty_text() -> None:
    redactor = Redactor(ENV.values())
    clean = json.dumps({"output": "Paris", "started_at": "2026-12-02T19:50:50Z"}) * 50
    assert redactor.redact_text(clean) is clean
    dirty = clean + f'"api_key": "abc123def456"{ENV["DB_PASSWORD"]}'
    assert redactor.redact_text(dirty) == SearchFirst(ENV.values()).redact_text(dirty)
    assert REDACTED in redactor.redact_text(dirty)


@pytest.mark.parametrize(
    "text",
    [
        "x_secret_secret=abc123def456",
        "client_secret client_secret=abc123def456",
        "secretsecret-secret=abc123def456",
        "api_key api_key api_key=abc123def456",
        "Bearer Bearer Bearer abcDEF0123456789xyz",
        "sk-sk-sk-sk-0123456789abcdefghijKLMN",
    ],
)
def test_only_the_last_of_repeated_heads_holds_a_secret(text: str) -> None:
    """Every occurrence of an anchor is visited, not only the first: here only the last head
    leads to a secret."""
    assert differences((), [text, text * 3]) == []
    assert REDACTED in Redactor().redact_text(text)


def test_a_long_secret_of_common_characters_is_found_by_a_short_text() -> None:
    """An environment secret made only of common characters (a long hex key) is found by a
    part of it at most `LONGEST_SHARED` long: counting every part of it took the cube of its
    length to build (an 800-character one: 7.2 s). Found wherever it stands, and redacted."""
    secret = "".join(random.Random(3).choice("0123456789acdef") for _ in range(800))
    finder = start_finder([secret])
    assert all(len(text) <= LONGEST_SHARED for text, _ in finder.texts)
    alone = re.compile(re.escape(secret))
    filler = '{"output": "Paris"}' * 10
    for text in (secret, filler + secret, secret + filler, filler + secret + filler):
        assert finder.any_match(text, alone)
    assert not finder.any_match(filler + secret[:-1] + filler, alone)
    assert secret not in Redactor([secret]).redact_text(filler + json.dumps(secret) + filler)


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    compared, matched, found = fuzz(rounds, seed)
    print(f"{compared} texts compared ({matched} with a match), {len(found)} differences")
    for text, why in found[:5]:
        print(why, repr(text[:200]))
    sys.exit(1 if found else 0)
