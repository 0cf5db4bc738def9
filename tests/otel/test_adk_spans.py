"""Google ADK's own spans, from a real ADK run on a scripted model (`record_adk.py`, a process
of its own), read from their OTLP JSON file as `agenteval score` reads them, under ADK 2's
default telemetry schema:

- parallel calls each have a tool span, and one more, `(merged tools)`, which is no call;
- with no content capture, its tool spans name the tool and the call id but not the arguments:
  the trial says so (`not_recorded["tool_arguments"]`, with the setting that records them)
  instead of scoring `{}` as what the tool was called with;
- with content (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`), an agent with an
  `output_schema` and tools answers through `set_model_response`, whose response is the answer
  itself: the answer is that response (not "no answer"), and the call keeps no result, so
  `tool_faithfulness` does not find the answer in itself.

ADK's older schema (`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`) writes `{}` for a tool's arguments
and response when it records no content (`ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false`): those
are unknown too, never "called with no arguments", "returned nothing" or an answer `{}`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agenteval import EvalCase
from agenteval.otel.reading import read_recorded
from agenteval.scorers.grounding import ToolFaithfulness
from agenteval.scorers.recorded import declared_reads, unrecorded
from agenteval.scorers.tools.habits import RedundantCalls
from agenteval.trace import Trial

RECORDER = Path(__file__).with_name("record_adk.py")
ROOT = Path(__file__).parents[2]
CASE = EvalCase(id="paris", input="weather Paris")
PARIS = ("station_weather", {"city": "Paris"}, {"city": "Paris", "celsius": 21, "days": 1})
OSLO = ("station_weather", {"city": "Oslo"}, {"city": "Oslo", "celsius": 14, "days": 1})


def recorded(folder: Path, celsius: int, *content: str) -> Trial:
    out = folder / f"adk-{celsius}-{'-'.join(content)}.jsonl"
    paths = [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    ran = subprocess.run(
        [sys.executable, str(RECORDER), str(out), str(celsius), *content],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.pathsep.join(paths)},
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    [trial] = read_recorded(out)
    assert trial.key == "paris"
    return trial.trial


def test_adks_spans_without_content_leave_the_arguments_unknown(tmp_path: Path) -> None:
    bare = recorded(tmp_path, 21)
    # ADK's `(merged tools)` span beside parallel calls' own spans is no call.
    assert [c.name for c in bare.tool_calls] == [
        "station_weather",
        "station_weather",
        "set_model_response",
    ]
    why = bare.not_recorded.get("tool_arguments", "")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in why
    # Not "the same call twice": what each was called with is unknown.
    skipped = unrecorded("redundant_calls", declared_reads(RedundantCalls()), bare)
    assert skipped is not None and skipped.passed is None


@pytest.mark.parametrize("celsius", [21, 12])
def test_adks_structured_answer_is_the_answer_and_no_tool_result(
    tmp_path: Path, celsius: int
) -> None:
    trial = recorded(tmp_path, celsius, "content")
    assert trial.not_recorded == {}
    assert trial.failure is None
    assert json.loads(trial.output or "") == {"city": "Paris", "celsius": celsius}
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        PARIS,
        OSLO,
        ("set_model_response", {"city": "Paris", "celsius": celsius}, None),
    ]
    # 21 came from the weather station; 12 from nowhere.
    assert ToolFaithfulness()(CASE, trial).passed is (celsius == 21)


def test_adks_older_schema_without_content_leaves_the_arguments_unknown(tmp_path: Path) -> None:
    # Before: every call was read as called with `{}` and returning `{}`, and the answer was
    # `{}` (set_model_response's placeholder response), with nothing marked unknown.
    bare = recorded(tmp_path, 21, "legacy")
    assert [(c.name, c.result) for c in bare.tool_calls] == [
        ("station_weather", None),
        ("station_weather", None),
        ("set_model_response", None),
    ]
    why = bare.not_recorded.get("tool_arguments", "")
    assert "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true" in why
    assert bare.output is None and "output" in bare.not_recorded
    skipped = unrecorded("redundant_calls", declared_reads(RedundantCalls()), bare)
    assert skipped is not None and skipped.passed is None


def test_adks_older_schema_with_content_reads_as_adk_2s(tmp_path: Path) -> None:
    trial = recorded(tmp_path, 12, "content", "legacy")
    assert trial.not_recorded == {}
    assert json.loads(trial.output or "") == {"city": "Paris", "celsius": 12}
    assert [(c.name, c.arguments, c.result) for c in trial.tool_calls] == [
        PARIS,
        OSLO,
        ("set_model_response", {"city": "Paris", "celsius": 12}, None),
    ]
