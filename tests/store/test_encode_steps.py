"""The store's encoder made cheaper, byte for byte: pydantic's serializer called without
`model_dump_json`'s wrapper (`jsonsafe.copies`), and a batch encoded a few results at a time
(`ResultRecords.encode_results(..., into=...)`, as the engine's writer does).

Each is compared with the way main did it, on the varied run of `tests/engine/stored_rows.py`
(answers, tool calls with secrets, model calls, failures, spans, scores with details) and on
records that need the careful copy (too deep, circular, a lone surrogate, an object pydantic
cannot write, NaN).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from tests.engine.stored_rows import stored_rows

from agenteval import EvalCase, Score
from agenteval.jsonsafe import model_json_text, safe_repr
from agenteval.jsonsafe.look import fits
from agenteval.records import TrialResult
from agenteval.store import RunStore
from agenteval.store.encoding import _HOW, to_json
from agenteval.store.results import EncodedResults
from agenteval.trace import Trial


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> list[TrialResult]:
    path = tmp_path_factory.mktemp("varied") / "s.db"
    stored_rows(path)
    store = RunStore(path)
    (run,) = store.list_runs()
    return list(store.iter_results(run.run_id))


class _Odd:
    def __repr__(self) -> str:
        return "<odd>"


def _hostile() -> list[Any]:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(80):
        node["d"] = {}
        node = node["d"]
    circular: list[Any] = []
    circular.append(circular)
    return [
        Trial(case_id="a", output="lone \ud800 surrogate"),
        Trial(case_id="b", output="x", metadata={"x": math.nan, "o": _Odd()}),
        Trial(case_id="c", output="x", metadata={"deep": deep}),
        Trial(case_id="d", output="x", metadata={"c": circular}),
        Trial(case_id="e", output="ok", metadata={"api_key": "k-1", "n": 1}),
        Score(name="s", value=0.5, details={"obj": _Odd(), "password": "pw", "é": "✓"}),
        EvalCase(id="c1", input="q", expected_output="Paris", metadata={"q": [1, {"r": None}]}),
    ]


def _main_json(model: Any) -> str:
    """`to_json` as main wrote it: `model_dump_json` after the look, else the careful copy."""
    hide, note_in = _HOW.get(type(model), (None, None))
    if fits(model, hide):
        try:
            text: str = model.model_dump_json(
                fallback=safe_repr, warnings=False, exclude_defaults=True
            )
            text.encode("utf-8")
        except Exception:
            pass
        else:
            if '"<cut:' not in text:
                return text
    return model_json_text(model, hide, note_in)  # the careful copy, unchanged


def test_every_record_is_written_as_model_dump_json_wrote_it(varied: list[TrialResult]) -> None:
    models: list[Any] = _hostile()
    for result in varied:
        models.extend([result.case, result.trial, *result.scores.values()])
    assert len(models) > 50
    for model in models:
        assert to_json(model) == _main_json(model), type(model).__name__


def test_a_batch_encoded_in_steps_is_the_batch_encoded_at_once(
    varied: list[TrialResult], tmp_path: Path
) -> None:
    store = RunStore(tmp_path / "s.db")
    batch = varied * 7  # more than a few steps, every kind of result in each
    whole = store.encode_results(batch)
    stepped = store.encode_results(batch[:5])
    assert stepped.written_at
    for start in range(5, len(batch), 11):
        assert store.encode_results(batch[start : start + 11], into=stepped) is stepped
    assert stepped.cases == whole.cases
    assert stepped.keys == whole.keys
    assert stepped.trials == whole.trials
    assert stepped.scores == whole.scores
    assert any("[REDACTED]" in data for *_, data in stepped.trials)
    assert isinstance(whole, EncodedResults)
