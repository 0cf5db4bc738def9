"""The price table: finding a model's price, what usage costs, and a user's overrides."""

from __future__ import annotations

from datetime import date
from importlib import resources
from typing import Any

import pytest

from agenteval.errors import ConfigError
from agenteval.pricing import ModelPrice, PriceTable, no_price_message
from agenteval.trace import Usage

OPENAI = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini"]
OPENAI += ["gpt-5", "gpt-5-mini", "gpt-5-nano"]
ANTHROPIC = ["claude-opus-4-1", "claude-opus-4", "claude-sonnet-4-5", "claude-sonnet-4"]
ANTHROPIC += ["claude-haiku-4-5", "claude-3-5-haiku"]
GOOGLE = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"]


@pytest.fixture
def table() -> PriceTable:
    return PriceTable.default()


def test_the_data_file_ships_in_the_package() -> None:
    source = resources.files("agenteval") / "data" / "prices.yaml"
    assert source.is_file()
    assert "as_of: 2026-11-30" in source.read_text(encoding="utf-8")


def test_the_default_table_prices_the_well_known_models(table: PriceTable) -> None:
    assert table.as_of == date(2026, 11, 30)
    for model in OPENAI + ANTHROPIC + GOOGLE:
        price = table.price_for(model)
        assert price is not None, model
        assert 0 < price.input < price.output, model
        assert price.cached_input is not None and price.cached_input < price.input, model
    assert PriceTable.default() is table  # loaded once


def test_exact_match(table: PriceTable) -> None:
    assert table.price_for("gpt-4o") == ModelPrice(input=2.5, output=10.0, cached_input=1.25)
    assert table.price_for("gpt-4o-mini") == ModelPrice(input=0.15, output=0.6, cached_input=0.075)
    assert table.price_for("claude-sonnet-4") == ModelPrice(input=3, output=15, cached_input=0.3)
    assert table.price_for("gemini-2.5-flash") == ModelPrice(
        input=0.3, output=2.5, cached_input=0.03
    )
    assert table["o3"].output == 8.0
    assert "gpt-5" in table


def test_case_does_not_matter(table: PriceTable) -> None:
    assert table.resolve("GPT-4o") == "gpt-4o"
    assert table.resolve("Claude-Sonnet-4-5") == "claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("model", "known"),
    [
        ("openai:gpt-4o", "gpt-4o"),
        ("openai/gpt-4o", "gpt-4o"),
        ("openai:gpt-4o-mini", "gpt-4o-mini"),
        ("anthropic:claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("google:models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("OpenAI:GPT-4.1", "gpt-4.1"),
    ],
)
def test_provider_prefixes_are_stripped(table: PriceTable, model: str, known: str) -> None:
    assert table.resolve(model) == known


