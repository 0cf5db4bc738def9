"""The judge: one model asked for structured verdicts, sampled, cached, rate-limited, retried,
and paid for. Every LLM-scored metric goes through `Judge.score`.

Secrets never reach a provider: `Judge.sample`, which every request passes through, redacts
the blocks it is given (the agent's answer, tool calls and results, the case) with the run's
`Redactor` before the cache key is computed and the request is built, and the request's two
messages are redacted once more as they are sent. A provider's error or a malformed reply kept
in a score or a log line is redacted too (an SDK's 401 message echoes the key it was given).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import statistics
from collections import Counter
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiolimiter import AsyncLimiter
from pydantic import ValidationError

from agenteval.errors import ConfigError
from agenteval.failures import classify
from agenteval.judge.cache import CachedVerdict, JudgeCache, NullCache, cache_key
from agenteval.judge.provider import JudgeRequest, Provider
from agenteval.judge.templates import Template, fence
from agenteval.judge.verdict import Verdict
from agenteval.pricing import PriceTable
from agenteval.providers.throttle import RetryBudget, endpoint, shared_limit
from agenteval.redaction import Redactor
from agenteval.retry import RetryPolicy
from agenteval.score import JudgeRecord, Score
from agenteval.trace import Usage, utc_now

__all__ = ["DEFAULT_CACHE_PATH", "PROVIDERS", "Judge", "JudgeConfig", "SampleOutcome", "parse_spec"]

logger = logging.getLogger("agenteval.judge")

PROVIDERS = ("openai", "anthropic", "google")
DEFAULT_CACHE_PATH = Path(".agenteval/judge-cache.db")
_REMEMBERED_BLOCKS = 256
"""Redacted blocks a judge remembers (the texts of the trials being judged now)."""


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `provider:model` (the model may hold colons, as Ollama's `llama3.1:8b` does)."""
    provider, sep, model = spec.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise ConfigError(
            f"{spec!r} is not a judge",
            field="judge",
            hint="write PROVIDER:MODEL with a provider among "
            + ", ".join(PROVIDERS)
            + " (e.g. openai:gpt-4o-mini, anthropic:claude-haiku-4-5, google:gemini-2.5-flash)",
        )
    return provider, model


