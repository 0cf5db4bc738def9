"""Secrets are never stored or sent: every shape of the corpus (`tests/secrets_corpus.py`),
planted by an agent everywhere it can write, is in no output of a real `agenteval run`.

One run in a subprocess, with a judge on a loopback fake provider: the agent plants every
secret in its answer, its tool arguments and results, its model names and retry reasons, its
metadata and (on the second case) its failure message; the case file holds them too. Then no
secret may appear in the store's bytes (the database and its write-ahead log, read raw), the
JSON, HTML and JUnit reports, the terminal, the requests the fake provider received, the judge
cache's bytes, what `agenteval show` and `agenteval report` make from the store, or the output
and store of the pytest plugin run over the same cases, and everything `agenteval score` writes
from recorded trials holding the same secrets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.judge.fakes import PROVIDER_ENV, FakeOpenAI, verdict
from tests.secrets_corpus import (
    CORPUS,
    SecretShape,
    environment,
    found_in,
    keyed,
    texts,
)

from agenteval.judge.templates import load_template
from agenteval.redaction import REDACTED, Redactor

BY_NAME = {
    "tool_argument_accuracy": "tool_argument_accuracy",
    "plan_quality": "plan_quality",
    "hallucinations_v1": "groundedness",
}
"""Scorers named on the command line that quote tool calls to the judge, and their templates."""

AGENT = """
import json

import agenteval

PLANTED = json.loads({planted!r})
KEYED = json.loads({keyed!r})
TEXT = "\\n".join(PLANTED)


@agenteval.tool
def lookup(query: str, password: str, client_secret: str, session_cookie: str, api_key: str) -> dict:
    return {{"found": TEXT, "credentials": dict(KEYED), "echo": query}}


def run(question: str) -> dict:
    lookup(TEXT, **KEYED)
    for text in PLANTED:
        agenteval.record_retry(text)
        agenteval.record_model_call(model=text, input_tokens=3, output_tokens=2)
    if "fail" in question:
        raise RuntimeError("the service refused: " + TEXT)
    return {{"output": "The answer: " + TEXT, "metadata": {{"seen": PLANTED, "auth": KEYED}}}}
"""


PYTEST_FILE = """
from agenteval.pytest_plugin import agenteval_cases


@agenteval_cases(
    "cases.jsonl", agent="planter.py:run", retries=0, judge="openai:gpt-4o-mini",
    rubrics=["correctness", "groundedness"],
)
def test_planted(agenteval_result):
    pass
