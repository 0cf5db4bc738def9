"""ADK-side files that are not what they should be end in one clear error naming the file:
an eval config (`test_config.json`) nested past what Python reads or not UTF-8, and a `.json`
eval set nested past what Python reads (looked at to tell whether it is ADK's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.errors import AgentEvalError
from agenteval.evalset import EvalConfig, EvalSet

DEEP = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize(
    "content",
    [
        ('{"criteria": {"x": ' + DEEP + "}}").encode(),
        b'{"criteria": {"tool_trajectory_avg_score": 1.0}, "note": "caf\xe9"}',
    ],
    ids=["too-deep", "not-utf8"],
)
def test_an_unreadable_eval_config_is_one_error_naming_the_file(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "test_config.json"
    path.write_bytes(content)
    with pytest.raises(AgentEvalError) as raised:
        EvalConfig.load(path)
    assert raised.value.file == str(path)
    assert raised.value.hint


def test_a_json_eval_set_too_deep_to_read_is_one_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text('{"eval_cases": ' + DEEP + "}")
    with pytest.raises(AgentEvalError) as raised:
        EvalSet.load(path)
    assert str(path) in str(raised.value)
