"""`@agenteval_cases(required=[...], thresholds={...})` naming a scorer the test does not have
(a typo, or `exact_match_2` copied from a run where a criterion was renamed, in a test whose
built-ins are off so the criterion is `exact_match`): `required` then counted no scorer, and
every case passed whatever the agent answered; a threshold was silently dropped. Each must
fail the test, naming the unknown scorer and the names it has."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.review.cli import HANG_GUARD_S, environment

AGENT = 'def answer(text):\n    return {"refund": "30 days", "warranty": "2 years"}[text]\n'
CASES = (
    "- {id: refund, input: refund, expected_output: 30 days}\n"
    "- {id: warranty, input: warranty, expected_output: 1 year}\n"
)
TEST = """
from agenteval.criteria import ExactMatchCriterion
from agenteval.pytest_plugin import agenteval_cases

@agenteval_cases("cases.yaml", agent="agent.py:answer", {options})
def test_support(agenteval_result):
    pass
"""


def _session(tmp_path: Path, options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(CASES)
    (tmp_path / "test_support.py").write_text(TEST.format(options=options))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


@pytest.mark.parametrize(
    ("options", "unknown"),
    [
        ('required=["exact_mach"]', "exact_mach"),
        ('thresholds={"exact_mach": 1.0}', "exact_mach"),
        (
            'scorers=[ExactMatchCriterion()], builtins=False, required=["exact_match_2"]',
            "exact_match_2",
        ),
    ],
)
def test_an_unknown_scorer_name_fails_every_case(
    tmp_path: Path, options: str, unknown: str
) -> None:
    done = _session(tmp_path, options)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "2 errors" in out or "2 failed" in out, out
    assert repr(unknown) in out, out
    assert "exact_match" in out.replace(repr(unknown), ""), out


def test_known_names_still_decide(tmp_path: Path) -> None:
    done = _session(tmp_path, 'scorers=[ExactMatchCriterion()], required=["exact_match_2"]')
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
