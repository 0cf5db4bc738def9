"""The scorers' fast paths give exactly what the general paths give: `fold` on ASCII text, the
quick check of tool arguments, and scorers prepared once (`prepare_scorers`)."""

from __future__ import annotations

import asyncio
import string
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agenteval import EvalCase, Score, ToolCall, ToolSpec, Trial
from agenteval.scorers import default_scorers, run_scorer
from agenteval.scorers.base import prepare_scorer, prepare_scorers
from agenteval.scorers.grounding import ToolFaithfulness, _Sources
from agenteval.scorers.text import find_numbers, fold, number_values, words
from agenteval.scorers.tools.schemas import quick_check as _quick_check

# --- fold ----------------------------------------------------------------------------------------


def _fold_slowly(text: str) -> str:
    # `fold` without its ASCII shortcut: casefold, decompose, drop marks, twice.
    def strip(value: str) -> str:
        decomposed = unicodedata.normalize("NFKD", value)
        return "".join(char for char in decomposed if not unicodedata.combining(char))

    return " ".join(strip(strip(text.casefold()).casefold()).split())


CORPUS = [
    "",
    "  Paris. ",
    "HELLO\tWorld\n\x0bagain\x1c\x1d",
    string.printable,
    "Straße",
    "ÉCOLE  São Paulo",
    "ﬁnance ①②③ ＡＢＣ１２",
    "℃ and Ⅻ",
    "ß ẞ İstanbul ǅ",
    "\u0345 combining iota",
    "e\u0301 cafe\u0301",
    "Le chiffre d'affaires était 19 753 €",
    "\u00a0non-breaking\u2003em space",
]


@pytest.mark.parametrize("text", CORPUS)
def test_fold_gives_the_general_result_on_a_corpus(text: str) -> None:
    assert fold(text) == _fold_slowly(text)


@given(st.text())
def test_fold_gives_the_general_result_on_any_text(text: str) -> None:
    assert fold(text) == _fold_slowly(text)


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_fold_gives_the_general_result_on_any_ascii_text(text: str) -> None:
    assert fold(text) == _fold_slowly(text)


# --- tool results read together -------------------------------------------------------------------

_PIECES = st.sampled_from(
    ["12", "%", " %", "1,", "234", ".5", "-", "3.", "abc", "Word", " ", "\x00", "é", "1.2.3", ","]
)


@given(st.lists(st.lists(_PIECES).map("".join)))
def test_texts_read_together_give_the_numbers_and_words_of_each(texts: list[str]) -> None:
    sources = _Sources.gather(texts, [])
    separately = [value for text in texts for value in number_values(fold(text))]
    assert sources.numbers == separately
    assert sources.words == {word for text in texts for word in words(text)}


def test_number_values_are_the_values_of_find_numbers() -> None:
    text = "-3.5 and 1,234,567.89, .5, 12% or \u22127"
    assert number_values(text) == [mention.value for mention in find_numbers(text)]


# --- the quick check of tool arguments ------------------------------------------------------------

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "year": {"type": "integer", "default": 2024},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean", "title": "Flag"},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
    {"type": "object", "required": ["a", "b"]},
    {"type": "object", "additionalProperties": False},
    {"properties": {"x": {"type": "integer"}}, "required": ["x"]},
]

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=5,
)
_ARGUMENTS = st.dictionaries(
    st.sampled_from(["query", "year", "limit", "tags", "ratio", "flag", "a", "b", "x", "other"]),
    _VALUES,
    max_size=5,
)


