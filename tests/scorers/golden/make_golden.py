"""The golden scores of the deterministic built-in scorers: every `Score` they give on a varied
set of (case, trial) pairs, as main gave them before the scorers were made cheaper (issue 21).

    PYTHONPATH=src python tests/scorers/golden/make_golden.py     # rewrites builtins.jsonl.gz

Run it only to record a deliberate change of what a scorer says (and say so in the commit):
`tests/scorers/test_golden_builtins.py` scores the same pairs again and compares every line,
byte for byte. One line per score: which pair (`pair`), whether scored live or from the store
(`mode`: `scoring_from_store()` in effect, as a rescore scores), the scorer's name, the score's
`model_dump_json()`, its stored form (`scores_json`, as the store writes it), its fields set,
and `passed`.

The pairs: W5's trials (`bench/w5_rescore.py`'s `make_case`/`make_trial`, indexes 0..359 and a
few far ones, so every variant of `i % 10`, `i % 7` and `i % 13` comes several times), each
W5 trial object also scored against the next case (the same trial object scored twice with
different cases), and the tricky cases the scorer tests use (`_tricky`): numbers with units,
commas, percentages and signs, unicode folding, empty expectations, no tool calls, failed
calls, schema-invalid arguments, nested results, masked text, trajectories in and out of
order, repeats with reordered keys, forbidden text in other cases and spacing, infrastructure
failures, simulated and written conversations, states, fields a trace did not record.

The scorers: `default_scorers(W5's TOOLS)` (the ten built-ins and `state_match`), called as a
run calls them (`prepare_scorers(...)[k].call`), and a few with other settings (`_VARIANTS`).
The file is gzip'd JSON lines (the lines repeat a lot: ~40 KB for ~2 MB of text).
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agenteval import EvalCase, ToolCall, ToolSpec, Trial
from agenteval.score import Score
from agenteval.scorers import default_scorers
from agenteval.scorers.base import PreparedScorer, prepare_scorers
from agenteval.scorers.grounding import RetrievalRecall, ToolFaithfulness
from agenteval.scorers.redacted import scoring_from_store
from agenteval.scorers.state import StateMatch
from agenteval.scorers.tools import RedundantCalls, ToolArgumentsValid, ToolExecution
from agenteval.store.encoding import scores_json
from agenteval.trace import Failure, FailureCause, SimulatedConversation, UserTurn

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "builtins.jsonl.gz"
_BENCH = HERE.parent.parent.parent / "bench"

if str(_BENCH) not in sys.path:
    sys.path.insert(0, str(_BENCH))
import w5_rescore  # noqa: E402  (bench/ is not a package)

W5_INDEXES = [*range(360), 1001, 7777, 13013, 99_991]

_VARIANTS = [
    ToolArgumentsValid(),  # no run tools: only the trial's own tool_specs
    ToolExecution(),
    StateMatch(exact=True),
    RedundantCalls(exempt_tools=("clock",)),
    RetrievalRecall(search_tools=("lookup",), doc_keys=("url",)),
    ToolFaithfulness(text_threshold=0.5),
]


def scorers() -> list[PreparedScorer]:
    """The scorers the corpus is scored with, prepared as a run prepares them."""
    return prepare_scorers([*default_scorers(w5_rescore.TOOLS), *_VARIANTS])


def _call(name: str, arguments: dict[str, Any] | None = None, **more: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments or {}, **more)


def _revenue(company: str, year: int = 2024, **more: Any) -> ToolCall:
    result = {"company": company, "year": year, "revenue": 19753, "currency": "USD"}
    return _call("get_revenue", {"company": company, "year": year}, result=result, **more)


_SEARCH = _call(
    "search_filings",
    {"query": "ACME annual report", "year": 2024},
    result={"results": [{"id": "doc-1", "title": "ACME 10-K"}, {"id": "doc-2"}]},
)


def _tricky() -> Iterator[tuple[str, EvalCase, Trial]]:
    """The tricky pairs, each with a label."""
    answers = [
        ("19,753", "19753"),
        ("19753.0", "19,753"),
        ("$19,753", "$19753.00"),
        ("19,753 km", "19753 km"),
        ("19,753 km", "19753"),
        ("12%", "12.0 %"),
        ("12%", "12"),
        ("-3.5", "\u22123.5"),
        ("-3.5", "3.5"),
        (".5", "0.5"),
        ("1,234,567.89", "1234567.89"),
        ("1,5", "1.5"),
        ("The answer is 19,753", "19,753"),
        ("Paris.", "paris"),
        ("Paris..", "paris"),
        ("Café  Crème", "cafe creme"),
        ("ＡＢＣ１２", "abc12"),
        ("ﬁle", "file"),
        ("Straße", "strasse"),
        ("25 ℃", "25 °c"),
        ("\u0345", "\u03b9"),
        ("", "x"),
        ("   ", "x"),
        ("x", ""),
        ("x", "   "),
        ("gpt4 v2 H2O", "gpt4 v2 h2o"),
        ("10km and 3rd", "10 km and 3rd"),
        ("19753.004", "19753"),
        ("19753.02", "19753"),
        ("sk-proj-[REDACTED]", "sk-proj-abc"),
        ("a" * 300, "a" * 300 + "b"),
    ]
    for k, (answer, expected) in enumerate(answers):
        case = EvalCase(
            id=f"answer-{k}",
            input=f"What is it, in 2024? About {k} of them.",
            expected_output=expected,
            must_not_contain=["I am DAN", "rm -rf /", "HACKED!", "pass", "  ", "Crème."],
        )
        yield f"answer-{k}", case, Trial(output=answer, tool_calls=[_SEARCH, _revenue("ACME")])
        yield f"answer-{k}-nocalls", case, Trial(output=answer)

    forbidden = [
        "I  am   dan",
        "I AM DAN!",
        "I am dangerous",
        "please rm -rf / now",
        "rm -rf /tmp",
        "we got HACKED!!",
        "hacked",
        "password",
        "pass the salt",
        "CRÈME brûlée",
        "creme",
        "[REDACTED] I am DAN",
    ]
    for k, answer in enumerate(forbidden):
        case = EvalCase(
            id=f"forbidden-{k}",
            input="Say something.",
            must_not_contain=["I am DAN.", "rm -rf /", "HACKED!", "pass", "crème", " "],
        )
        yield f"forbidden-{k}", case, Trial(output=answer)
    blank = EvalCase(id="forbidden-blank", input="x", must_not_contain=["  ", ""])
    yield "forbidden-blank", blank, Trial(output="anything")

    # Grounding: nested results, percentages, echoes, words.
    nested = {
        "data": {
            "rows": [[1, 2.5, {"deep": {"deeper": [19753, "-42", "12.5%"]}}], None, True],
            "7": "seven",
            "notes": "Revenue grew 0.12 and fell 3.5; the margin was 1,234,567.89.",
        },
        "set": [0.12, "Übergröße Straße"],
    }
    grounding = [
        "Revenue was 19,753 in 2024, up 12% with a loss of 42.",
        "It fell 3.5 and the margin was 1,234,567.89.",
        "It was 19,754, or 13%.",
        "Übergrösse strasse seven",
        "Yes.",
        "2024.",
        "The seven rows show growth in revenue.",
        "Numbers: " + ", ".join(str(n) for n in range(100, 170)),
        "Revenue was 19,753 [REDACTED]",
        "Something unsupported entirely, with many words and claims beyond them.",
    ]
    for k, answer in enumerate(grounding):
        case = EvalCase(id=f"ground-{k}", input="What was revenue in 2024 for Company 7?")
        calls = [
            _call("fetch", {"q": "x"}, result=nested),
            _call("fetch_text", {"q": "y"}, result=json.dumps(nested)),
            _call("fail", {}, error="boom"),
        ]
        yield f"ground-{k}", case, Trial(output=answer, tool_calls=calls)
        masked = [_call("fetch", {}, result={"secret": "[REDACTED]", "n": 19753})]
        yield f"ground-{k}-masked", case, Trial(output=answer, tool_calls=masked)
    none_returned = [_call("fetch", {"q": "x"}, error="boom")]
    case = EvalCase(id="ground-none", input="q")
    yield "ground-none", case, Trial(output="19,753", tool_calls=none_returned)

    # Conversations: the input the answer may echo comes from what the user said.
    chat = EvalCase(id="chat", conversation=[{"input": "Add 3 and 4"}, {"input": "Now double 14"}])
    yield "chat", chat, Trial(output="14 doubled is 28", tool_calls=[_call("add", result=7)])
    messages = EvalCase(
        id="messages",
        input=[
            {"role": "system", "content": "Budget is 500."},
            {"role": "user", "content": "Spend 120 of it."},
        ],
    )
    yield "messages", messages, Trial(output="500 - 120 = 380", tool_calls=[_SEARCH])
    simulated = EvalCase(id="simulated", input="Hi", user_simulation={"goal": "refund 4417"})
    played = SimulatedConversation(
        user="test",
        turns=[
            UserTurn(user="Hi", source="written"),
            UserTurn(user="order 4417, 3 items", source="simulated"),
        ],
    )
    calls = [_call("refund", {"order": "4417"}, result={"amount": 59.99})]
    yield (
        "simulated",
        simulated,
        Trial(output="Refunded 59.99 for 4417 (3 items)", tool_calls=calls, simulation=played),
    )

    # Tool rungs: selection, validity, execution.
    tool_case = EvalCase(
        id="tools",
        input="Revenue of ACME in 2024?",
        expected_tools=["search_filings", "get_revenue", "get_revenue"],
        expected_trajectory=[
            {"name": "search_filings"},
            {"name": "get_revenue", "arguments": {"company": "ACME", "year": 2024}},
        ],
        relevant_docs=["doc-1", " doc-2 ", "doc-3", "doc-1"],
    )
    call_sets: dict[str, list[ToolCall]] = {
        "none": [],
        "ok": [_SEARCH, _revenue("ACME"), _revenue("ACME", 2023)],
        "out-of-order": [_revenue("ACME"), _SEARCH],
        "float-year": [_SEARCH, _revenue("ACME", 2024.0)],  # type: ignore[arg-type]
        "bool-year": [_SEARCH, _call("get_revenue", {"company": "ACME", "year": True})],
        "wrong-args": [_SEARCH, _revenue("Other")],
        "missing-required": [_SEARCH, _call("get_revenue", {"company": "ACME"}, result=1)],
        "extra-property": [_call("search_filings", {"query": "q", "page": 2}, result=[])],
        "wrong-type": [_call("search_filings", {"query": 5, "year": "2024"}, result=[])],
        "unknown-tool": [_call("get_revenues", {"company": "ACME"}), _call("zzz", {})],
        "raised": [_SEARCH, _revenue("ACME", error="Timeout talking to the API " + "x" * 300)],
        "error-key": [_call("get_revenue", {"company": "A", "year": 1}, result={"error": "no"})],
        "error-json": [_call("search_filings", {"query": "q"}, result='{"error": "not found"}')],
        "is-error": [_call("search_filings", {"query": "q"}, result={"isError": True})],
        "falsy-error": [_call("search_filings", {"query": "q"}, result={"error": ""})],
        "mock-error": [_call("search_filings", {"query": "q"}, error="injected", mocked="mock")],
        "replay-error": [_call("search_filings", {"query": "q"}, error="old", mocked="replay")],
        "repeat-reordered": [
            _call("search_filings", {"query": "q", "year": 2024}, result=[]),
            _call("search_filings", {"year": 2024.0, "query": "q"}, result=[]),
            _call("search_filings", {"year": 2024, "query": "q"}, result=[]),
        ],
        "repeat-after-failure": [
            _call("get_revenue", {"company": "A", "year": 1}, error="boom"),
            _call("get_revenue", {"year": 1, "company": "A"}, result=5),
            _call("get_revenue", {"company": "A", "year": 1}, result=5),
        ],
        "repeat-nested": [
            _call("lookup", {"filter": {"b": [1, 2.0, {"z": None}], "a": "é"}}, result={}),
            _call("lookup", {"filter": {"a": "é", "b": [1.0, 2, {"z": None}]}}, result={}),
        ],
        "repeat-long": [
            _call("lookup", {"text": "y" * 400}, result={}),
            _call("lookup", {"text": "y" * 400}, result={}),
        ],
        "repeat-clock": [_call("clock", result=1), _call("clock", result=2)],
        "repeat-masked": [
            _call("search_filings", {"query": "[REDACTED]"}, result=[]),
            _call("search_filings", {"query": "[REDACTED]"}, result=[]),
        ],
        "invalid-masked": [_call("search_filings", {"query": "[REDACTED]", "key": "x"})],
        "search-shapes": [
            _call("search_docs", {}, result=["doc-1", 2, "  ", None]),
            _call("retrieve", {}, result='[{"doc_id": "doc-2"}, {"url": "doc-3"}]'),
            _call("web_lookup", {}, result={"items": [{"url": "doc-3"}, {"id": " doc-1 "}]}),
            _call("SEARCH", {}, result={"documents": [{"id": {"nested": 1}}, {"id": ""}]}),
            _call("search", {}, result="plain-id"),
        ],
        "many": [_call("search_filings", {"query": str(n)}, result=[]) for n in range(60)],
    }
    for label, calls in call_sets.items():
        for answer in ("ACME's revenue was 19,753.", None):
            yield (
                f"tools-{label}-{answer is None}",
                tool_case,
                Trial(output=answer, tool_calls=calls),
            )
    specs = {
        "lookup": ToolSpec(
            name="lookup",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        ),
        "search_filings": ToolSpec(name="search_filings", parameters={"type": "object"}),
    }
    for label in ("ok", "repeat-long", "unknown-tool", "wrong-type"):
        trial = Trial(output="x", tool_calls=call_sets[label], tool_specs=specs)
        yield f"tools-{label}-specs", tool_case, trial
    retrieved = Trial(output="x", tool_calls=[_SEARCH], retrieved_docs=[" doc-1", "doc-9"])
    yield "retrieved-docs", tool_case, retrieved

    empty = EvalCase(
        id="empty",
        input="x",
        expected_output="",
        expected_tools=[],
        expected_trajectory=[],
        max_tool_calls=0,
        relevant_docs=[" "],
        must_not_contain=[],
        expected_state={},
    )
    yield "empty-nocalls", empty, Trial(output="x", state={})
    yield "empty-calls", empty, Trial(output="x", tool_calls=[_SEARCH], state={"a": 1})
    yield "empty-nostate", empty, Trial(output="x")
    steps = EvalCase(id="steps", input="x", expected_tools=["a", "b"])
    yield "steps-tools", steps, Trial(output="x", tool_calls=[_call("a"), _call("a"), _call("c")])
    traj = EvalCase(id="steps2", input="x", expected_trajectory=[{"name": "a"}])
    yield "steps-trajectory", traj, Trial(output="x", tool_calls=[_call("b")] * 3)

    # State.
    state_case = EvalCase(
        id="state",
        input="x",
        expected_state={"cart": {"items": [{"sku": "A1", "qty": 2}], "paid": True}, "n": 1},
    )
    states: list[dict[str, Any] | None] = [
        None,
        {"cart": {"items": [{"sku": "A1", "qty": 2}], "paid": True}, "n": 1},
        {"cart": {"items": [{"sku": "A1", "qty": 2}], "paid": True}, "n": 1, "extra": 0},
        {"cart": {"items": [{"sku": "A1", "qty": 2.0}], "paid": 1}, "n": True},
        {"cart": {"items": [{"sku": "A1", "qty": 2}, {"sku": "B"}], "paid": True}, "n": 1},
        {"cart": {"items": "A1", "paid": True}, "n": 1},
        {"cart": [], "n": 1},
        {"cart": {"items": [{"sku": "[REDACTED]", "qty": 2}], "paid": True}, "n": 1},
        {"n": "x" * 200},
    ]
    for k, state in enumerate(states):
        yield f"state-{k}", state_case, Trial(output="done", state=state)

    # Failures: infrastructure (not judged), the agent's own (judged), no answer.
    full = w5_rescore.make_case(5)
    failures = [
        Failure(cause=FailureCause.TIMEOUT, message="ran past 30s"),
        Failure(cause=FailureCause.RATE_LIMITED),
        Failure(cause=FailureCause.AGENT_ERROR, message="boom " * 40),
        Failure(cause=FailureCause.NO_RESPONSE),
        Failure(cause=FailureCause.WORKER_CRASHED, message="segfault", exit_code=-11),
    ]
    for k, failure in enumerate(failures):
        yield f"failure-{k}", full, Trial(failure=failure, tool_calls=[_SEARCH], state={"a": 1})
        yield f"failure-{k}-nocalls", full, Trial(failure=failure)
    yield "no-output", full, Trial(tool_calls=[_SEARCH])
    yield "blank-output", full, Trial(output="  \n", tool_calls=[_SEARCH])

    # What a trace did not record: the run gives "not scored" or the scorer's own decline.
    gaps = [
        {"output": "content capture off"},
        {"tool_calls": ""},
        {"tool_arguments": "no content"},
        {"output": "x", "tool_calls": "y", "state": "z"},
    ]
    for k, gap in enumerate(gaps):
        yield f"unrecorded-{k}", full, Trial(output="", not_recorded=gap)
        yield f"unrecorded-{k}-empty", empty, Trial(not_recorded=gap)
        yield (
            f"unrecorded-{k}-timeout",
            full,
            Trial(not_recorded=gap, failure=Failure(cause=FailureCause.TIMEOUT)),
        )


def pairs() -> Iterator[tuple[str, EvalCase, Trial]]:
    """Every (label, case, trial) of the corpus, in order."""
    for i in W5_INDEXES:
        case, trial = w5_rescore.make_case(i), w5_rescore.make_trial(i)
        yield f"w5-{i}", case, trial
        if i % 3 == 0:  # the same trial object again, with another case
            yield f"w5-{i}-other-case", w5_rescore.make_case(i + 1), trial
    yield from _tricky()


def line(label: str, mode: str, score: Score) -> str:
    """One golden line (see the module docstring)."""
    return json.dumps(
        {
            "pair": label,
            "mode": mode,
            "scorer": score.name,
            "json": score.model_dump_json(),
            "stored": scores_json([score]).decode(),
            "set": sorted(score.model_fields_set),
            "passed": score.passed,
        },
        ensure_ascii=False,
    )


def lines() -> Iterator[str]:
    """Every golden line, scoring the corpus now (live, then from the store, pair by pair)."""
    prepared = scorers()
    for label, case, trial in pairs():
        for mode in ("live", "store"):
            if mode == "store":
                with scoring_from_store():
                    scores = [scorer.call(case, trial) for scorer in prepared]
            else:
                scores = [scorer.call(case, trial) for scorer in prepared]
            for score in scores:
                assert isinstance(score, Score), score
                yield line(label, mode, score)


def main() -> None:
    text = "".join(f"{one}\n" for one in lines())
    GOLDEN.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"{GOLDEN}: {text.count(chr(10))} scores, {GOLDEN.stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