"""
"""A test of the pytest plugin over the same cases: its failure reports show answers, failure
messages and score reasons."""


def _recorded_trials(planted: list[str]) -> str:
    """Trials as `agenteval score` reads them (JSONL), planting every secret where a recorded
    trial can hold one."""
    text = "\n".join(planted)
    call = {"name": "lookup", "arguments": {"query": text, **keyed()}, "result": {"found": text}}
    common = {
        "tool_calls": [call],
        "model_calls": [{"model": p, "usage": {"input_tokens": 3}} for p in planted],
        "retries": dict.fromkeys(planted, 1),
        "metadata": {"seen": planted, "auth": keyed()},
    }
    trials = [
        {"case_id": "plants", "output": "The answer: " + text, **common},
        {
            "case_id": "fails",
            "output": None,
            "failure": {"cause": "agent_error", "message": "refused: " + text},
            **common,
        },
    ]
    return "".join(json.dumps(t) + "\n" for t in trials)


@dataclass(frozen=True)
class Outputs:
    """Everything the run and the commands after it wrote or sent, as text, by where."""

    by_place: dict[str, str]


def _raw(*paths: Path) -> str:
    """Files read as bytes (a missing one as nothing), decoded leniently: SQLite pages hold
    the text as UTF-8 between binary headers."""
    return b"".join(p.read_bytes() for p in paths if p.exists()).decode("utf-8", "replace")


def _run(args: list[str], cwd: Path, env: dict[str, str], *, module: bool = True) -> str:
    done = subprocess.run(
        [sys.executable, *(("-m", "agenteval") if module else ()), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outputs]:
    folder = tmp_path_factory.mktemp("corpus")
    planted = [shape.planted for shape in texts()]
    (folder / "planter.py").write_text(
        AGENT.format(planted=json.dumps(planted), keyed=json.dumps(keyed()))
    )
    secret_text = "\n".join(planted)
    cases = [
        {"id": "plants", "input": f"Look it up: {secret_text}", "expected_output": secret_text},
        {"id": "fails", "input": f"fail after {secret_text}", "expected_output": "anything"},
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    with FakeOpenAI(default=verdict({"reasoning": "Looks right.", "score": 1.0})) as fake:
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
        env.update(environment())
        env.update(
            COLUMNS="400",
            OPENAI_BASE_URL=fake.base_url,
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        terminal = _run(
            [
                *("run", "cases.jsonl", "--agent", "planter.py:run", "-v", "--retries", "0"),
                *("--judge", "openai:gpt-4o-mini"),
                *("--rubric", "correctness,groundedness,answer_relevance"),
                # Evaluators and criteria by name show the judge the tool calls themselves.
                *(f"--scorer={name}" for name in BY_NAME),
                *("--json", "run.json", "--html", "run.html", "--junit", "run.xml"),
            ],
            folder,
            env,
        )
        assert fake.request_count > 0, terminal
        # The store as it is right after the run, WAL included.
        store = folder / ".agenteval" / "runs.db"
        store_bytes = _raw(store, store.with_name("runs.db-wal"))
        (folder / "test_evals.py").write_text(PYTEST_FILE)
        plugin = _run(
            [
                *("-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"),
                *("test_evals.py", "--agenteval-store", "plugin.db"),
            ],
            folder,
            env,
            module=False,
        )
        plugin_store = folder / "plugin.db"
        plugin_bytes = _raw(plugin_store, plugin_store.with_name("plugin.db-wal"))
        # `agenteval score` over recorded trials holding the same secrets everywhere.
        (folder / "trials.jsonl").write_text(_recorded_trials(planted))
        scored = _run(
            [
                *("score", "trials.jsonl", "--cases", "cases.jsonl", "--store", "scored.db"),
                *("--judge", "openai:gpt-4o-mini", "--rubric", "correctness,groundedness"),
                *("--json", "scored.json", "-v"),
            ],
            folder,
            env,
        )
        scored_store = folder / "scored.db"
        scored += _raw(scored_store, scored_store.with_name("scored.db-wal"))
        scored += (folder / "scored.json").read_text()
        requests = json.dumps(fake.requests, ensure_ascii=False)
        systems = {load_template(template).system for template in BY_NAME.values()}
        by_name = json.dumps(
            [r for r in fake.requests if r["messages"][0]["content"] in systems],
            ensure_ascii=False,
        )
        cache = folder / ".agenteval" / "judge-cache.db"
        cache_bytes = _raw(cache, cache.with_name("judge-cache.db-wal"))
        shown = _run(["show", "latest", "-v", "--json", "shown.json"], folder, env)
        reported = _run(
            ["report", "latest", "--html", "report.html", "--junit", "report.xml"], folder, env
        )
    yield Outputs(
        {
            "store (db and WAL)": store_bytes,
            "--json": (folder / "run.json").read_text(),
            "--html": (folder / "run.html").read_text(),
            "--junit": (folder / "run.xml").read_text(),
            "terminal of run": terminal,
            "judge requests": requests,
            "judge requests of evaluators and criteria": by_name,
            "judge cache (db and WAL)": cache_bytes,
            "agenteval show": shown + (folder / "shown.json").read_text(),
            "agenteval report": (folder / "report.html").read_text()
            + (folder / "report.xml").read_text()
            + reported,
            "pytest plugin (output and store)": plugin + plugin_bytes,
            "agenteval score (terminal, JSON, store)": scored,
        }
    )


@pytest.mark.parametrize("shape", [pytest.param(s, id=s.name) for s in CORPUS])
def test_no_output_holds_the_secret(outputs: Outputs, shape: SecretShape) -> None:
    leaks = [place for place, text in outputs.by_place.items() if found_in(text, [shape])]
    assert leaks == [], f"{shape.name} leaked into: {', '.join(leaks)}"


@pytest.mark.parametrize(
    "place",
    [
        "store (db and WAL)",
        "--json",
        "--html",
        "--junit",
        "terminal of run",
        "judge requests",
        "judge requests of evaluators and criteria",
        "agenteval show",
        "agenteval report",
        "pytest plugin (output and store)",
        "agenteval score (terminal, JSON, store)",
    ],
)
def test_each_output_did_hold_the_planted_text_masked(outputs: Outputs, place: str) -> None:
    # Not a check that passes because nothing was written: each place shows masked secrets.
    assert REDACTED in outputs.by_place[place]


def test_the_judge_cache_holds_the_verdicts(outputs: Outputs) -> None:
    assert "Looks right." in outputs.by_place["judge cache (db and WAL)"]


@pytest.mark.parametrize("shape", texts(), ids=lambda s: s.name)
def test_every_shape_is_caught_by_the_run_s_redactor(shape: SecretShape) -> None:
    redactor = Redactor.from_environment(environment())
    assert found_in(redactor.redact_text(shape.planted), [shape]) == []


def test_the_corpus_is_broad_and_its_secrets_distinct() -> None:
    assert len(CORPUS) >= 15
    values = [shape.value for shape in CORPUS]
    assert len(set(values)) == len(values)
    for shape in CORPUS:
        others = [other for other in CORPUS if other is not shape]
        assert found_in(shape.planted or shape.value, others) == [], shape.name
