"""Text normalisation and numbers, as the built-in scorers read them."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agenteval.scorers.text import (
    content_words,
    find_numbers,
    fold,
    json_value,
    normalise,
    numbers_equal,
    parse_number,
)

# --- normalise ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris", "paris"),
        ("  Paris  ", "paris"),
        ("Paris.", "paris"),
        ("Paris .", "paris"),
        ("São Paulo", "sao paulo"),
        ("ÉCOLE", "ecole"),
        ("Straße", "strasse"),
        ("New   York\n", "new york"),
        ("ﬁne", "fine"),
        ("\uff11\uff12\uff13", "123"),  # full-width digits
        ("Paris..", "paris.."),
        ("Wait...", "wait..."),
        ("Wait…", "wait..."),
        ("Dr. Who", "dr. who"),
        (".", ""),
        ("", ""),
    ],
)
def test_normalise_examples(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_normalise_drops_only_one_final_period() -> None:
    assert normalise("Paris.") == normalise("Paris")
    assert normalise("Paris..") != normalise("Paris")
    assert normalise("Paris. .") == "paris. ."


def test_fold_keeps_the_final_period() -> None:
    assert fold(" Paris. ") == "paris."


@given(st.text())
def test_fold_is_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)


@given(st.text())
def test_normalise_is_idempotent(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)


@given(st.text())
def test_normalise_ignores_surrounding_space_and_casefolding(text: str) -> None:
    assert normalise(f"  {text}\t\n") == normalise(text)
    assert normalise(text.casefold()) == normalise(text)


@given(st.text(alphabet="abcXYZ .,-"))
def test_normalise_ignores_ascii_case(text: str) -> None:
    assert normalise(text.upper()) == normalise(text.lower())


@given(st.text(alphabet=st.characters(categories=["Lu", "Ll"]), min_size=1))
def test_normalise_ignores_a_final_period(text: str) -> None:
    assert normalise(text + ".") == normalise(text)


# --- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("19,753", 19753.0),
        ("19753", 19753.0),
        ("19753.0", 19753.0),
        ("-3.5", -3.5),
        ("+2", 2.0),
        ("\u22124", -4.0),
        ("1,234,567.89", 1234567.89),
        (".5", 0.5),
        ("  42 ", 42.0),
        ("0", 0.0),
    ],
)
def test_parse_number_reads_english_numbers(text: str, value: float) -> None:
    number = parse_number(text)
    assert number is not None
    assert number.value == value
    assert not number.percent


def test_parse_number_marks_percentages() -> None:
    number = parse_number("12%")
    assert number is not None
    assert (number.value, number.percent) == (12.0, True)
    spaced = parse_number("12.5 %")
    assert spaced is not None
    assert (spaced.value, spaced.percent) == (12.5, True)


@pytest.mark.parametrize(
    "text",
    ["", "abc", "19,753 km", "about 3", "1e3", "1,5", "1.2.3", "3 4", "H2O", "$5", "12,34"],
)
def test_parse_number_refuses_anything_but_one_number(text: str) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("The population is 19,753.", [19753.0]),
        ("between 3 and 5", [3.0, 5.0]),
        ("a range of 3-5", [3.0, 5.0]),
        ("it fell by -3.5 today", [-3.5]),
        ("H2O and gpt4 and v2", []),
        ("10km and the 3rd", [10.0, 3.0]),
        ("version 1.2.3", []),
        ("1,5", [1.0, 5.0]),
        ("2024-01-05", [2024.0, 1.0, 5.0]),
        ("costs $1,234.50 (12%)", [1234.5, 12.0]),
    ],
)
def test_find_numbers(text: str, values: list[float]) -> None:
    assert [mention.value for mention in find_numbers(text)] == values


def test_find_numbers_keeps_the_written_form_and_position() -> None:
    [mention] = find_numbers("about 19,753 people")
    assert mention.text == "19,753"
    assert "about 19,753 people"[mention.start : mention.end] == "19,753"


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_integers_with_thousands_separators_parse_back(number: int) -> None:
    for written in (f"{number:,}", str(number)):
        parsed = parse_number(written)
        assert parsed is not None
        assert parsed.value == number


@given(
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False),
    st.integers(min_value=1, max_value=6),
)
def test_floats_with_thousands_separators_parse_back(number: float, decimals: int) -> None:
    written = f"{number:,.{decimals}f}"
    parsed = parse_number(written)
    assert parsed is not None
    assert numbers_equal(parsed.value, float(f"{number:.{decimals}f}"))
    if decimals >= 2:  # rounding to two places stays within the 0.01 tolerance
        assert numbers_equal(parsed.value, number)


@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False))
def test_a_number_in_a_sentence_is_found(number: float) -> None:
    [mention] = find_numbers(f"The total was {number:,.2f} today.")
    assert numbers_equal(mention.value, number)


# --- numbers_equal -----------------------------------------------------------------------------


def test_numbers_equal_within_a_hundredth() -> None:
    assert numbers_equal(19753.0, 19753)
    assert numbers_equal(19753.004, 19753)
    assert numbers_equal(19753.01, 19753)  # the tolerance is inclusive
    assert not numbers_equal(19753.02, 19753)
    assert not numbers_equal(-3.5, 3.5)
    assert not numbers_equal(float("nan"), float("nan"))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_equal_is_reflexive(number: float) -> None:
    assert numbers_equal(number, number)


@given(st.floats(allow_nan=False, width=32), st.floats(allow_nan=False, width=32))
def test_numbers_equal_is_symmetric(a: float, b: float) -> None:
    assume(abs(a) < 1e30 and abs(b) < 1e30)
    assert numbers_equal(a, b) == numbers_equal(b, a)


# --- content words -----------------------------------------------------------------------------


def test_content_words_skip_stopwords_short_words_and_numbers() -> None:
    assert content_words("The capital of France is Paris, since 1944.") == [
        "capital",
        "france",
        "paris",
    ]


def test_content_words_are_folded() -> None:
    assert content_words("SÃO Paulo's café") == ["sao", "paulo", "cafe"]


# --- json_value ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"error": "not found"}', {"error": "not found"}),
        (' [1, {"id": "a"}]\n', [1, {"id": "a"}]),
        ("{not json", "{not json"),
        ("plain text", "plain text"),
        ('"quoted"', '"quoted"'),
        ("42", "42"),
        ({"already": "a dict"}, {"already": "a dict"}),
        (None, None),
    ],
)
def test_json_value_reads_only_strings_holding_an_object_or_a_list(
    value: object, expected: object
) -> None:
    assert json_value(value) == expected
