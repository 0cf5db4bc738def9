"""The public surface: every name of `agenteval.__all__` imports, the README's top-level imports are
all in it, the built-in scorers are among them, and the names of the criterion API and the agent
evaluators are aliases of the model's names (the same class, the same value), not copies."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import agenteval
from agenteval.scorers import BUILTIN_SCORERS

README = Path(__file__).parents[1] / "README.md"

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
_FROM_IMPORT = re.compile(r"^from agenteval import (\([^)]*\)|[^\n]*)", re.MULTILINE)
_ATTRIBUTE = re.compile(r"\bagenteval\.([A-Za-z_]\w*)")
# In the prose, a call (`agenteval.rescore(...)`) or a decorator (`@agenteval.tool`); not a key
# (`metadata["agenteval.cut"]`), a file (`agenteval.yaml`) or a schema (`agenteval.run/1`).
_INLINE_USE = re.compile(r"`@agenteval\.([A-Za-z_]\w*)`|`agenteval\.([A-Za-z_]\w*)\(")
_INLINE_IMPORT = re.compile(r"`from agenteval import ([^`]*)`")


def _python_blocks() -> list[str]:
    blocks = _PYTHON_BLOCK.findall(README.read_text(encoding="utf-8"))
    # Comments are prose: `agenteval.yaml` in a comment is a file, not an import.
    return [re.sub(r"#[^\n]*", "", block) for block in blocks]


def _is_submodule(name: str) -> bool:
    return importlib.util.find_spec(f"agenteval.{name}") is not None


def test_every_name_in_all_imports() -> None:
    assert len(agenteval.__all__) == len(set(agenteval.__all__)), "a name listed twice"
    namespace: dict[str, object] = {}
    for name in agenteval.__all__:
        exec(f"from agenteval import {name}", namespace)
        assert namespace[name] is getattr(agenteval, name)


def test_readme_top_level_imports_are_all_public() -> None:
    blocks = _python_blocks()
    assert blocks, "the README has Python examples"
    imported: set[str] = set()
    for block in blocks:
        for names in _FROM_IMPORT.findall(block):
            imported.update(n.split(" as ")[0].strip() for n in names.strip("()").split(","))
        imported.update(name for name in _ATTRIBUTE.findall(block) if not _is_submodule(name))
    prose = README.read_text(encoding="utf-8")
    for decorator, called in _INLINE_USE.findall(prose):
        imported.add(decorator or called)
    for names in _INLINE_IMPORT.findall(prose):
        imported.update(name.strip() for name in names.split(","))
    imported.discard("")
    # The parsing found the examples, in code and in prose.
    assert {"evaluate", "EvalCase", "tool", "rescore", "ExactMatch"} <= imported
    assert sorted(imported - set(agenteval.__all__)) == []


def test_the_builtin_scorers_are_importable_from_the_top_level() -> None:
    for name, cls in BUILTIN_SCORERS.items():
        assert cls.__name__ in agenteval.__all__, name
        assert getattr(agenteval, cls.__name__) is cls


def test_the_readme_first_screen_names_the_three_doors() -> None:
    first_screen = README.read_text(encoding="utf-8").split("\n---\n", 1)[0]
    for door in ("agenteval.evaluate(", "EvalSuite(", "AgentEvaluator("):
        assert door in first_screen


def test_the_seeds_names_are_aliases_not_copies() -> None:
    assert agenteval.ExecutionResult is agenteval.Trial

    trial = agenteval.ExecutionResult(actual_response="7 days")
    assert trial.output == trial.actual_response == "7 days"
    assert agenteval.Trial().actual_response == ""

    call = agenteval.ToolCall(name="lookup", args={"order_id": "A1"})
    assert call.args is call.arguments == {"order_id": "A1"}
    expected = agenteval.ExpectedCall(name="lookup", args={"order_id": "A1"})
    assert expected.args is expected.arguments == {"order_id": "A1"}

    case = agenteval.EvalCase(input="go", expected_tool_calls=["search", "summarize"])
    assert case.expected_tool_calls is case.expected_tools == ["search", "summarize"]
    assert "expected_tool_calls" not in case.model_dump()  # one field, stored once

    eval_set = agenteval.EvalSet(eval_set_id="s", eval_cases=[case])
    assert (eval_set.eval_set_id, eval_set.eval_cases) == (eval_set.id, eval_set.cases)

    stats = agenteval.CriterionStats(mean=0.5)
    assert stats.avg_score == stats.mean