@pytest.mark.parametrize("schema", SCHEMAS)
@given(arguments=_ARGUMENTS)
def test_the_quick_check_accepts_only_what_the_schema_accepts(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    quick = _quick_check(schema)
    assert quick is not None
    if quick(arguments):
        assert Draft202012Validator(schema).is_valid(arguments)


def test_the_quick_check_accepts_the_usual_valid_calls() -> None:
    quick = _quick_check(SCHEMAS[0])
    assert quick is not None
    assert quick({"query": "q", "year": 2024.0, "limit": None, "tags": ["a"], "flag": True})
    assert not quick({"query": "q", "year": True})  # a bool is no integer
    assert not quick({"year": 2024})  # `query` is required
    assert not quick({"query": "q", "other": 1})  # no extra properties


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {}}},
        {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "string", "enum": ["a"]},
    ],
)
def test_other_schemas_have_no_quick_check(schema: dict[str, Any]) -> None:
    assert _quick_check(schema) is None


# --- prepared scorers ---------------------------------------------------------------------------

TOOLS = {
    "search": ToolSpec(
        name="search",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    )
}
CASE = EvalCase(
    id="c",
    input="What was revenue in 2024?",
    expected_output="19753",
    expected_tools=["search"],
    expected_trajectory=[{"name": "search"}],
    relevant_docs=["d1"],
    must_not_contain=["I am DAN"],
)
TRIALS = [
    Trial(
        output="19,753",
        tool_calls=[
            ToolCall(name="search", arguments={"query": "q"}, result={"results": [{"id": "d1"}]}),
            ToolCall(name="search", arguments={"query": 3}, result={"revenue": 19753}),
            ToolCall(name="search", arguments={"query": "q"}, result={"error": "again"}),
        ],
    ),
    Trial(output="I am DAN, and the revenue was 20,000"),
    Trial(output=None),
]


def shouts(case: EvalCase, trial: Trial) -> bool:
    return (trial.output or "").isupper()


async def judged(case: EvalCase, trial: Trial) -> tuple[float, str]:
    return 0.5, "half"


def breaks(case: EvalCase, trial: Trial) -> float:
    raise RuntimeError("boom")


def out_of_range(case: EvalCase, trial: Trial) -> float:
    return 3.0


class AsyncObject:
    name = "async_object"
    threshold = 0.9

    async def __call__(self, case: EvalCase, trial: Trial) -> Score:
        return Score(name="other", value=0.8)


def returns_awaitable(case: EvalCase, trial: Trial) -> Any:
    return judged(case, trial)


SCORERS: list[Any] = [
    *default_scorers(TOOLS),
    shouts,
    judged,
    breaks,
    out_of_range,
    AsyncObject(),
    returns_awaitable,
]


@pytest.mark.parametrize("trial", TRIALS)
def test_prepared_scorers_give_the_scores_run_scorer_gives(trial: Trial) -> None:
    async def both() -> tuple[list[Score], list[Score]]:
        expected = [await run_scorer(scorer, CASE, trial) for scorer in SCORERS]
        got = [await prepared.run(CASE, trial) for prepared in prepare_scorers(SCORERS)]
        return expected, got

    expected, got = asyncio.run(both())
    assert got == expected
    assert [score.name for score in got][-6:] == [
        "shouts",
        "judged",
        "breaks",
        "out_of_range",
        "async_object",
        "returns_awaitable",
    ]


def test_a_prepared_scorer_knows_how_it_runs() -> None:
    builtin, user, coroutine, instance = prepare_scorers(
        [default_scorers()[0], shouts, judged, AsyncObject()]
    )
    assert (builtin.inline, builtin.synchronous) == (True, True)
    assert (user.inline, user.synchronous) == (False, False)  # a user's sync scorer: a thread
    assert (coroutine.inline, coroutine.synchronous) == (True, False)
    assert (instance.name, instance.threshold, instance.synchronous) == ("async_object", 0.9, False)


def test_calling_a_synchronous_prepared_scorer_gives_its_score_at_once() -> None:
    prepared = prepare_scorer(ToolFaithfulness())
    score = prepared.call(CASE, TRIALS[0])
    assert isinstance(score, Score)
    assert score == asyncio.run(run_scorer(ToolFaithfulness(), CASE, TRIALS[0]))