@dataclass(frozen=True)
class JudgeConfig:
    """How to judge: the model, its parameters, limits, retries and cache."""

    spec: str
    """`provider:model`, e.g. `openai:gpt-4o-mini`."""
    base_url: str | None = None
    """An OpenAI-compatible (or other) endpoint; else the provider's `*_BASE_URL` variable."""
    params: Mapping[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    timeout_s: float = 60.0
    max_retries: int = 3
    concurrency: int = 8
    """Judge calls in flight at once, across the whole run."""
    adaptive: bool = True
    """Adapt the calls in flight to the provider's 429s, under `concurrency`, pausing for
    their `Retry-After` (see `agenteval.providers.throttle`); False: a fixed `concurrency`."""
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    cache_path: Path = DEFAULT_CACHE_PATH
    use_cache: bool = True

    def __post_init__(self) -> None:
        parse_spec(self.spec)

    @property
    def provider(self) -> str:
        """The provider's name."""
        return parse_spec(self.spec)[0]

    @property
    def model(self) -> str:
        """The model's name, as given."""
        return parse_spec(self.spec)[1]


@dataclass
class SampleOutcome:
    """One sample: its verdict, or why there is none."""

    verdict: Verdict | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """The values of the template's own verdict fields."""
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    cached: bool = False
    retries: Counter[str] = field(default_factory=Counter)
    error: str | None = None


class Judge:
    """A judge model behind one provider, shared by every judge scorer of a run."""

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
        self._redact_block = functools.lru_cache(maxsize=_REMEMBERED_BLOCKS)(
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
        # Every judge and built-in agent of the process on this endpoint shares its limit.
        self._endpoint = endpoint(
            config.provider, getattr(provider, "base_url", None) or config.base_url, config.model
        )
        # Identical samples asked at the same time (two trials with the same answer) share one
        # provider call: the later ones wait for the first instead of missing the cache together.
        self._in_flight: dict[str, asyncio.Future[SampleOutcome]] = {}

    @classmethod
    def open(
        cls,
        config: JudgeConfig,
        *,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
    ) -> Judge:
        """The judge `config` describes. Raises `ProviderUnavailable` (naming the fix) when the
        provider's SDK or API key is missing."""
        from agenteval.judge.providers import make_provider

        provider = make_provider(config.provider, base_url=config.base_url)
        cache = JudgeCache(config.cache_path) if config.use_cache else NullCache()
        return cls(config, provider, cache=cache, prices=prices, retry=retry)

    @property
    def label(self) -> str:
        """The judge's spec, `provider:model` (an alias of `config.spec`), as scores are marked
        (`JudgeRecord.judge`)."""
        return self.config.spec

    async def aclose(self) -> None:
        """Close the provider's connections and the cache."""
        await self.provider.aclose()
        self.cache.close()

    def _request(self, template: Template, blocks: Mapping[str, str]) -> JudgeRequest:
        fenced = {name: fence(name, text) for name, text in blocks.items()}
        # The blocks are redacted already; the whole messages are, once more, as they leave:
        # a template's own text is sent too, and this is the last place before the provider.
        redact = self.redactor.redact_text
        return JudgeRequest(
            model=self.config.model,
            system=redact(template.system),
            user=redact(template.render(fenced)),
            schema_name="verdict",
            verdict_schema=template.verdict_schema,
            params=dict(self.config.params),
            timeout_s=self.config.timeout_s,
        )

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

    async def sample(
        self, template: Template, blocks: Mapping[str, str], index: int
    ) -> SampleOutcome:
        """Sample `index` of the verdict on `blocks` (the raw, unfenced inputs), from the cache
        when it was asked before. The blocks are redacted first: the request, and the cache key
        made from it, never hold a secret."""
        redact = self._redact_block
        blocks = {name: redact(text) for name, text in blocks.items()}
        key = cache_key(
            provider=self.config.provider,
            model=self.config.model,
            params=self.config.params,
            template_id=template.id,
            template_version=template.version,
            inputs=blocks,
            sample_index=index,
        )
        shared = self._in_flight.get(key)
        if shared is not None:
            first = await asyncio.shield(shared)
            return SampleOutcome(
                verdict=first.verdict,
                extra=dict(first.extra),
                raw=first.raw,
                model=first.model,
                cached=True,
                error=first.error,
            )
        future: asyncio.Future[SampleOutcome] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            outcome = await self._sample_once(key, template, blocks)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so an unshared failure is not logged as lost
            raise
        else:
            future.set_result(outcome)
            return outcome
        finally:
            del self._in_flight[key]

    async def _sample_once(
        self, key: str, template: Template, blocks: Mapping[str, str]
    ) -> SampleOutcome:
        hit = await asyncio.to_thread(self.cache.get, key)
        if hit is not None:
            cached_verdict, cached_extra = template.read_verdict(hit.verdict)
            return SampleOutcome(
                verdict=cached_verdict,
                extra=cached_extra,
                raw=hit.raw,
                model=hit.model,
                cached=True,
            )
        request = self._request(template, blocks)
        outcome = SampleOutcome()
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
                outcome.error = self.redactor.redact_text(error)
                return outcome
            outcome.usage = outcome.usage + reply.usage
            outcome.raw, outcome.model = reply.raw, reply.model
            try:
                if reply.verdict is None:
                    raise ValueError("the judge gave no structured verdict")
                outcome.verdict, outcome.extra = template.read_verdict(reply.verdict)
            except (ValueError, ValidationError) as exc:
                if not reasked:
                    reasked = True
                    outcome.retries["invalid_verdict"] += 1
                    continue
                error = f"invalid_verdict: {_problem(exc)}"
                outcome.error = self.redactor.redact_text(error)
                outcome.raw = self.redactor.redact_text(outcome.raw)
                return outcome
            entry = CachedVerdict(
                verdict={**outcome.verdict.model_dump(), **outcome.extra},
                raw=reply.raw,
                usage=reply.usage,
                model=reply.model,
                params=dict(self.config.params),
                created_at=utc_now(),
            )
            await asyncio.to_thread(self.cache.put, key, entry)
            return outcome

    async def score(
        self,
        name: str,
        template: Template,
        blocks: Mapping[str, str],
        *,
        num_samples: int = 1,
        threshold: float = 0.5,
        details: Mapping[str, Any] | None = None,
    ) -> Score:
        """Ask `num_samples` samples and aggregate them into one Score: the mean of the samples
        that gave a verdict; samples that failed are dropped (and logged); when every sample
        failed, the score is the error `All LLM samples failed`."""
        outcomes = await asyncio.gather(
            *(self.sample(template, blocks, index) for index in range(num_samples))
        )
        usage = Usage()
        retries: Counter[str] = Counter()
        for outcome in outcomes:
            usage = usage + outcome.usage
            retries.update(outcome.retries)
        good = [o for o in outcomes if o.verdict is not None]
        for index, outcome in enumerate(outcomes):
            if outcome.error is not None:
                logger.warning("%s: judge sample %d dropped: %s", name, index, outcome.error)
        judge_record = JudgeRecord(
            judge=self.config.spec,
            model=next((o.model for o in outcomes if o.model), None),
            template=template.id,
            template_version=template.version,
            params=dict(self.config.params),
            samples=num_samples,
            failed_samples=num_samples - len(good),
            cached_samples=sum(o.cached for o in outcomes),
            retries=dict(retries),
            cost_usd=self.prices.cost(self.config.model, usage),
        )
        sample_details = [
            {
                "score": o.verdict.score,
                "reasoning": o.verdict.reasoning,
                **o.extra,
                "cached": o.cached,
            }
            if o.verdict is not None
            else {"error": o.error, "raw": o.raw}
            for o in outcomes
        ]
        all_details = {**(details or {}), "samples": sample_details}
        if not good:
            return Score(
                name=name,
                error="All LLM samples failed",
                details=all_details,
                usage=usage,
                judge=judge_record,
            )
        scores = [o.verdict.score for o in good if o.verdict is not None]
        value = statistics.fmean(scores)
        # The reason shown is the reasoning of the sample nearest the mean.
        nearest = min(good, key=lambda o: abs(o.verdict.score - value) if o.verdict else 1.0)
        reason = nearest.verdict.reasoning if nearest.verdict else None
        return Score(
            name=name,
            value=value,
            passed=value >= threshold,
            reason=reason,
            details=all_details,
            usage=usage,
            judge=judge_record,
        )


def _problem(exc: ValueError | ValidationError) -> str:
    """What is wrong with a verdict, in one line naming the fields: `score: Input should be a
    valid number` rather than pydantic's header line."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'verdict'}: {error['msg']}"
            for error in exc.errors(include_url=False, include_input=False)
        )
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