@pytest.mark.parametrize(
    ("model", "known"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-2025-04-14", "gpt-4.1"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("gpt-5-nano-2025-08-07", "gpt-5-nano"),
        ("o3-2025-04-16", "o3"),
        ("o4-mini-2025-04-16", "o4-mini"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-sonnet-4@20250514", "claude-sonnet-4"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("claude-opus-4-0", "claude-opus-4-0"),
        ("openai:gpt-4o-2024-11-20", "gpt-4o"),
        ("models/gemini-2.5-flash-001", "gemini-2.5-flash"),
    ],
)
def test_dated_snapshots_are_priced_as_their_model(
    table: PriceTable, model: str, known: str
) -> None:
    assert table.resolve(model) == known


def test_the_longest_prefix_wins(table: PriceTable) -> None:
    mini = table.price_for("gpt-4o-mini")
    base = table.price_for("gpt-4o")
    assert mini is not None and base is not None and mini != base
    assert table.price_for("gpt-4o-mini-2024-07-18") == mini
    assert table.price_for("gpt-4o-2024-08-06") == base
    assert table.resolve("gpt-4.1-nano-2025-04-14") == "gpt-4.1-nano"
    assert table.resolve("gemini-2.5-flash-lite") == "gemini-2.5-flash-lite"


def test_a_mini_model_is_never_priced_as_its_base_model() -> None:
    # Even when the table does not know the mini model at all.
    only_base = PriceTable({"gpt-4o": ModelPrice(input=2.5, output=10)})
    assert only_base.price_for("gpt-4o-mini") is None
    assert only_base.price_for("gpt-4o-mini-2024-07-18") is None
    assert only_base.resolve("gpt-4o-2024-08-06") == "gpt-4o"


@pytest.mark.parametrize(
    "model",
    [
        "no-such-model",
        "llama3:8b",
        "gpt-4",
        "o3-pro",  # another model with a much higher price than o3
        "o3-mini",
        "gpt-5-pro",
        "claude-opus-4-6",  # not claude-opus-4, which costs three times as much
        "gemini-2.5-flash-preview-04-17",
        "gpt-4o-realtime-preview",
        "",
    ],
)
def test_unknown_models_have_no_price(table: PriceTable, model: str) -> None:
    assert table.price_for(model) is None
    assert table.cost(model, Usage(input_tokens=10, output_tokens=10)) is None


def test_no_price_message_names_the_model_and_the_fix() -> None:
    message = no_price_message("acme-llm")
    assert "'acme-llm'" in message
    assert "prices:" in message and "agenteval.yaml" in message


# -- cost -------------------------------------------------------------------------------------


def test_cost_without_cache(table: PriceTable) -> None:
    # gpt-4o: $2.50 in, $10 out per million.
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000)
    assert table.cost("gpt-4o", usage) == pytest.approx(2.5 + 1.0, abs=1e-12)


def test_cached_tokens_are_charged_at_the_cached_price(table: PriceTable) -> None:
    # 1,000,000 input of which 400,000 cached; 200,000 output.
    # gpt-4o: 600,000 x 2.50 + 400,000 x 1.25 + 200,000 x 10 = 1.50 + 0.50 + 2.00 = $4.00
    usage = Usage(input_tokens=1_000_000, cached_tokens=400_000, output_tokens=200_000)
    assert table.cost("gpt-4o", usage) == pytest.approx(4.0, abs=1e-12)
    # claude-sonnet-4: 600,000 x 3 + 400,000 x 0.30 + 200,000 x 15 = 1.80 + 0.12 + 3.00 = $4.92
    assert table.cost("claude-sonnet-4-20250514", usage) == pytest.approx(4.92, abs=1e-12)


def test_reasoning_tokens_are_not_charged_twice(table: PriceTable) -> None:
    # o3: 2,000 x $2 + 5,000 x $8 (3,000 of them reasoning) = 0.004 + 0.040 = $0.044
    usage = Usage(input_tokens=2_000, output_tokens=5_000, reasoning_tokens=3_000)
    assert table.cost("o3", usage) == pytest.approx(0.044, abs=1e-15)


def test_a_model_without_cached_price_charges_cached_tokens_at_input() -> None:
    table = PriceTable({"local": ModelPrice(input=1.0, output=2.0)})
    usage = Usage(input_tokens=1_000, cached_tokens=600, output_tokens=500)
    # 1,000 x $1 + 500 x $2 = $0.002
    assert table.cost("local", usage) == pytest.approx(0.002, abs=1e-15)


