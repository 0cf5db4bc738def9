"""agenteval's own JSON case file under a name ADK also uses (`smoke.test.json`,
`x.evalset.json`): `dump_cases` writes it, so `load_cases`, `EvalSet.load` and `agenteval run`
must read it back, not refuse it as an ADK file with unknown keys. A real ADK file under
those names is still read as ADK (and its misspelt keys still refused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.review.cli import agenteval as agenteval_cli

import agenteval
from agenteval import EvalCase
from agenteval.case import Invocation
from agenteval.errors import DatasetError
from agenteval.evalset import EvalSet, is_adk_file

CASES = [
    EvalCase(id="a", input="Capital of France?", expected_output="Paris", tags=["geo"]),
    EvalCase(id="b", input="2+2?", expected_output="4", expected_tools=["calculator"]),
]


@pytest.mark.parametrize("name", ["smoke.test.json", "cases.evalset.json", "CASES.TEST.JSON"])
def test_dump_cases_then_load_cases_round_trips_under_an_adk_name(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    agenteval.dump_cases(CASES, path)
    assert not is_adk_file(path)
    back = agenteval.load_cases(path)
    assert [(c.id, c.input, c.expected_output) for c in back] == [
        (c.id, c.input, c.expected_output) for c in CASES
    ]
    assert back[1].expected_tools == ["calculator"]
    assert [c.id for c in EvalSet.load(path).cases] == ["a", "b"]


def test_conversation_cases_dumped_under_an_adk_name_read_back(tmp_path: Path) -> None:
    case = EvalCase(
        id="chat", conversation=[Invocation(input="hi", expected_final_response="hello")]
    )
    path = tmp_path / "chat.test.json"
    agenteval.dump_cases([case], path)
    back = agenteval.load_cases(path)
    assert back[0].id == "chat"
    assert back[0].conversation[0].expected_final_response == "hello"


def test_a_cases_mapping_under_an_adk_name_is_agentevals(tmp_path: Path) -> None:
    path = tmp_path / "x.evalset.json"
    path.write_text(json.dumps({"cases": [{"id": "a", "input": "hi", "expected_output": "hi"}]}))
    assert [c.id for c in agenteval.load_cases(path)] == ["a"]


def test_agenteval_run_reads_its_own_case_file_named_test_json(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def run(text):\n    return 'Paris'\n")
    agenteval.dump_cases(CASES[:1], tmp_path / "smoke.test.json")
    done = agenteval_cli(tmp_path, "run", "smoke.test.json", "--agent", "agent.py:run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1" in done.stdout, done.stdout


def test_real_adk_files_under_those_names_are_still_adk(tmp_path: Path) -> None:
    legacy = tmp_path / "weather.test.json"
    legacy.write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "hello"}]))
    assert is_adk_file(legacy)
    assert agenteval.load_cases(legacy)[0].conversation[0].expected_final_response == "hello"
    misspelt = tmp_path / "m.test.json"
    misspelt.write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "referenc": "x"}]))
    assert is_adk_file(misspelt)
    with pytest.raises(DatasetError, match="referenc"):
        agenteval.load_cases(misspelt)
    evalset = tmp_path / "e.evalset.json"
    evalset.write_text(json.dumps({"eval_set_id": "s", "eval_cases": []}))
    assert is_adk_file(evalset)
