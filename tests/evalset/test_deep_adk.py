"""An ADK eval set file is a case file: a case nested past 64 levels is one clear error naming
the file, the line, the case and the field, as for every other case file, never stored cut.

Stored cut, an expected `final_session_state` 500 deep would compare equal to any actual state
that agrees on the first 64 levels when the run is rescored from the store: a false pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval.errors import DatasetError
from agenteval.jsonsafe import MAX_DEPTH


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"k": value}
    return value


def eval_set(**case_fields: Any) -> dict[str, Any]:
    case = {
        "eval_id": "book",
        "conversation": [
            {
                "invocation_id": "i-1",
                "user_content": {"role": "user", "parts": [{"text": "Book it"}]},
                "final_response": {"role": "model", "parts": [{"text": "Booked."}]},
            }
        ],
        **case_fields,
    }
    return {"eval_set_id": "travel", "eval_cases": [case]}


PLACES = {
    "final_session_state": lambda depth: {"final_session_state": {"s": nested(depth)}},
    "session state": lambda depth: {
        "session_input": {"app_name": "a", "user_id": "u", "state": {"s": nested(depth)}}
    },
    "metadata": lambda depth: {"metadata": {"m": nested(depth)}},
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_case_nested_past_the_limit_is_refused_with_file_line_case_and_field(
    tmp_path: Path, place: str
) -> None:
    path = tmp_path / "deep.evalset.json"
    path.write_text(json.dumps(eval_set(**PLACES[place](500)), indent=1))
    with pytest.raises(DatasetError) as raised:
        agenteval.load_cases(path)
    error = raised.value
    assert error.file == str(path) and error.case == "book"
    assert error.line is not None and error.line > 1
    assert f"more than {MAX_DEPTH} levels" in error.message
    assert error.field is not None and error.field.startswith("metadata.")


def test_a_case_within_the_limit_loads_whole(tmp_path: Path) -> None:
    path = tmp_path / "ok.evalset.json"
    # The case (1) > metadata (2) > final_session_state (3) > "s" (4): 60 more levels fit.
    path.write_text(json.dumps(eval_set(final_session_state={"s": nested(60)})))
    (case,) = agenteval.load_cases(path)
    assert case.metadata["final_session_state"] == {"s": nested(60)}


def test_agenteval_run_on_a_deep_adk_file_exits_2_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "deep.evalset.json").write_text(
        json.dumps(eval_set(final_session_state={"s": nested(500)}))
    )
    (tmp_path / "agent.py").write_text("def run(question):\n    return 'Booked.'\n")
    done = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "deep.evalset.json", "--agent", "agent.py:run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "deep.evalset.json" in done.stderr and "final_session_state" in done.stderr
