"""Fixtures for the evaluator tests: a judge pointed at a loopback fake OpenAI server, answering
each question by the template it was asked with (`Script`)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI, Item, clear_provider_env, verdict

from agenteval.engine.trials import RetryPolicy
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.judge.templates import load_template, template_ids

FAST = RetryPolicy(max_retries=1, initial_wait_s=0.01, max_wait_s=0.02)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge, key, endpoint or proxy from the developer's environment."""
    clear_provider_env(monkeypatch)


@cache
def _systems() -> dict[str, str]:
    return {load_template(t).system: t for t in template_ids()}


def template_of(body: dict[str, Any]) -> str:
    """The id of the template a judge request was made with (told by its system prompt)."""
    return _systems()[body["messages"][0]["content"]]


def block(body: dict[str, Any], name: str) -> str | None:
    """The text inside the request's fenced block `name`, or None when it has none."""
    user = body["messages"][1]["content"]
    found = re.search(
        rf"<<<BEGIN {name} ([0-9a-f]{{16}})>>>\n(.*?)\n<<<END {name} \1>>>", user, re.S
    )
    return found.group(2) if found else None


Answer = float | Callable[[dict[str, Any]], float]


class Script:
    """Answers each judge request by its template: a fixed score, or a function of the request
    body; every request is kept as `(template, body)` in `asked`."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.answers: dict[str, Answer] = {}
        self.asked: list[tuple[str, dict[str, Any]]] = []
        fake.handler = self._answer

    def set(self, **answers: Answer) -> Script:
        self.answers.update(answers)
        return self

    def _answer(self, body: dict[str, Any]) -> Item:
        template = template_of(body)
        self.asked.append((template, body))
        answer = self.answers.get(template)
        if answer is None:
            raise AssertionError(f"no scripted answer for {template}")
        score = answer(body) if callable(answer) else answer
        return verdict({"reasoning": f"{template}: {score}", "score": score})

    def templates(self) -> list[str]:
        """The templates asked, sorted."""
        return sorted(template for template, _ in self.asked)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def script(fake: FakeOpenAI) -> Script:
    return Script(fake)


def judge_config(fake: FakeOpenAI, tmp_path: Path) -> JudgeConfig:
    return JudgeConfig(
        spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "cache.db"
    )


@pytest.fixture
async def judge(fake: FakeOpenAI, tmp_path: Path) -> AsyncIterator[Judge]:
    opened = Judge.open(judge_config(fake, tmp_path), retry=FAST)
    yield opened
    await opened.aclose()
