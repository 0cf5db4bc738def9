"""The gate's regression rule tests "the trial passes" too, with the same statistics as each
scorer, under its own row: `no significant regression: "trial passes"`.

Before, it tested each scorer's pass rate only: a candidate whose trials failed different
scorers (5 cases of 20 failing one scorer, 5 others failing the other) had no scorer with a
significant drop (5 of 20 discordant cases: McNemar p = 0.0625), while the trials passing fell
from 100% to 50% (p = 0.002), and `agenteval gate` exited 0. Real `agenteval run` and
`agenteval gate` processes over a real store.
"""

from __future__ import annotations

from pathlib import Path

from tests.review.cli import agenteval, project, run_id

SCORERS = """
def no_typo(case, trial):
    return "typo" not in trial.output


def polite(case, trial):
    return "rude" not in trial.output
"""

AGENT = """
import os


def answer(question: str) -> str:
    typos = os.environ.get("TYPOS", "").split(",")
    rude = os.environ.get("RUDE", "").split(",")
    said = "fine"
    if question in typos:
        said += " typo"
    if question in rude:
        said += " rude"
    return said
"""

CASES = [{"id": f"c{i:02d}", "input": f"q{i}"} for i in range(20)]
TYPOS = ",".join(f"q{i}" for i in range(5))
RUDE = ",".join(f"q{i}" for i in range(5, 10))


def _runs(tmp_path: Path, policy: str = "") -> tuple[int, str]:
    folder = project(
        tmp_path / "p",
        AGENT,
        CASES,
        "scorers: [checks.py:no_typo, checks.py:polite]\nbuiltins: false\n",
    )
    (folder / "checks.py").write_text(SCORERS, encoding="utf-8")
    (folder / "gate.yaml").write_text(policy, encoding="utf-8")
    base = agenteval(folder, "run", ".")
    assert base.returncode == 0, base.stdout + base.stderr
    candidate = agenteval(folder, "run", ".", TYPOS=TYPOS, RUDE=RUDE)
    assert candidate.returncode == 0, candidate.stdout + candidate.stderr
    gate = agenteval(folder, "gate", run_id(base), run_id(candidate), "--policy", "gate.yaml")
    return gate.returncode, gate.stdout + gate.stderr


def test_trials_failing_different_scorers_are_a_regression_of_the_trial(tmp_path: Path) -> None:
    code, said = _runs(tmp_path)
    assert code == 1, said  # 0 before: no scorer regressed significantly
    assert "✓ no significant regression: no_typo  pass rate 100.0% → 75.0%" in said
    assert "✓ no significant regression: polite  pass rate 100.0% → 75.0%" in said
    line = next(line for line in said.splitlines() if '"trial passes"' in line)
    assert line.startswith('✗ no significant regression: "trial passes"  pass rate 100.0% → 50.0%')
    assert "over 20 cases — a significant regression" in line
    assert "gate failed: 1 of" in said


def test_the_trial_regression_can_be_ignored_by_its_name(tmp_path: Path) -> None:
    code, said = _runs(tmp_path, "ignore_regressions: [trial]\n")
    assert code == 0, said
    # Ignored, yet shown with its figures: before, the row was left out, so a reader never saw
    # that the trials passing had fallen by half.
    line = next(line for line in said.splitlines() if '"trial passes"' in line)
    assert line.startswith(
        '- no significant regression: "trial passes" (ignored)  pass rate 100.0% → 50.0%'
    ), line
    assert "a significant regression (below 0.05)" in line
    assert "ignored under ignore_regressions: it does not block" in " ".join(said.split())
    assert "gate passed: all 5 rules held (1 ignored)" in said


def test_the_trial_passes_by_the_policy_s_scorers(tmp_path: Path) -> None:
    # "The trial passes" is what the policy says it is: by no_typo alone, 5 of 20 fell.
    code, said = _runs(tmp_path, "trial_passes: [no_typo]\n")
    assert code == 0, said
    assert '✓ no significant regression: "trial passes"  pass rate 100.0% → 75.0%' in said


def test_an_unknown_name_under_ignore_regressions_is_refused(tmp_path: Path) -> None:
    # Before: accepted silently, so the scorer meant was still gated (or, the other way, a
    # scorer renamed later was never ignored) with no word of the typo.
    code, said = _runs(tmp_path, "alpha: 0.05\nignore_regressions:\n  - polite\n  - no_tpyo\n")
    assert code == 2, said
    assert said.count("error:") == 1, said
    assert "gate.yaml:4, field 'ignore_regressions[1]': " in said
    assert "'no_tpyo' is in neither run" in said
    assert "did you mean 'no_typo'?" in said
    assert "known: no_typo, polite, trial" in said
    assert "Traceback" not in said
