"""`evaluate(user_simulator=...)` given something that is neither a
`provider:model`, a config nor a user object is one clear `ConfigError` naming the field and
what it takes, before anything is stored (not a `TypeError` about dataclasses, nor a
`KeyError`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agenteval import EvalCase, evaluate
from agenteval.errors import ConfigError


class NoReply:
    label = "no reply method"


@pytest.mark.parametrize(
    "value", [123, True, ["openai:gpt-4o-mini"], NoReply(), {"model": "openai:gpt-4o-mini"}]
)
def test_a_user_simulator_that_is_no_setting_is_one_config_error(
    tmp_path: Path, value: Any
) -> None:
    case = EvalCase(id="c", expected_output="x", user_simulation={"goal": "g", "max_turns": 3})
    store = tmp_path / "runs.db"
    with pytest.raises(ConfigError) as raised:
        evaluate(lambda messages: "x", [case], store=store, user_simulator=value)
    assert raised.value.field == "user_simulator"
    assert "provider:model" in str(raised.value) or "PROVIDER:MODEL" in str(raised.value)
    if store.exists():
        with sqlite3.connect(store) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
