"""What model calls cost: a price table per model, shipped as data, that a user can extend.

The table ships as `agenteval/data/prices.yaml` (US dollars per million tokens: `input`,
`output`, `cached_input`) and is as current as its `as_of` date. A project adds or replaces
models under `prices:` in `agenteval.yaml`; `PriceTable.default().with_overrides(...)` applies
that section.

Token accounting, as `agenteval.trace.Usage` holds it:
- `input_tokens` counts every input token, cached ones included; `cached_tokens` is the part of
  them served from the provider's prompt cache. Cached tokens are charged at `cached_input` (at
  `input` when a model has no cached price), the rest at `input`.
- `output_tokens` counts every output token, reasoning ("thinking") tokens included, so
  `reasoning_tokens` is a breakdown of output and is never charged a second time.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator, Mapping
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.errors import ConfigError
from agenteval.trace import Usage

__all__ = ["ModelPrice", "PriceTable", "no_price_message"]

_PER_TOKENS = 1_000_000
_DATA_FILE = "prices.yaml"
_FIELDS_HINT = (
    "each model under `prices:` takes `input`, `output` and optionally `cached_input`,"
    " in US dollars per million tokens"
)
# What may follow a known model name for the name to be a snapshot of that model: a date or
# version number (`-2024-08-06`, `-20250514`, `@20250514`, `-001`) or `latest`. A name
# followed by a word (`gpt-4o-mini`, `o3-pro`, `gemini-2.5-flash-lite`) or a short number
# (`claude-opus-4-5`) is another model, priced differently, and is never priced as this one.
_SNAPSHOT = re.compile(r"[-@](?:\d{3,}|latest)(?![a-z\d])")


class ModelPrice(BaseModel):
    """One model's prices, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Strict: a YAML `true` or a quoted "3" is a mistake to report, not a number to guess.
    input: float = Field(ge=0, strict=True, allow_inf_nan=False)
    """Input tokens not served from the prompt cache."""
    output: float = Field(ge=0, strict=True, allow_inf_nan=False)
    """Output tokens, reasoning tokens included."""
    cached_input: float | None = Field(default=None, ge=0, strict=True, allow_inf_nan=False)
    """Input tokens served from the prompt cache; when None they cost `input`."""

    def cost(self, usage: Usage) -> float:
        """What `usage` costs at these prices, in US dollars.

        Cached tokens are charged at `cached_input` and the other input tokens at `input`;
        output tokens (reasoning included, never counted twice) at `output`.
        """
        cached = max(usage.cached_tokens, 0)
        uncached = max(usage.input_tokens - cached, 0)
        output = max(usage.output_tokens, 0)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        total = uncached * self.input + cached * cached_rate + output * self.output
        return total / _PER_TOKENS


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    as_of: date
    note: str = ""
    models: dict[str, ModelPrice]


def no_price_message(model: str) -> str:
    """What to tell a user whose model has no price."""
    return f"no price for model {model!r}: add it under `prices:` in agenteval.yaml"


