"""A scorer of the user's file keeps its one name when the run is scored again in another
process: the module agenteval loads the file as is named the same in every process, so the
stored reference still names it (it was `hash()` of the path, which Python salts per process,
and a rescore added the config's scorer a second time, as `keyed_2`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_process import agenteval_cli, cli_env


def test_rescoring_in_another_process_scores_the_config_scorer_once(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text('def run(text):\n    return "Paris"\n')
    (tmp_path / "scorers.py").write_text(
        'def keyed(case, trial):\n    return (trial.output or "") == "Paris"\n'
    )
    (tmp_path / "cases.yaml").write_text("- input: capital of France?\n  expected_output: Paris\n")
    (tmp_path / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:run\nscorers: [scorers.py:keyed]\n"
    )
    # Two different salts, so the two processes hash strings differently for certain.
    ran = agenteval_cli(tmp_path, "run", ".", env=cli_env(PYTHONHASHSEED="1"))
    assert ran.returncode == 0, ran.stderr
    rescored = agenteval_cli(
        tmp_path,
        "rescore",
        "latest",
        "--json",
        str(tmp_path / "rescored.json"),
        env=cli_env(PYTHONHASHSEED="2"),
    )
    assert rescored.returncode == 0, rescored.stderr
    assert "two scorers are named" not in rescored.stderr
    document = json.loads((tmp_path / "rescored.json").read_text())
    names = [name for name in document["summary"]["scorers"] if name.startswith("keyed")]
    assert names == ["keyed"]
