"""The quickstart agent's tools: a document search, a calculator and a table lookup.

Each is a plain function marked with `@agenteval.tool`, so every call made during a trial is
recorded (arguments, result or error, timing). The type annotations matter: they become the
JSON schema that `tool_arguments_valid` checks each call against.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import agenteval

__all__ = ["calculator", "lookup", "search_docs"]

DOCS_DIR = Path(__file__).parent / "docs"

# ---------------------------------------------------------------------------------------------
# search_docs: BM25 over the bundled Markdown documents
# ---------------------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an and are at be by can do does for from get has have how i in is it its much my of on "  # noqa: SIM905
    "or our the to up what when where which who with".split()
)


def _terms(text: str) -> list[str]:
    """Lowercase words without accents or stopwords, with a plural `s` dropped."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", plain)
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _STOPWORDS]


@dataclass(frozen=True)
class _Doc:
    id: str
    title: str
    text: str
    terms: Counter[str]


def _load_docs() -> list[_Doc]:
    docs = []
    for path in sorted(DOCS_DIR.glob("*.md")):
        title, _, body = path.read_text(encoding="utf-8").partition("\n")
        title = title.removeprefix("# ").strip()
        text = " ".join(body.split())
        docs.append(_Doc(path.stem, title, text, Counter(_terms(f"{title} {text}"))))
    return docs


_DOCS = _load_docs()
_AVERAGE_LENGTH = sum(doc.terms.total() for doc in _DOCS) / len(_DOCS)


def _bm25(query: list[str], doc: _Doc, k1: float = 1.5, b: float = 0.75) -> float:
    score = 0.0
    for term in set(query):
        frequency = doc.terms[term]
        if not frequency:
            continue
        having = sum(1 for other in _DOCS if term in other.terms)
        idf = math.log(1 + (len(_DOCS) - having + 0.5) / (having + 0.5))
        norm = k1 * (1 - b + b * doc.terms.total() / _AVERAGE_LENGTH)
        score += idf * frequency * (k1 + 1) / (frequency + norm)
    return score


@agenteval.tool
def search_docs(query: str, limit: int = 3) -> list[dict[str, str]]:
    """Search the Acme Travel knowledge base; return the best `limit` documents that match.

    Each result has the document's `id`, `title` and a `snippet` of its text (the documents are
    short, so the snippet is the whole text, clipped at 400 characters).
    """
    terms = _terms(query)
    scored = [(_bm25(terms, doc), doc) for doc in _DOCS]
    ranked = sorted((pair for pair in scored if pair[0] > 0), key=lambda p: (-p[0], p[1].id))
    return [
        {"id": doc.id, "title": doc.title, "snippet": doc.text[:400]} for _, doc in ranked[:limit]
    ]


# ---------------------------------------------------------------------------------------------
# calculator: arithmetic only, by walking the syntax tree (never eval)
# ---------------------------------------------------------------------------------------------

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def _evaluate(node: ast.expr) -> float:
    # Floats throughout: a huge power overflows at once instead of building a giant integer.
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    raise ValueError(f"not arithmetic: {ast.unparse(node)!r}")


@agenteval.tool
def calculator(expression: str) -> float:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, and parentheses.

    Raises ValueError for anything else (names, calls, attributes, strings).
    """
    if len(expression) > 200:
        raise ValueError("expression too long (200 characters at most)")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from exc
    result = _evaluate(tree.body)
    # A negative number to a fractional power is complex; 1e308 * 10 is infinite.
    if not isinstance(result, float) or not math.isfinite(result):
        raise ValueError(f"no finite real result: {expression!r}")
    return result


# ---------------------------------------------------------------------------------------------
# lookup: a row of a small bundled table
# ---------------------------------------------------------------------------------------------

TABLES: dict[str, dict[str, dict[str, str | float]]] = {
    "fares": {
        "LIS-OPO": {"from": "Lisbon", "to": "Porto", "price_eur": 79},
        "LIS-MAD": {"from": "Lisbon", "to": "Madrid", "price_eur": 95},
        "LIS-ZRH": {"from": "Lisbon", "to": "Zürich", "price_eur": 149},
        "LIS-YUL": {"from": "Lisbon", "to": "Montréal", "price_eur": 489},
    },
    "exchange_rates": {
        "EUR-USD": {"rate": 1.08},
        "EUR-CAD": {"rate": 1.47},
        "EUR-GBP": {"rate": 0.85},
        "EUR-CHF": {"rate": 0.94},
    },
}


@agenteval.tool
def lookup(table: str, key: str) -> dict[str, str | float]:
    """Return the row `key` of `table` ("fares", by route like "LIS-OPO"; "exchange_rates", by
    pair like "EUR-USD").

    Raises KeyError for an unknown table or key.
    """
    if table not in TABLES:
        raise KeyError(f"no table {table!r}; tables: {', '.join(TABLES)}")
    rows = TABLES[table]
    if key not in rows:
        raise KeyError(f"no {key!r} in {table}; keys: {', '.join(rows)}")
    return {"key": key, **rows[key]}
