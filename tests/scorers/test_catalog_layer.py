"""The catalog (`agenteval.catalog`, names → scorers) sits above the scoring layer's front doors:
nothing of the judge, the scorers, the criteria or the evaluators imports it, and the scorers and
the judge import neither door. Every import statement counts, those inside functions and under
`TYPE_CHECKING` too, as they do for import-linter."""

from __future__ import annotations

import ast
from pathlib import Path

import agenteval

SRC = Path(agenteval.__file__).parent

# package -> the agenteval packages/modules none of its modules may import
FORBIDDEN = {
    "judge": (
        "agenteval.catalog",
        "agenteval.scorers",
        "agenteval.criteria",
        "agenteval.evaluators",
    ),
    "scorers": ("agenteval.catalog", "agenteval.criteria", "agenteval.evaluators"),
    "criteria": ("agenteval.catalog", "agenteval.evaluators"),
    "evaluators": ("agenteval.catalog",),
}


def _imported(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_nothing_below_the_catalog_imports_it_and_the_scorers_import_no_door() -> None:
    wrong = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for package, forbidden in FORBIDDEN.items()
        for path in sorted((SRC / package).rglob("*.py"))
        for line, name in _imported(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]
    assert wrong == []
