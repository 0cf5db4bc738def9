"""A loopback judge for the conversation tests: a real OpenAI-compatible server on 127.0.0.1
(`tests.judge.fakes.FakeOpenAI`) that answers every template with a passing verdict of the
shape the template asks for, and keeps what each request sent, by template."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.evaluators.conftest import template_of
from tests.judge.fakes import FakeOpenAI, Item, verdict

from agenteval.judge.judge import JudgeConfig
from agenteval.judge.templates import load_template


class AnsweringJudge:
    """Answers each request 1.0 (every rubric and check met) and records its user prompts,
    each distinct one once (by template, in the order asked)."""

    def __init__(self, fake: FakeOpenAI, tmp_path: Path) -> None:
        self.fake = fake
        self.config = JudgeConfig(
            spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "cache.db"
        )
        self.prompts: dict[str, list[str]] = {}
        fake.handler = self._answer

    def _answer(self, body: dict[str, Any]) -> Item:
        template = template_of(body)
        prompt = body["messages"][1]["content"]
        asked = self.prompts.setdefault(template, [])
        if prompt not in asked:  # each sample of a question asks alike: kept once
            asked.append(prompt)
        answer: dict[str, Any] = {"reasoning": "met", "score": 1.0}
        ids = re.findall(r"^- (\S+): ", prompt, re.M)
        for name, schema in load_template(template).verdict.items():
            if name == "checks":
                answer[name] = [{"check": "the refund", "reason": "turn 3", "met": True}]
            elif name == "rubric_scores":
                answer[name] = [{"rubric_id": rid, "score": 1.0} for rid in ids]
            elif name == "rubric_verdicts":
                answer[name] = [{"rubric_id": rid, "reason": "yes", "met": True} for rid in ids]
            else:
                # An object of required numbers (safety's categories: 1.0, safe), else a list.
                required = schema.get("required", [])
                answer[name] = dict.fromkeys(required, 1.0) if schema["type"] == "object" else []
        return verdict(answer)

    @property
    def templates(self) -> list[str]:
        """The templates asked with, sorted."""
        return sorted(self.prompts)


@contextmanager
def answering_judge(tmp_path: Path) -> Iterator[AnsweringJudge]:
    """A loopback judge server for the time of the `with`."""
    with FakeOpenAI() as fake:
        yield AnsweringJudge(fake, tmp_path)
