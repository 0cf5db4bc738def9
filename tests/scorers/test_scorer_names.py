"""Two scorers, one name: within a run every scorer's name is unique, the same scorer given twice
is applied once, and every stored score can be traced back to the code that gave it (the
reference `rescore` would load), in `show --verbose` and in the HTML report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI

import agenteval
from agenteval import CriterionConfig, EvalCase, EvalSuite, ExactMatchCriterion, RunStore
from agenteval.catalog import resolve_run_scorers, resolve_scorers, scorer_references
from agenteval.errors import ScorerError
from agenteval.judge.judge import JudgeConfig
from agenteval.scorers.answer import ExactMatch

pytest_plugins = ("pytester",)

CASE = EvalCase(id="capital", input="What is the capital of France?", expected_output="Paris.")


def says_paris(question: str) -> str:
    return "paris"


def by_name(run: agenteval.Run) -> dict[str, Any]:
    (result,) = list(run.iter_results())
    return {name: score.value for name, score in result.scores.items()}


def shouts(case: EvalCase, trial: Any) -> float:
    """A user's scorer with no name of its own: named after the function."""
    return 1.0


def test_a_criterion_named_like_a_builtin_no_longer_replaces_it(tmp_path: Path) -> None:
    # The built-in forgives case and a final period (1.0); seed 003's criterion does not (0.0).
    run = agenteval.evaluate(
        says_paris, [CASE], scorers=[ExactMatchCriterion()], store=tmp_path / "r.db"
    )
    values = by_name(run)
    assert values["exact_match"] == 1.0
    assert values["exact_match_2"] == 0.0
    # Each stored score says which code gave it: the built-in, and seed 003's criterion by a
    # name `rescore` loads again.
    refs = scorer_references(run.info)
    assert refs["exact_match"] == "exact_match"
    assert refs["exact_match_2"] == "criteria.exact_match"
    # ... and rescoring the run loads both again, under the same names, with the same verdicts.
    rescored = agenteval.rescore(run.run_id, store=tmp_path / "r.db")
    assert by_name(rescored) == values
    assert scorer_references(rescored.info) == refs


def test_the_same_scorer_given_twice_is_applied_once() -> None:
    names = [
        agenteval.scorers.scorer_name(s)
        for s in resolve_scorers(["exact_match", "exact_match", ExactMatch()], builtins=True)
    ]
    assert names.count("exact_match") == 1 and "exact_match_2" not in names
    criterion = ExactMatchCriterion()
    twice = resolve_scorers([criterion, criterion, "criteria.exact_match"], builtins=False)
    assert [agenteval.scorers.scorer_name(s) for s in twice] == ["exact_match"]


def test_a_builtin_given_settings_configures_the_default_one() -> None:
    scorers = resolve_scorers([{"name": "exact_match", "threshold": 0.9}], builtins=True)
    (exact,) = [s for s in scorers if agenteval.scorers.scorer_name(s) == "exact_match"]
    assert exact.threshold == 0.9
    assert "exact_match_2" not in map(agenteval.scorers.scorer_name, scorers)


