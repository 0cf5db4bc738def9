"""The deterministic built-in scorers give, byte for byte, the scores main gave before they were
made cheaper (issue 21): every score of the golden corpus (`golden/make_golden.py`, which says
what it holds and how to regenerate it) as `model_dump_json()`, as stored, its fields set and
its verdict."""

from __future__ import annotations

import gzip
import json

from tests.scorers.golden.make_golden import GOLDEN, lines


def test_the_built_ins_give_the_golden_scores_byte_for_byte() -> None:
    expected = gzip.decompress(GOLDEN.read_bytes()).decode().splitlines()
    actual = list(lines())
    assert len(actual) == len(expected)
    differ = [(want, got) for want, got in zip(expected, actual, strict=True) if want != got]
    shown = [f"- {want}\n+ {got}" for want, got in differ[:5]]
    assert not differ, f"{len(differ)} of {len(expected)} scores differ:\n" + "\n".join(shown)


def test_the_corpus_scores_every_built_in_both_ways() -> None:
    seen = {(one["scorer"], one["mode"], one["passed"]) for one in map(json.loads, lines())}
    for name in ("exact_match", "tool_faithfulness", "redundant_calls", "state_match"):
        for mode in ("live", "store"):
            assert {(name, mode, True), (name, mode, False), (name, mode, None)} <= seen
