"""One sampling path for every structured ask of a model: the judge's verdicts and the simulated
user's replies (`agenteval.simulation`) both go through `Sampler.ask`.

An ask is one cache key and one request. `ask` takes the answer from the cache when it was asked
before; shares one provider call between identical asks made at the same time; holds the run's
limits (calls in flight, per-minute budgets, the endpoint's adaptive limit that follows the
provider's 429s and their `Retry-After`); retries by reason (429, 5xx, connection:
`failures.classify`); asks once more when the model's object cannot be read (out of shape, a
refusal, no structured output), then gives up, naming what was wrong. Only an answer that was
read is cached. What the caller reads the returned object into (a `Verdict`, a `UserReply`) is
its `read` function: the path knows nothing of verdicts.

Secrets: the caller redacts what it puts in the key and the request with `redact_block`, the
request's two messages are redacted once more as they leave (`Sampler.redact`), and an error or
a raw answer kept for a record is redacted here.
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Self, TypeVar

from aiolimiter import AsyncLimiter
from pydantic import ValidationError

from agenteval.failures import classify, retry_after_s
from agenteval.judge.cache import CachedVerdict, JudgeCache, NullCache
from agenteval.judge.provider import JudgeRequest, Provider
from agenteval.judge.settings import JudgeConfig
from agenteval.pricing import PriceTable
from agenteval.providers.throttle import RetryBudget, endpoint, shared_limit
from agenteval.redaction import Redactor
from agenteval.retry import RetryPolicy
from agenteval.trace import FailureCause, Usage, utc_now

__all__ = ["Asked", "Reading", "Sampler", "problem"]

T = TypeVar("T")

_REMEMBERED_BLOCKS = 256
"""Redacted blocks a sampler remembers (the texts of the trials being asked about now)."""


@dataclass
class Asked(Generic[T]):
    """What one ask gave: the object read (`value`), or why there is none (`error`, and the
    failure's `cause` when the provider was the trouble: `rate_limited` and the like)."""

    value: T | None = None
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    usage_recorded: bool = True
    """False when a provider's answer carried no token usage (a proxy that strips it): `usage`
    then leaves those calls out, and what the ask cost is unknown, never free."""
    model: str | None = None
    cached: bool = False
    retries: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    cause: FailureCause | None = None
    """Why the provider gave nothing (after the retries); None when the answer could not be
    read (out of shape, refused) or there was no error."""
    retry_after_s: float | None = None
    """The wait the provider last asked for, when it refused for its rate limit."""


@dataclass(frozen=True)
class Reading(Generic[T]):
    """How an ask's answer is read: `read` turns the model's object into the value (raising
    `ValueError` or `ValidationError` when it cannot), `keep` is what the cache stores of a
    value read (read again on a hit); `invalid` names the error of an answer out of shape,
    `missing` the error of an answer with no structured object at all."""

    read: Callable[[dict[str, Any]], T]
    keep: Callable[[T], dict[str, Any]]
    invalid: str = "invalid_verdict"
    missing: str = "the judge gave no structured verdict"
    root: str = "verdict"
    """What an error about the whole object calls it."""
    refused: frozenset[str] = frozenset()
    """Finish reasons that mean the model refused, even when its text reads as an object (a
    content filter cut in): read as no structured output."""
    """May name `{finish_reason}` and `{raw}` (the model's text, cut), filled in."""


class Sampler:
    """A model behind one provider, asked for structured objects: cached, limited, retried.

    `Judge` is one (its verdicts); the user simulator holds one (its replies). The limits are
    the sampler's own (its `concurrency` and per-minute budgets) and the endpoint's, which every
    sampler and built-in agent of the process calling the same endpoint share.
    """

    @classmethod
    def open(
        cls,
        config: JudgeConfig,
        *,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
    ) -> Self:
        """The sampler (a `Judge`, say) `config` describes, its cache opened as the config
        says. Raises `ProviderUnavailable` (naming the fix) when the provider's SDK or API key
        is missing."""
        from agenteval.judge.providers import make_provider

        provider = make_provider(config.provider, base_url=config.base_url)
        cache = JudgeCache(config.cache_path) if config.use_cache else NullCache()
        return cls(config, provider, cache=cache, prices=prices, retry=retry)

    def __init__(
        self,
        config: JudgeConfig,
        provider: Provider,
        *,
        cache: JudgeCache | NullCache | None = None,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.config = config
        self.redactor = redactor if redactor is not None else Redactor.from_environment()
        """What every request, and every error kept, is redacted with."""
        # The same texts come again and again: a trial's question and answer for each rubric
        # and each sample. Redacting one costs about 25 microseconds a kilobyte; remembering
        # the last few makes a cache hit cost what it did before redaction.
        self.redact_block = functools.lru_cache(maxsize=_REMEMBERED_BLOCKS)(
            self.redactor.redact_text
        )
        self.provider = provider
        self.cache: JudgeCache | NullCache = cache if cache is not None else NullCache()
        self.prices = PriceTable.default() if prices is None else prices
        self.retry = retry or RetryPolicy(max_retries=config.max_retries, initial_wait_s=1.0)
        self._slots = asyncio.Semaphore(config.concurrency)
        self._requests = (
            AsyncLimiter(config.requests_per_minute, 60) if config.requests_per_minute else None
        )
        self._tokens = (
            AsyncLimiter(config.tokens_per_minute, 60) if config.tokens_per_minute else None
        )
        # Every sampler and built-in agent of the process on this endpoint shares its limit.
        self._endpoint = endpoint(
            config.provider, getattr(provider, "base_url", None) or config.base_url, config.model
        )
        # Identical asks made at the same time (two trials with the same answer) share one
        # provider call: the later ones wait for the first instead of missing the cache together.
        self._in_flight: dict[str, asyncio.Future[Asked[Any]]] = {}

    async def aclose(self) -> None:
        """Close the provider's connections and the cache."""
        await self.provider.aclose()
        self.cache.close()

    def redact(self, text: str) -> str:
        """`text` as it may leave for the provider, or be kept in a record."""
        return self.redactor.redact_text(text)

    async def _limits(self, stack: AsyncExitStack, request: JudgeRequest, *, retry: bool) -> None:
        await stack.enter_async_context(self._slots)
        if self._requests is not None:
            await self._requests.acquire()
        if self._tokens is not None:
            # A rough count (4 characters a token) is enough to pace a budget per minute.
            wanted = (len(request.system) + len(request.user)) // 4 + int(
                request.params.get("max_tokens", 512)
            )
            await self._tokens.acquire(min(wanted, self._tokens.max_rate))
        if self.config.adaptive:
            # Last, right before the call: a Retry-After pause holds back the call itself, and
            # waiting for the per-minute pacing holds no slot of the adaptive limit.
            limit = shared_limit(self._endpoint, self.config.concurrency)
            await stack.enter_async_context(
                limit.slot(first=retry, max_pause_s=self.retry.max_wait_s)
            )

    async def ask(
        self, key: str, request: Callable[[], JudgeRequest], reading: Reading[T]
    ) -> Asked[T]:
        """The answer under `key`: from the cache, from an identical ask in flight, or from
        the provider (`request()` builds the request, only on a miss)."""
        shared = self._in_flight.get(key)
        if shared is not None:
            first = await asyncio.shield(shared)
            return replace(
                first, usage=Usage(), usage_recorded=True, cached=True, retries=Counter()
            )
        future: asyncio.Future[Asked[Any]] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            outcome = await self._ask_once(key, request, reading)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so an unshared failure is not logged as lost
            raise
        else:
            future.set_result(outcome)
            return outcome
        finally:
            del self._in_flight[key]

    async def _ask_once(
        self, key: str, make_request: Callable[[], JudgeRequest], reading: Reading[T]
    ) -> Asked[T]:
        hit = await asyncio.to_thread(self.cache.get, key)
        if hit is not None:
            return Asked(value=reading.read(hit.verdict), raw=hit.raw, model=hit.model, cached=True)
        request = make_request()
        outcome: Asked[T] = Asked()
        budget = RetryBudget(self.retry.max_retries, adaptive=self.config.adaptive)
        reasked = False
        while True:
            try:
                async with AsyncExitStack() as stack:
                    await self._limits(stack, request, retry=budget.used > 0)
                    async with asyncio.timeout(request.timeout_s * 1.5 + 1):
                        reply = await self.provider.complete(request)
            except Exception as exc:  # the SDK's errors: classified, retried or recorded
                kind = classify(exc)
                number = budget.take(kind)
                if number is not None:
                    outcome.retries[kind.cause.value] += 1
                    await asyncio.sleep(self.retry.wait_s(number, exc))
                    continue
                error = f"{kind.cause.value}: {type(exc).__name__}: {exc}"
                outcome.error = self.redact(error)
                outcome.cause = kind.cause
                outcome.retry_after_s = retry_after_s(exc)
                return outcome
            if reply.usage is None:
                outcome.usage_recorded = False
            else:
                outcome.usage = outcome.usage + reply.usage
            outcome.raw, outcome.model = reply.raw, reply.model
            try:
                if reply.verdict is None or reply.finish_reason in reading.refused:
                    raise ValueError(
                        reading.missing.format(
                            finish_reason=reply.finish_reason, raw=reply.raw[:200]
                        )
                    )
                outcome.value = reading.read(reply.verdict)
            except (ValueError, ValidationError) as exc:
                if not reasked:
                    reasked = True
                    outcome.retries[reading.invalid] += 1
                    continue
                outcome.error = self.redact(f"{reading.invalid}: {problem(exc, reading.root)}")
                outcome.raw = self.redact(outcome.raw)
                return outcome
            entry = CachedVerdict(
                verdict=reading.keep(outcome.value),
                raw=reply.raw,
                usage=reply.usage or Usage(),
                model=reply.model,
                params=dict(self.config.params),
                created_at=utc_now(),
            )
            await asyncio.to_thread(self.cache.put, key, entry)
            return outcome


def problem(exc: ValueError | ValidationError, root: str = "verdict") -> str:
    """What is wrong with an answer, in one line naming the fields: `score: Input should be a
    valid number` rather than pydantic's header line."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, error['loc'])) or root}: "
            + str(error["msg"]).removeprefix("Value error, ")
            for error in exc.errors(include_url=False, include_input=False)
        )
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
