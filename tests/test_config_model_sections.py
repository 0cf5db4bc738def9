"""A mistake inside `judge:` or `user_simulator:` written in their mapping form is named as
written (`judge.concurency`, with the key meant), not as pydantic's `judge.str`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.config import find_target
from agenteval.errors import ConfigError


@pytest.mark.parametrize("section", ["judge", "user_simulator"])
def test_a_misspelt_key_in_a_model_section_names_the_key_meant(
    tmp_path: Path, section: str
) -> None:
    (tmp_path / "agenteval.yaml").write_text(
        f"dataset: cases.yaml\n{section}:\n  model: openai:gpt-4o-mini\n  concurency: 8\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        find_target(tmp_path)
    error = caught.value
    assert error.field == f"{section}.concurency"
    assert error.line == 4
    assert "str" not in (error.field or "")
    assert error.hint == "rename 'concurency' to 'concurrency'"


@pytest.mark.parametrize("section", ["judge", "user_simulator"])
def test_a_wrong_value_in_a_model_section_names_its_key(tmp_path: Path, section: str) -> None:
    (tmp_path / "agenteval.yaml").write_text(
        f"dataset: cases.yaml\n{section}:\n  model: openai:gpt-4o-mini\n  concurrency: eight\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        find_target(tmp_path)
    error = caught.value
    assert error.field == f"{section}.concurrency"
    assert error.line == 4
    assert "integer" in error.message
