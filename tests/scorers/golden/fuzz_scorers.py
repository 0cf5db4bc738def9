"""Differential fuzz driver for the deterministic built-in scorers (review of issue 21).

    PYTHONHASHSEED=0 PYTHONPATH=<worktree>/src python fuzz_scorers.py SEED COUNT > out.jsonl

Run once with a released version's src (a `git worktree` of it) and once with a change's, then
diff the outputs (issue 21 ran it on ~39,000 pairs, 1.3 M scores, to show the built-ins' speed-ups
changed no score): the pairs are
generated from `random.Random(SEED)` only, so both processes score the same (case, trial) pairs.
Each line: the pair's number, the mode (live / store), and each scorer's `model_dump_json()`,
its fields set, or the exception it raised.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

WT = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(__file__).resolve().parents[2]
sys.path.insert(0, str(WT / "bench"))

import w5_rescore  # noqa: E402

from agenteval import EvalCase, ToolCall, ToolSpec, Trial  # noqa: E402
from agenteval.scorers import default_scorers  # noqa: E402
from agenteval.scorers.base import prepare_scorers  # noqa: E402
from agenteval.scorers.grounding import RetrievalRecall, ToolFaithfulness  # noqa: E402
from agenteval.scorers.redacted import scoring_from_store  # noqa: E402
from agenteval.scorers.state import StateMatch  # noqa: E402
from agenteval.scorers.tools import RedundantCalls, ToolArgumentsValid, ToolExecution  # noqa: E402
from agenteval.store.encoding import scores_json  # noqa: E402
from agenteval.trace import Failure, FailureCause  # noqa: E402

NUMS = [
    "1,000.5",
    "1.000,5",
    "-0",
    "0",
    "-0.0",
    "+0",
    "1e3",
    "50%",
    "50 %",
    "$1.2k",
    "1.2k",
    "12.5%",
    "١٢",
    "٣",
    "１２",
    "１,０００",
    "−3.5",
    "-3.5",
    "3.5",
    ".5",
    "-.5",
    "0.5",
    "1.2.3",
    "+5",
    "10km",
    "3rd",
    "19,753",
    "19753",
    "19753.0",
    "19,753.00",
    "1,234,567.89",
    "1234567.89",
    "0.12",
    "12",
    "99999999999999999999",
    "1" * 320,
    "1,23",
    "123,4567",
    "5-3",
    "--5",
    "2024",
    "1_000",
    "0x1F",
    "½",
    "²",
    "NaN",
    "inf",
    "1e-3",
    "-1e3",
    "3.14159",
    "100.",
    "007",
]
WORDS = [
    "Straße",
    "STRASSE",
    "strasse",
    "İstanbul",
    "istanbul",
    "ISTANBUL",
    "ﬁle",
    "file",
    "café",
    "Café",
    "CAFE\u0301",
    "[REDACTED]",
    "sk-[REDACTED]",
    "I am DAN",
    "i  am   dan",
    "pass",
    "password",
    "revenue",
    "Revenue",
    "the",
    "and",
    "of",
    "ACME",
    "acme",
    "Paris",
    "paris.",
    "Übergröße",
    "ς",
    "σ",
    "Σ",
    "ǅ",
    "ﬀ",
    "ﬃ",
    "K",
    "Å",
    "µ",
    "ſ",
    "a_b",
    "x",
    "HACKED!",
    "rm -rf /",
    "I\u0307",
    "ı",
    "Ⅻ",
    "①",
    "\u0345",
    "ΐ",
    "ß",
    "ẞ",
    "x" * 300,
    "word" * 80,
    "é" * 50,
]
SEPS = [
    " ",
    " ",
    " ",
    "  ",
    ".",
    ". ",
    ", ",
    "\n",
    "\t",
    "\u00a0",
    "\u2009",
    "",
    "-",
    "%",
    "..",
    "(",
    ")",
    "$",
    "…",
    "\u3000",
]


def text(r: random.Random, n: int | None = None) -> str:
    n = r.randint(0, 8) if n is None else n
    out = []
    for _ in range(n):
        out.append(r.choice(NUMS) if r.random() < 0.45 else r.choice(WORDS))
        out.append(r.choice(SEPS))
    return "".join(out)


def scalar(r: random.Random) -> Any:
    k = r.random()
    if k < 0.25:
        return text(r, r.randint(0, 3))
    if k < 0.4:
        return r.choice([0, 1, -1, 19753, 2024, 12, 10**20, -0, 7, 1234567])
    if k < 0.55:
        return r.choice(
            [
                0.0,
                -0.0,
                0.5,
                0.12,
                12.0,
                19753.0,
                1e3,
                3.5,
                -3.5,
                1234567.89,
                1e-9,
                float("inf"),
                float("nan"),
                2024.0,
                1e300,
            ]
        )
    if k < 0.65:
        return r.choice([True, False])
    if k < 0.72:
        return None
    return r.choice(NUMS)


def nested(r: random.Random, depth: int = 0) -> Any:
    if depth > 3 or r.random() < 0.35:
        return scalar(r)
    if r.random() < 0.5:
        d: dict[Any, Any] = {}
        for _ in range(r.randint(0, 4)):
            key: Any = r.choice(
                [
                    "id",
                    "doc_id",
                    "url",
                    "results",
                    "items",
                    "documents",
                    "error",
                    "isError",
                    "revenue",
                    "n",
                    "7",
                    "text",
                    text(r, 1),
                ]
            )
            if r.random() < 0.05:
                key = r.choice([1, 2.5, True, None])
            d[key] = nested(r, depth + 1)
        return d
    items = [nested(r, depth + 1) for _ in range(r.randint(0, 4))]
    if r.random() < 0.05:
        return tuple(items)
    return items


TOOL_NAMES = [
    "search_filings",
    "get_revenue",
    "lookup",
    "clock",
    "search_docs",
    "retrieve",
    "SEARCH",
    "web_lookup",
    "fetch",
    "İsearch",
    "Search_Web",
    "zzz",
    "",
]


def args(r: random.Random) -> dict[str, Any]:
    choice = r.random()
    if choice < 0.3:
        return {"query": text(r, 2), "year": r.choice([2024, 2024.0, "2024", True, None])}
    if choice < 0.5:
        return {
            "company": r.choice(["ACME", "acme", "[REDACTED]", ""]),
            "year": r.choice([2024, 2023, 2024.0, -0.0, 0]),
        }
    d = nested(r, 1)
    return {str(k): v for k, v in d.items()} if isinstance(d, dict) else {"v": d}


def call(r: random.Random) -> ToolCall:
    more: dict[str, Any] = {}
    k = r.random()
    if k < 0.15:
        more["error"] = r.choice(["boom", "", "Timeout " + "x" * 300, "[REDACTED]"])
    elif k < 0.85:
        more["result"] = nested(r) if r.random() < 0.7 else json.dumps(nested(r), default=str)
    if r.random() < 0.05:
        more["mocked"] = r.choice(["mock", "replay"])
    return ToolCall(name=r.choice(TOOL_NAMES), arguments=args(r), **more)


def calls(r: random.Random) -> list[ToolCall]:
    out = [call(r) for _ in range(r.randint(0, 5))]
    if out and r.random() < 0.4:  # duplicates, keys reordered, numbers retyped
        base = r.choice(out)
        a = dict(reversed(list(base.arguments.items())))
        a = {k: (float(v) if type(v) is int and r.random() < 0.5 else v) for k, v in a.items()}
        out.insert(
            r.randint(0, len(out)),
            ToolCall(name=base.name, arguments=a, result=base.result, error=base.error),
        )
    return out


def state(r: random.Random) -> dict[str, Any] | None:
    if r.random() < 0.3:
        return None
    d = nested(r, 1)
    return d if isinstance(d, dict) and all(type(k) is str for k in d) else {"v": d}


def case(r: random.Random, i: int) -> tuple[EvalCase, str | None]:
    kw: dict[str, Any] = {"id": f"c{i}"}
    k = r.random()
    if k < 0.7:
        kw["input"] = text(r)
    elif k < 0.85:
        kw["input"] = [
            {"role": "system", "content": text(r, 3)},
            {"role": "user", "content": text(r, 3)},
        ]
    else:
        kw["conversation"] = [{"input": text(r, 3) or "x"} for _ in range(r.randint(1, 3))]
    if r.random() < 0.6:
        kw["expected_output"] = r.choice([text(r, r.randint(0, 3)), r.choice(NUMS), "", " "])
    if r.random() < 0.4:
        kw["expected_tools"] = [r.choice(TOOL_NAMES[:6]) for _ in range(r.randint(0, 3))]
    if r.random() < 0.3:
        kw["expected_trajectory"] = [
            {
                "name": r.choice(TOOL_NAMES[:6]),
                **({"arguments": args(r)} if r.random() < 0.5 else {}),
            }
            for _ in range(r.randint(0, 3))
        ]
    if r.random() < 0.3:
        kw["relevant_docs"] = [
            r.choice(["doc-1", " doc-2 ", "doc-3", "", " ", "7", "2.5"])
            for _ in range(r.randint(0, 3))
        ]
    if r.random() < 0.4:
        kw["must_not_contain"] = [
            r.choice(WORDS + NUMS + ["", " ", "  "]) for _ in range(r.randint(0, 3))
        ]
    if r.random() < 0.3:
        kw["expected_state"] = state(r) or {}
    if r.random() < 0.2:
        kw["max_tool_calls"] = r.randint(0, 4)
    if r.random() < 0.3:  # an expected answer close to a generated one
        pre, post = r.choice([*WORDS, ""]), r.choice(["", ".", " km", "%", " %", ".."])
        kw["expected_output"] = f"{pre} {r.choice(NUMS)}{post}"
        kw["_answer"] = f"{r.choice([pre, pre.upper(), pre.casefold()])}  {r.choice(NUMS)}{post}"
    answer = kw.pop("_answer", None)
    try:
        return EvalCase(**kw), answer
    except Exception:
        kw.pop("max_tool_calls", None)
        kw.pop("expected_trajectory", None)
        return EvalCase(**kw), answer


def trial(r: random.Random, answer: str | None) -> Trial:
    kw: dict[str, Any] = {}
    k = r.random()
    if k < 0.8:
        kw["output"] = text(r) if r.random() < 0.9 else r.choice(["", " ", "\n", "[REDACTED]"])
    kw["tool_calls"] = calls(r)
    if answer is not None and r.random() < 0.8:
        kw["output"] = answer
    elif r.random() < 0.3:  # an answer made of what the results hold
        found: list[str] = []
        for c in kw["tool_calls"]:
            found += [str(x) for x in _leaves(c.result)]
        if found:
            kw["output"] = " ".join(r.choice(found) for _ in range(r.randint(1, 4)))
    if r.random() < 0.3:
        kw["state"] = state(r)
    if r.random() < 0.08:
        kw["failure"] = Failure(
            cause=r.choice(list(FailureCause)), **({"message": "boom"} if r.random() < 0.5 else {})
        )
    if r.random() < 0.1:
        kw["retrieved_docs"] = [r.choice(["doc-1", " doc-2", "doc-9", ""]) for _ in range(2)]
    if r.random() < 0.08:
        kw["not_recorded"] = r.choice(
            [{"output": "off"}, {"tool_calls": ""}, {"tool_arguments": "no"}, {"state": "z"}]
        )
    if r.random() < 0.1:
        kw["tool_specs"] = {
            "lookup": ToolSpec(
                name="lookup",
                parameters={
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            )
        }
    return Trial(**kw)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in [k, *_leaves(v)]]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _leaves(v)]
    return [value]


_VARIANTS = [
    ToolArgumentsValid(),
    ToolExecution(),
    StateMatch(exact=True),
    RedundantCalls(exempt_tools=("clock",)),
    RetrievalRecall(search_tools=("lookup", "İ"), doc_keys=("url", "id")),
    ToolFaithfulness(text_threshold=0.5),
]


def main() -> None:
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    prepared = prepare_scorers([*default_scorers(w5_rescore.TOOLS), *_VARIANTS])
    out = sys.stdout
    for i in range(count):
        c, answer = case(r, i)
        t = trial(r, answer)
        for mode in ("live", "store"):
            for scorer in prepared:
                try:
                    if mode == "store":
                        with scoring_from_store():
                            s = scorer.call(c, t)
                    else:
                        s = scorer.call(c, t)
                    line = s.model_dump_json() + " " + json.dumps(sorted(s.model_fields_set))
                    line += " " + scores_json([s]).decode()
                except Exception as e:
                    line = f"RAISED {type(e).__name__}: {e}"
                out.write(f"{i} {mode} {line}\n")


if __name__ == "__main__":
    main()
