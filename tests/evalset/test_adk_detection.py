"""One detection of an ADK eval set, shared by `agenteval run FILE` (`load_cases`) and
`EvalSet.load`: by name (`*.evalset.json`, `*.test.json`), and for another `.json` file by
content. ADK's own benchmarks keep eval sets under other names
(`benchmarks/bigquerybench/eval_sets/bigquerybench_eval.json`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean

from agenteval import DatasetError, load_cases
from agenteval.evalset import EvalSet, is_adk_file

CORPUS = Path(__file__).parent / "data" / "adk_corpus"
BIGQUERY = CORPUS / "bigquerybench_eval.json"


def test_load_cases_reads_an_adk_eval_set_under_another_name() -> None:
    cases = load_cases(BIGQUERY)
    assert [case.id for case in cases] == [c.id for c in EvalSet.load(BIGQUERY).cases]
    assert [case.id for case in cases] == ["schema_list_datasets", "sql_shakespeare_unique_words"]


def test_agenteval_run_takes_an_adk_eval_set_under_another_name(tmp_path: Path) -> None:
    shutil.copy(BIGQUERY, tmp_path / "bigquerybench_eval.json")
    (tmp_path / "agent.py").write_text(
        "def agent(text):\n    return 'usa_names\\nsamples\\nnoaa_gsod'\n", encoding="utf-8"
    )
    done = agenteval_cli(tmp_path, "run", "bigquerybench_eval.json", "--agent", "agent.py:agent")
    assert_clean(done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 trials, 2 completed" in done.stdout


@pytest.mark.parametrize(
    ("content", "adk"),
    [
        ({"eval_set_id": "s", "eval_cases": []}, True),
        ({"evalSetId": "s", "evalCases": []}, True),
        ({"eval_set_id": "s", "eval_case": []}, True),  # ADK's, misspelt: ADK's reader says so
        ([{"query": "Hi", "expected_tool_use": [], "reference": "Hello"}], True),
        ([{"name": "c", "data": [{"query": "Hi"}], "initial_session": {}}], True),
        ({"cases": [{"input": "Hi"}]}, False),
        ([{"input": "Hi", "expected_output": "Hello"}], False),
        # agenteval's list with a mistake: left to agenteval's reader and its hints
        ([{"query": "Hi", "expected_output": "Hello"}], False),
        ([], False),
    ],
)
def test_a_json_file_is_told_by_its_shape(tmp_path: Path, content: object, adk: bool) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    assert is_adk_file(path) is adk


def test_a_misspelt_adk_set_under_another_name_gets_adks_message(tmp_path: Path) -> None:
    path = tmp_path / "eval.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_case": []}), encoding="utf-8")
    for load in (load_cases, EvalSet.load):
        with pytest.raises(DatasetError) as caught:
            load(path)
        assert caught.value.hint == "rename 'eval_case' to 'eval_cases'"


def test_the_adk_names_need_no_content_check(tmp_path: Path) -> None:
    assert is_adk_file(tmp_path / "missing.evalset.json")
    assert not is_adk_file(tmp_path / "missing.json")
    assert not is_adk_file(tmp_path / "cases.yaml")
