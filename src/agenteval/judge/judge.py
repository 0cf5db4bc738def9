"""The judge: one model asked for structured verdicts, sampled, cached, rate-limited, retried,
and paid for. Every LLM-scored metric goes through `Judge.score`.

Secrets never reach a provider: `Judge.sample`, which every verdict passes through, redacts
the blocks it is given (the agent's answer, tool calls and results, the case) with the run's
`Redactor` before the cache key is computed and the request is built, and the request's two
messages are redacted once more as they are sent. A provider's error or a malformed reply kept
in a score or a log line is redacted too (an SDK's 401 message echoes the key it was given).
How a sample is asked (cache, limits, retries, the re-ask) is `judge/sampling.py`'s.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agenteval.judge.cache import cache_key
from agenteval.judge.provider import JudgeRequest
from agenteval.judge.sampling import Reading, Sampler
from agenteval.judge.settings import DEFAULT_CACHE_PATH, PROVIDERS, JudgeConfig, parse_spec
from agenteval.judge.templates import Template, fence
from agenteval.judge.verdict import Verdict
from agenteval.score import JudgeRecord, Score
from agenteval.trace import Usage

__all__ = ["DEFAULT_CACHE_PATH", "PROVIDERS", "Judge", "JudgeConfig", "SampleOutcome", "parse_spec"]

logger = logging.getLogger("agenteval.judge")


@dataclass
class SampleOutcome:
    """One sample: its verdict, or why there is none."""

    verdict: Verdict | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """The values of the template's own verdict fields."""
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    usage_recorded: bool = True
    """False when the provider's answer carried no token usage: the sample's cost is unknown."""
    model: str | None = None
    cached: bool = False
    retries: Counter[str] = field(default_factory=Counter)
    error: str | None = None


class Judge(Sampler):
    """A judge model behind one provider, shared by every judge scorer of a run. Its sampling
    (cache, in-flight sharing, limits, retries, the re-ask of a malformed verdict) is
    `Sampler.ask`, which the user simulator uses too."""

    @property
    def label(self) -> str:
        """The judge's spec, `provider:model` (an alias of `config.spec`), as scores are marked
        (`JudgeRecord.judge`)."""
        return self.config.spec

    def _request(self, template: Template, blocks: Mapping[str, str]) -> JudgeRequest:
        fenced = {name: fence(name, text) for name, text in blocks.items()}
        # The blocks are redacted already; the whole messages are, once more, as they leave:
        # a template's own text is sent too, and this is the last place before the provider.
        redact = self.redact
        return JudgeRequest(
            model=self.config.model,
            system=redact(template.system),
            user=redact(template.render(fenced)),
            schema_name="verdict",
            verdict_schema=template.verdict_schema,
            params=dict(self.config.params),
            timeout_s=self.config.timeout_s,
        )

    async def sample(
        self, template: Template, blocks: Mapping[str, str], index: int
    ) -> SampleOutcome:
        """Sample `index` of the verdict on `blocks` (the raw, unfenced inputs), from the cache
        when it was asked before. The blocks are redacted first: the request, and the cache key
        made from it, never hold a secret."""
        redact = self.redact_block
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
        reading: Reading[tuple[Verdict, dict[str, Any]]] = Reading(
            read=template.read_verdict, keep=_kept_verdict
        )
        asked = await self.ask(key, lambda: self._request(template, blocks), reading)
        verdict, extra = asked.value if asked.value is not None else (None, {})
        return SampleOutcome(
            verdict=verdict,
            extra=dict(extra),
            raw=asked.raw,
            usage=asked.usage,
            usage_recorded=asked.usage_recorded,
            model=asked.model,
            cached=asked.cached,
            retries=asked.retries,
            error=asked.error,
        )

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
        # A sample whose answer carried no token usage cost something unknown: the score's
        # cost is then unknown (None), never the other samples' alone, nor $0.
        metered = all(outcome.usage_recorded for outcome in outcomes)
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
            cost_usd=self.prices.cost(self.config.model, usage) if metered else None,
            usage_recorded=metered,
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


def _kept_verdict(value: tuple[Verdict, dict[str, Any]]) -> dict[str, Any]:
    """What the cache keeps of a verdict read: its fields and the template's own."""
    verdict, extra = value
    return {**verdict.model_dump(), **extra}
