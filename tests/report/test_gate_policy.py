"""The gate policy file: what it accepts, and one located message per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.errors import ConfigError
from agenteval.report.gate import GatePolicy, Thresholds, load_policy

EXAMPLE = """\
alpha: 0.05
correction: holm
ignore_regressions: [step_efficiency]
trial_passes: [exact_match, tool_selection]
max_cost_per_case_usd: 0.02
max_p95_latency_s: 8.0
trial:
  min_pass_hat_k: {3: 0.6}
scorers:
  exact_match:
    min_pass_rate: 0.8
    min_pass_hat_k: {3: 0.5}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text(text)
    return path


def test_the_documented_example_loads(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, EXAMPLE))
    assert policy == GatePolicy(
        alpha=0.05,
        correction="holm",
        ignore_regressions=["step_efficiency"],
        trial_passes=["exact_match", "tool_selection"],
        max_cost_per_case_usd=0.02,
        max_p95_latency_s=8.0,
        trial=Thresholds(min_pass_hat_k={3: 0.6}),
        scorers={"exact_match": Thresholds(min_pass_rate=0.8, min_pass_hat_k={3: 0.5})},
    )


def test_an_empty_file_is_the_default_policy(tmp_path: Path) -> None:
    assert load_policy(write(tmp_path, "")) == GatePolicy()


@pytest.mark.parametrize(
    ("text", "line", "field", "says"),
    [
        ("alpha: 2\n", 1, "alpha", "less than 1"),
        (
            "scorers:\n  exact_match:\n    min_pass_rat: 0.8\n",
            3,
            "scorers.exact_match.min_pass_rat",
            "did you mean 'min_pass_rate'?",
        ),
        ("max_p95_latency: 3\n", 1, "max_p95_latency", "did you mean 'max_p95_latency_s'?"),
        (
            "scorers:\n  x:\n    min_pass_hat_k: {0: 0.5}\n",
            3,
            "scorers.x.min_pass_hat_k",
            "k must be 1 or more",
        ),
        (
            "scorers:\n  x:\n    min_pass_hat_k: {2: 1.5}\n",
            3,
            "scorers.x.min_pass_hat_k",
            "pass^2 is a share from 0 to 1",
        ),
        (
            "scorers:\n  x:\n    min_pass_rate: 80\n",
            3,
            "scorers.x.min_pass_rate",
            "less than or equal to 1",
        ),
        ("correction: bonferroni\n", 1, "correction", "'holm' or 'none'"),
        ("trial:\n  min_pass: 0.5\n", 2, "trial.min_pass", "did you mean 'min_pass_rate'?"),
    ],
)
def test_mistakes_name_the_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, says: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    error = caught.value
    assert error.file == str(path)
    assert error.line == line
    assert error.field == field
    assert says in error.render()


def test_not_a_mapping_bad_yaml_and_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="a mapping of settings"):
        load_policy(write(tmp_path, "- 1\n"))
    with pytest.raises(ConfigError, match="invalid YAML") as caught:
        load_policy(write(tmp_path, "alpha: [\n"))
    assert caught.value.line == 2
    with pytest.raises(ConfigError, match="no such policy file"):
        load_policy(tmp_path / "missing.yaml")