def test_small_judge_call_cost(table: PriceTable) -> None:
    # gpt-4o-mini: 1,200 in (1,024 cached), 150 out:
    # 176 x 0.15 + 1,024 x 0.075 + 150 x 0.60 = 26.4 + 76.8 + 90 = 193.2 per million -> $0.0001932
    usage = Usage(input_tokens=1_200, cached_tokens=1_024, output_tokens=150)
    assert table.cost("openai:gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.0001932, abs=1e-15)


def test_more_cached_than_input_tokens_never_goes_negative() -> None:
    price = ModelPrice(input=1.0, output=1.0, cached_input=0.5)
    assert price.cost(Usage(input_tokens=10, cached_tokens=20)) == pytest.approx(1e-5)


def test_zero_usage_costs_nothing(table: PriceTable) -> None:
    assert table.cost("gpt-5", Usage()) == 0.0


# -- overrides --------------------------------------------------------------------------------


def test_overrides_replace_and_add_models(table: PriceTable) -> None:
    overridden = table.with_overrides(
        {
            "gpt-4o": {"input": 2.0, "output": 8.0},
            "acme-llm": {"input": 1, "output": 3, "cached_input": 0.25},
        }
    )
    assert overridden.price_for("gpt-4o") == ModelPrice(input=2.0, output=8.0)
    assert overridden.price_for("gpt-4o-2024-08-06") == ModelPrice(input=2.0, output=8.0)
    assert overridden.price_for("acme-llm") == ModelPrice(input=1, output=3, cached_input=0.25)
    assert overridden.resolve("openai:acme-llm-20260101") == "acme-llm"
    # Everything else is kept, and the original table is unchanged.
    assert overridden.price_for("gpt-4o-mini") == table.price_for("gpt-4o-mini")
    assert len(overridden) == len(table) + 1
    assert table.price_for("gpt-4o") == ModelPrice(input=2.5, output=10.0, cached_input=1.25)
    assert table.price_for("acme-llm") is None
    assert overridden.as_of == table.as_of


def test_an_override_replaces_a_model_written_in_another_case(table: PriceTable) -> None:
    overridden = table.with_overrides({"GPT-4o": {"input": 1, "output": 1}})
    assert overridden.price_for("gpt-4o") == ModelPrice(input=1, output=1)
    assert len(overridden) == len(table)


def test_no_overrides_is_the_same_table(table: PriceTable) -> None:
    assert table.with_overrides(None) is table
    assert dict(table.with_overrides({})) == dict(table)


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ({"input": "cheap", "output": 1}, "prices.gpt-4o.input", "valid number"),
        ({"input": -1, "output": 1}, "prices.gpt-4o.input", "greater than or equal"),
        ({"input": 1, "output": True}, "prices.gpt-4o.output", "valid number"),
        ({"input": 1, "output": float("inf")}, "prices.gpt-4o.output", "finite"),
        ({"input": 1}, "prices.gpt-4o.output", "missing 'output'"),
        ({"input": 1, "output": 2, "cache_input": 0.5}, "prices.gpt-4o.cache_input", "unknown"),
        (2.5, "prices.gpt-4o", "must be a mapping"),
    ],
)
def test_a_bad_override_names_the_model_and_field(
    table: PriceTable, entry: Any, field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        table.with_overrides({"gpt-4o": entry}, file="agenteval.yaml")
    error = caught.value
    assert error.field == field
    assert error.file == "agenteval.yaml"
    assert "'gpt-4o'" in error.message
    assert words in error.message
    assert error.hint


def test_a_misspelt_field_gets_a_suggestion(table: PriceTable) -> None:
    with pytest.raises(ConfigError) as caught:
        table.with_overrides({"m": {"input": 1, "output": 2, "cache_input": 0.5}})
    assert caught.value.hint is not None and "'cached_input'" in caught.value.hint


def test_prices_must_be_a_mapping(table: PriceTable) -> None:
    with pytest.raises(ConfigError) as caught:
        table.with_overrides(["gpt-4o"])  # type: ignore[arg-type]
    assert caught.value.field == "prices"
    with pytest.raises(ConfigError):
        table.with_overrides({"": {"input": 1, "output": 1}})


def test_a_table_from_yaml_text() -> None:
    text = "as_of: 2026-01-01\nmodels:\n  m: {input: 1, output: 2}\n"
    table = PriceTable.from_yaml(text)
    assert table.as_of == date(2026, 1, 1)
    assert table.cost("m", Usage(input_tokens=1_000_000)) == 1.0
    with pytest.raises(ConfigError, match="invalid YAML"):
        PriceTable.from_yaml("models: [", file="p.yaml")
    with pytest.raises(ConfigError) as caught:
        PriceTable.from_yaml("as_of: 2026-01-01\nmodels:\n  m: {input: x, output: 2}\n")
    assert caught.value.field == "models.m.input"
