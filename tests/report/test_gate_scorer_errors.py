"""A scorer's errors count as not passing in `compare` and `gate`, as they do in "the trial
passes": a scorer that crashed on 19 of 20 cases regressed, and a gate threshold on a scorer
counts the trials it errored on as not passing: an error is no
pass, and a threshold that cannot check a trial never passes it by default.

Before, the regression rule compared only the cases the candidate's scorer gave a score: a
scorer that raised on 19 of 20 cases was "no significant regression ... over 1 cases" (exit
0, no policy needed). And `min_pass_rate` was taken over the trials the scorer scored only: a scorer that raised
on the 3 of 20 answers it could not read (not JSON) and passed the rest read 100%, and
`agenteval gate` passed `min_pass_rate: 0.9` (exit 0) on 17 passes of 20 trials; the trial
verdict's regression (3 cases of 20) was not significant. pass^k per scorer left the cases
with an errored trial out; it now counts them as not passing, as the summary's does. Real
`agenteval run` and `agenteval gate` processes over a real store.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.review.cli import agenteval, project, run_id

SCORERS = """
import json


def valid_json(case, trial):
    # A scorer that cannot read what is not JSON: it raises.
    return json.loads(trial.output)["ok"] is True


def answered(case, trial):
    return bool(trial.output)
"""

AGENT = """
import os


def answer(question: str) -> str:
    broken = os.environ.get("BROKEN", "")
    return "sorry" if question in broken.split(",") else '{"ok": true}'
"""

CASES = [{"id": f"c{i:02d}", "input": f"q{i}"} for i in range(20)]


def _gate(folder: Path, policy: str, trials: int = 1, broken: str = "q1,q2,q3") -> tuple[int, str]:
    (folder / "gate.yaml").write_text(policy, encoding="utf-8")
    base = agenteval(folder, "run", ".", "--trials", str(trials))
    assert base.returncode == 0, base.stdout + base.stderr
    candidate = agenteval(folder, "run", ".", "--trials", str(trials), BROKEN=broken)
    assert candidate.returncode == 0, candidate.stdout + candidate.stderr
    assert "errors" in candidate.stdout
    gate = agenteval(folder, "gate", run_id(base), run_id(candidate), "--policy", "gate.yaml")
    return gate.returncode, gate.stdout + gate.stderr


def _project(tmp_path: Path) -> Path:
    folder = project(
        tmp_path / "p",
        AGENT,
        CASES,
        "scorers: [checks.py:valid_json, checks.py:answered]\nbuiltins: false\n",
    )
    (folder / "checks.py").write_text(SCORERS, encoding="utf-8")
    return folder


def test_a_scorer_that_errored_on_trials_does_not_meet_its_minimum_pass_rate(
    tmp_path: Path,
) -> None:
    code, said = _gate(_project(tmp_path), "scorers:\n  valid_json:\n    min_pass_rate: 0.9\n")
    assert code == 1, said  # 0 before: "100.0% over 17 trials: 10.0 points to spare"
    assert "✗ valid_json pass rate ≥ 90.0%  85.0% over 20 trials (3 errored, counted as not " in (
        said
    )
    assert "gate failed: 1 of" in said


def test_the_minimum_still_holds_when_the_errors_leave_enough(tmp_path: Path) -> None:
    code, said = _gate(_project(tmp_path), "scorers:\n  valid_json:\n    min_pass_rate: 0.85\n")
    assert code == 0, said
    assert "✓ valid_json pass rate ≥ 85.0%  85.0% over 20 trials (3 errored" in said


def test_pass_hat_k_of_a_scorer_counts_its_errors_as_not_passing(tmp_path: Path) -> None:
    code, said = _gate(
        _project(tmp_path),
        "scorers:\n  valid_json:\n    min_pass_hat_k: {2: 0.9}\n  answered:\n"
        "    min_pass_hat_k: {2: 0.9}\n",
        trials=2,
    )
    # 0 before a first fix: pass^2 over the 17 cases with no error, 100%; then "cannot check"
    # while the summary's pass^k left the errors out. An error is no pass: 17 of 20 cases.
    assert code == 1, said
    assert (
        "✗ valid_json pass^2 ≥ 90.0%  85.0% over 20 cases (6 errored trials, counted as not "
        "passing): 5.0 points short" in said
    )
    assert "✓ answered pass^2 ≥ 90.0%" in said


def test_a_scorer_that_crashed_on_most_cases_is_a_regression(tmp_path: Path) -> None:
    broken = ",".join(f"q{i}" for i in range(1, 20))
    code, said = _gate(_project(tmp_path), "", broken=broken)
    assert code == 1, said  # 0 before: "pass rate 100.0% → 100.0% ... over 1 cases"
    assert "✗ no significant regression: valid_json  pass rate 100.0% → 5.0% " in said
    assert "over 20 cases — a significant regression" in said
    assert "✓ no significant regression: answered" in said


def test_compare_counts_the_errors_as_not_passing(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    base = agenteval(folder, "run", ".")
    candidate = agenteval(folder, "run", ".", BROKEN="q1,q2,q3")
    done = agenteval(folder, "compare", run_id(base), run_id(candidate), "--json", "c.json")
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((folder / "c.json").read_text(encoding="utf-8"))
    (scorer,) = [s for s in document["scorers"] if s["name"] == "valid_json"]
    assert scorer["cases"] == 20
    assert scorer["pass_rate"]["candidate"] == 0.85
    new = {(c["case_id"], c["scorer"]) for c in document["new_failures"]}
    assert new == {("c01", "valid_json"), ("c02", "valid_json"), ("c03", "valid_json")}
    (failure,) = [c for c in document["new_failures"] if c["case_id"] == "c01"]
    assert (failure["candidate_failed"], failure["candidate_judged"]) == (1, 1)
    assert failure["reason"].startswith("errored: JSONDecodeError")