class PriceTable(Mapping[str, ModelPrice]):
    """Prices by model name, and the cost of a model's token usage.

    A read-only mapping of the models it knows by their exact names; `price_for` also finds a
    model written another way (see there).
    """

    def __init__(self, prices: Mapping[str, ModelPrice], *, as_of: date | None = None) -> None:
        self._prices: dict[str, ModelPrice] = dict(prices)
        self._as_of = as_of
        self._by_lower: dict[str, str] = {}
        for name in self._prices:
            self._by_lower.setdefault(name.lower(), name)
        # Longest first, so `gpt-4o-mini-2024-07-18` finds `gpt-4o-mini` before `gpt-4o`.
        self._longest_first = sorted(self._by_lower, key=len, reverse=True)
        self._resolved: dict[str, str | None] = {}

    @classmethod
    def default(cls) -> PriceTable:
        """The price table shipped with agenteval (`agenteval/data/prices.yaml`)."""
        return _shipped_table()

    @classmethod
    def from_yaml(cls, text: str, *, file: str | Path | None = None) -> PriceTable:
        """A table read from YAML text laid out as the shipped `prices.yaml`."""
        try:
            # libyaml's loader where PyYAML has it: the shipped table loads ~10× faster.
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ConfigError(
                f"invalid YAML: {getattr(exc, 'problem', exc)}",
                file=file,
                line=mark.line + 1 if mark is not None else None,
            ) from None
        try:
            parsed = _PriceFile.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or None
            raise ConfigError(
                f"not a valid price table: {error['msg']}", file=file, field=field
            ) from None
        return cls(parsed.models, as_of=parsed.as_of)

    @property
    def as_of(self) -> date | None:
        """The date the shipped prices were last checked (None for a table built in code)."""
        return self._as_of

    def with_overrides(
        self, overrides: Mapping[str, Any] | None, *, file: str | Path | None = None
    ) -> PriceTable:
        """A new table with a user's `prices:` section applied: each model given replaces the
        known one of the same name (whatever its case) or is added.

        `overrides` maps a model name to `{input, output, cached_input?}`. A bad entry raises
        `ConfigError` naming the model and the field (and `file`, when given).
        """
        if overrides is None:
            return self
        if not isinstance(overrides, Mapping):
            raise ConfigError(
                f"`prices:` must map model names to prices, not {type(overrides).__name__}",
                file=file,
                field="prices",
                hint=_FIELDS_HINT,
            )
        added: dict[str, ModelPrice] = {}
        for name, entry in overrides.items():
            if not isinstance(name, str) or not name.strip():
                raise ConfigError(
                    f"a model name under `prices:` must be text, not {name!r}",
                    file=file,
                    field="prices",
                    hint="quote the model name",
                )
            added[name.strip()] = _validate_entry(name.strip(), entry, file)
        lowered = {name.lower() for name in added}
        merged = {
            name: price for name, price in self._prices.items() if name.lower() not in lowered
        }
        merged.update(added)
        return PriceTable(merged, as_of=self._as_of)

    def resolve(self, model: str) -> str | None:
        """The known model name that `model` is priced as, or None.

        In order: the exact name; the name in any case; the name without a provider prefix
        (`openai:gpt-4o`, `openai/gpt-4o`, `models/gemini-2.5-flash`); then the longest known
        name that `model` starts with, followed by `-` or `@` and a snapshot tag, a date or
        version number or `latest` (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`,
        `claude-sonnet-4@20250514`). A different model that merely shares a prefix
        (`gpt-4o-mini`, `o3-pro`) is never priced as the shorter name.
        """
        if model in self._prices:
            return model
        if model in self._resolved:
            return self._resolved[model]
        found = self._search(model)
        self._resolved[model] = found
        return found

    def price_for(self, model: str) -> ModelPrice | None:
        """The prices of `model` (found as `resolve` says), or None when it has none."""
        name = self.resolve(model)
        return None if name is None else self._prices[name]

    def cost(self, model: str, usage: Usage) -> float | None:
        """What `usage` of `model` costs in US dollars, or None when the model has no price
        (tell the user `no_price_message(model)`).

        Cached input tokens cost `cached_input` (or `input` when the model has no cached
        price), the other input tokens `input`, and output tokens `output`; reasoning tokens
        are part of the output tokens and are not charged again.
        """
        price = self.price_for(model)
        return None if price is None else price.cost(usage)

    def __getitem__(self, model: str) -> ModelPrice:
        return self._prices[model]

    def __iter__(self) -> Iterator[str]:
        return iter(self._prices)

    def __len__(self) -> int:
        return len(self._prices)

    def __repr__(self) -> str:
        as_of = f", as_of={self._as_of.isoformat()}" if self._as_of else ""
        return f"PriceTable({len(self._prices)} models{as_of})"

    def _search(self, model: str) -> str | None:
        candidates = _candidates(model.strip().lower())
        for candidate in candidates:
            if candidate in self._by_lower:
                return self._by_lower[candidate]
        for candidate in candidates:
            for known in self._longest_first:
                if candidate.startswith(known) and _SNAPSHOT.match(candidate, len(known)):
                    return self._by_lower[known]
        return None


def _candidates(lowered: str) -> list[str]:
    """`lowered`, then the same name without a provider prefix."""
    names = [lowered]
    if ":" in lowered:
        names.append(lowered.split(":", 1)[1])
    for name in list(names):
        if "/" in name:
            names.append(name.rsplit("/", 1)[1])
    return list(dict.fromkeys(name for name in names if name))


def _validate_entry(name: str, entry: Any, file: str | Path | None) -> ModelPrice:
    try:
        return ModelPrice.model_validate(entry)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(part) for part in error["loc"]]
        field = ".".join(["prices", name, *loc])
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(loc[-1], ModelPrice.model_fields, n=1)
            message = f"price for model {name!r}: unknown field {loc[-1]!r}"
            hint = f"did you mean {close[0]!r}? {_FIELDS_HINT}" if close else _FIELDS_HINT
        elif error["type"] == "missing":
            message = f"price for model {name!r}: missing {loc[-1]!r}"
            hint = _FIELDS_HINT
        elif not loc:
            message = f"price for model {name!r} must be a mapping, not {entry!r}"
            hint = _FIELDS_HINT
        else:
            message = (
                f"price for model {name!r}: {loc[-1]!r} {error['msg'][0].lower()}"
                f"{error['msg'][1:]} (got {error.get('input')!r})"
            )
            hint = "give a number of US dollars per million tokens, such as 2.5"
        raise ConfigError(message, file=file, field=field, hint=hint) from None


@functools.cache
def _shipped_table() -> PriceTable:
    source = resources.files("agenteval").joinpath("data", _DATA_FILE)
    return PriceTable.from_yaml(source.read_text(encoding="utf-8"), file=str(source))