def test_two_scorers_named_alike_by_their_code_get_distinct_names(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def shouts(case, trial):\n    return 0.0\n")
    scorers = resolve_scorers(
        [shouts, f"{tmp_path / 'a.py'}:shouts", ExactMatchCriterion()], builtins=False
    )
    assert [agenteval.scorers.scorer_name(s) for s in scorers] == [
        "shouts",
        "shouts_2",
        "exact_match",
    ]


class Named:
    """A user's scorer object that names itself."""

    def __init__(self, name: str, value: float) -> None:
        self.name = name
        self.value = value

    def __call__(self, case: EvalCase, trial: Any) -> float:
        return self.value


def test_two_scorers_the_user_named_alike_are_an_error() -> None:
    with pytest.raises(ScorerError, match="two scorers are named 'accuracy'") as raised:
        resolve_scorers([Named("accuracy", 1.0), Named("accuracy", 0.0)], builtins=False)
    assert "name" in (raised.value.hint or "")
    # By name in a config or on the command line, with other settings: the user named both.
    with pytest.raises(ScorerError, match="two scorers are named 'exact_match'"):
        resolve_scorers([{"name": "exact_match", "threshold": 0.9}, "exact_match"], builtins=False)


def test_a_suite_names_its_evaluators_as_evaluate_does(tmp_path: Path) -> None:
    suite = EvalSuite("names", store=tmp_path / "r.db").add_cases(CASE)
    lenient = ExactMatchCriterion(config=CriterionConfig(threshold=0.0))
    # The second criterion like the first is the same scorer: applied once.
    suite.add_evaluators(ExactMatchCriterion(), ExactMatch(), ExactMatchCriterion(), lenient)
    run = suite.run(says_paris)
    assert by_name(run) == {"exact_match": 0.0, "exact_match_2": 1.0, "exact_match_3": 0.0}
    (result,) = list(run.iter_results())
    assert result.scores["exact_match_3"].passed is True  # the lenient one
    assert scorer_references(run.info)["exact_match_3"] == (
        'criteria.exact_match {"threshold": 0.0}'
    )


def test_a_rescore_adding_a_scorer_of_a_taken_name_keeps_the_stored_score(
    tmp_path: Path,
) -> None:
    store = tmp_path / "r.db"
    # A scorer defined in a test module is loadable; a lambda is not: its score is kept.
    run = agenteval.evaluate(
        says_paris,
        [CASE],
        scorers=[lambda case, trial: 0.25],
        builtins=False,
        store=store,
    )
    assert by_name(run) == {"<lambda>": 0.25}
    assert scorer_references(run.info)["<lambda>"].endswith("(not loadable again)")
    again = agenteval.rescore(run.run_id, [ExactMatchCriterion(), shouts], store=store)
    assert by_name(again) == {"<lambda>": 0.25, "exact_match": 0.0, "shouts": 1.0}
    refs = scorer_references(again.info)
    assert refs["shouts"] == f"{__name__}:shouts"


def test_show_verbose_and_the_html_report_name_each_scores_code(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def answer(question):\n    return 'paris'\n")
    (tmp_path / "cases.yaml").write_text(
        "- id: capital\n  input: What is the capital of France?\n  expected_output: Paris.\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "COLUMNS": "200",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agenteval", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    done = cli("run", "cases.yaml", "--agent", "agent.py:answer", "--scorer",
               "criteria.exact_match", "--json", "o.json")  # fmt: skip
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    scores = json.loads((tmp_path / "o.json").read_text())["results"][0]["scores"]
    assert (scores["exact_match"]["value"], scores["exact_match_2"]["value"]) == (1.0, 0.0)
    with RunStore(tmp_path / ".agenteval" / "runs.db") as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
    shown = cli("show", info.run_id, "--verbose")
    assert shown.returncode == 0, shown.stderr
    lines = [line.split() for line in shown.stdout.splitlines()]
    assert ["exact_match_2", "criteria.exact_match"] in lines
    assert ["exact_match", "exact_match"] in lines
    assert cli("show", info.run_id, "--html", "report.html").returncode == 0
    html = (tmp_path / "report.html").read_text()
    # Beside each score's reason, in the trial's score table.
    assert re.search(r"exact_match_2</code>.*?criteria\.exact_match", html, re.S)
    # A built-in under its own name is not repeated under every reason.
    assert "scorer: <code>exact_match</code>" not in html


def test_the_pytest_plugin_names_and_stores_scorers_as_evaluate_does(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".yaml",
        cases="- id: capital\n  input: What is the capital?\n  expected_output: Paris.\n",
    )
    (pytester.path / "agent.py").write_text("def answer(question):\n    return 'paris'\n")
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_names="""
        from agenteval import ExactMatchCriterion
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases(
            "cases.yaml",
            agent="agent.py:answer",
            scorers=[ExactMatchCriterion()],
            required=["exact_match"],
        )
        def test_names(agenteval_result):
            '''The built-in decides; the byte-exact criterion is scored beside it.'''
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
    with RunStore(pytester.path / "runs.db", create=False) as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        (result,) = list(store.iter_results(row.run_id))
    assert (result.scores["exact_match"].value, result.scores["exact_match_2"].value) == (1.0, 0.0)
    refs = scorer_references(info)
    assert (refs["exact_match"], refs["exact_match_2"]) == ("exact_match", "criteria.exact_match")


def correctness(case: EvalCase, trial: Any) -> tuple[float, str]:
    """A user's scorer named like a judge rubric."""
    return 0.25, "my own rule"


def test_judging_a_run_never_writes_a_rubric_over_a_score_of_other_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTEVAL_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    store = tmp_path / "r.db"
    run = agenteval.evaluate(says_paris, [CASE], scorers=[correctness], builtins=False, store=store)
    with FakeOpenAI() as fake:
        config = JudgeConfig(
            spec="openai:gpt-4o-mini", base_url=fake.base_url, cache_path=tmp_path / "c.db"
        )
        judged = agenteval.judge_run(run.run_id, config, rubrics=["correctness"], store=store)
        (result,) = list(judged.iter_results())
        assert result.scores["correctness"].reason == "my own rule"  # kept, not judged over
        assert result.scores["correctness_2"].judge is not None
        refs = scorer_references(judged.info)
        assert (refs["correctness"], refs["correctness_2"]) == (
            f"{__name__}:correctness",
            "correctness",
        )
        # Rescoring runs both again, each under the name the run gave it.
        assert judged.info.scorers == [f"{__name__}:correctness", "correctness"]
        (again,) = list(agenteval.rescore(run.run_id, store=store, judge=config).iter_results())
    assert again.scores["correctness"].reason == "my own rule"
    assert again.scores["correctness_2"].judge is not None


def test_a_resumed_or_rescored_run_keeps_the_names_it_gave() -> None:
    # The run scored a lambda as `shouts` and this module's `shouts` as `shouts_2`; only the
    # second is stored as a reference, so resolving the stored references alone would call it
    # `shouts` and write its scores over the lambda's.
    stored = {
        "shouts": {"code": f"{__name__}:<lambda>"},
        "shouts_2": {"ref": f"{__name__}:shouts"},
    }
    resolution = resolve_run_scorers([f"{__name__}:shouts"], builtins=False, stored=stored)
    assert [agenteval.scorers.scorer_name(s) for s in resolution.scorers] == ["shouts_2"]
    assert resolution.renamed == []  # the name the run gave it: nothing to warn about
    # A scorer new to the run never takes a stored name of other code.
    added = resolve_run_scorers([Named("shouts", 1.0)], builtins=False, stored=stored)
    assert [agenteval.scorers.scorer_name(s) for s in added.scorers] == ["shouts_3"]
