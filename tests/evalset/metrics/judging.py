"""A scripted judge for the metric tests: the loopback fake OpenAI server (`tests.judge.fakes`)
answering each request by its template (told by the system prompt) with a function of the
request's fenced blocks; every request is kept, and a lock keeps the counts right while the
server answers from several threads."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.judge.fakes import FakeOpenAI, Item, verdict

from agenteval.judge.templates import load_template, template_ids

Answer = Callable[[dict[str, str], int], dict[str, Any]]
"""(the request's blocks, how many requests of this template came before) -> the verdict."""


def blocks_of(body: dict[str, Any]) -> dict[str, str]:
    """The fenced blocks of a judge request's user message, by name."""
    user = body["messages"][-1]["content"]
    found = re.findall(r"<<<BEGIN (\w+) ([0-9a-f]{16})>>>\n(.*?)\n<<<END \1 \2>>>", user, re.S)
    return {name: text for name, _, text in found}


@dataclass
class ScriptedJudge:
    """Answers the fake server's requests: `answers[template] = Answer`."""

    fake: FakeOpenAI
    answers: dict[str, Answer] = field(default_factory=dict)
    asked: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._systems = {load_template(t).system: t for t in template_ids()}
        self.fake.handler = self._answer

    def _answer(self, body: dict[str, Any]) -> Item | None:
        template = self._systems[body["messages"][0]["content"]]
        blocks = blocks_of(body)
        with self._lock:
            seen = sum(1 for t, _ in self.asked if t == template)
            self.asked.append((template, blocks))
        return verdict(self.answers[template](blocks, seen))

    def of(self, template: str) -> list[dict[str, str]]:
        """The blocks of every request made with `template`, in order."""
        return [blocks for t, blocks in self.asked if t == template]


def rubric_ids(block: str) -> list[str]:
    """The rubric ids of a rubrics block (`- id: rule` lines)."""
    return re.findall(r"^- ([^:]+):", block, re.M)


def rubric_verdict(met: dict[str, bool], *, score: float = 0.5) -> dict[str, Any]:
    """A verdict deciding each rubric (the judge's own `score` is not what agenteval reads)."""
    return {
        "reasoning": "checked each rubric",
        "rubric_verdicts": [
            {"rubric_id": rid, "reason": "seen" if ok else "not seen", "met": ok}
            for rid, ok in met.items()
        ],
        "score": score,
    }


def checks_verdict(met: list[bool], *, score: float = 0.99) -> dict[str, Any]:
    """A verdict with the judge's own checks, decided."""
    return {
        "reasoning": "wrote and decided the checks",
        "checks": [
            {"check": f"check {i}", "reason": "turn 1", "met": ok} for i, ok in enumerate(met)
        ],
        "score": score,
    }
