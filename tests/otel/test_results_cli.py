"""`--otlp-endpoint` on `agenteval run`, `score` and `rescore`, as a user runs them (in
subprocesses), against a loopback OTLP receiver: every score arrives once, parented to its
trial's span; the option's mistakes are one clear message; a run that does not send imports
nothing of it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, cli_env

from agenteval import RunStore

from .otlp_sink import Sink, otlp_sink

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otel"

SECRET = "sk-proj-Z9y8X7w6V5u4T3s2R1q0P9o8N7"


@pytest.fixture
def sink() -> Iterator[Sink]:
    with otlp_sink() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small offline project: a Python agent, two cases, a scorer whose reason holds a key."""
    (tmp_path / "agent.py").write_text("def answer(text):\n    return text.upper()\n")
    (tmp_path / "scorers.py").write_text(
        textwrap.dedent(
            f"""
            def keyed(case, trial):
                return 1.0, "checked with {SECRET}"
            """
        )
    )
    (tmp_path / "cases.yaml").write_text(
        "- {id: c1, input: q1, expected_output: Q1}\n- {id: c2, input: q2, expected_output: no}\n"
    )
    (tmp_path / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\nscorers: [scorers.py:keyed]\n"
    )
    return tmp_path


def _events(sink: Sink) -> dict[tuple[str, int, str], dict[str, object]]:
    keyed: dict[tuple[str, int, str], dict[str, object]] = {}
    for event in sink.evaluations():
        a = event.attributes
        key = (
            str(a["agenteval.case.id"]),
            int(a["agenteval.trial.index"]),
            str(a["gen_ai.evaluation.name"]),
        )
        assert key not in keyed, f"sent twice: {key}"
        keyed[key] = {**a, "trace_id": event.trace_id, "span_id": event.span_id}
    return keyed


def _stored(store: Path) -> dict[tuple[str, int, str], tuple[float | None, bool | None]]:
    with RunStore(store) as runs:
        run_id = runs.resolve_run_id("latest")
        return {
            (r.case.id, r.trial.trial, name): (s.value, s.passed)
            for r in runs.iter_results(run_id)
            for name, s in r.scores.items()
            if s.value is not None or s.error
        }


def test_run_sends_every_score_once_and_secrets_never(project: Path, sink: Sink) -> None:
    done = agenteval_cli(project, "run", ".", "--trials", "2", "--otlp-endpoint", sink.url)
    assert done.returncode == 0, done.stderr
    events = _events(sink)
    stored = _stored(project / ".agenteval" / "runs.db")
    assert set(events) == set(stored)
    for key, (value, passed) in stored.items():
        assert events[key]["gen_ai.evaluation.score.value"] == value
        assert events[key]["gen_ai.evaluation.score.label"] == ("pass" if passed else "fail")
    assert events[("c1", 0, "keyed")]["gen_ai.evaluation.explanation"] == (
        "checked with sk-proj-[REDACTED]"
    )
    assert SECRET.encode() not in b"".join(sink.bodies)
    # One span of agenteval's per trial (no OpenTelemetry in the agent), the events under it.
    spans = {(s.trace_id, s.span_id): s for s in sink.spans}
    assert len(spans) == 4
    assert {(str(e["trace_id"]), str(e["span_id"])) for e in events.values()} == set(spans)


def test_the_endpoint_comes_from_the_environment_or_the_config(project: Path, sink: Sink) -> None:
    done = agenteval_cli(project, "run", ".", env=cli_env(AGENTEVAL_OTLP_ENDPOINT=sink.url))
    assert done.returncode == 0, done.stderr
    from_env = len(sink.evaluations())
    assert from_env == len(_stored(project / ".agenteval" / "runs.db")) > 0
    config = project / "agenteval.yaml"
    config.write_text(config.read_text() + f"otlp_endpoint: {sink.url}\n")
    done = agenteval_cli(project, "run", ".")
    assert done.returncode == 0, done.stderr
    assert len(sink.evaluations()) == 2 * from_env


def test_the_standard_otel_variable_sends_nothing(project: Path, sink: Sink) -> None:
    env = cli_env(OTEL_EXPORTER_OTLP_ENDPOINT=sink.url)
    done = agenteval_cli(project, "run", ".", env=env)
    assert done.returncode == 0, done.stderr
    assert sink.bodies == []


def test_rescore_sends_the_new_scores(project: Path, sink: Sink) -> None:
    # The built-ins only: a rescore gives each of them again.
    (project / "agenteval.yaml").write_text("dataset: cases.yaml\nagent: agent.py:answer\n")
    assert agenteval_cli(project, "run", ".").returncode == 0
    assert sink.bodies == []
    done = agenteval_cli(project, "rescore", "latest", "--otlp-endpoint", sink.url)
    assert done.returncode == 0, done.stderr
    assert set(_events(sink)) == set(_stored(project / ".agenteval" / "runs.db"))


def _roots(traces: Path) -> dict[str, tuple[str, str]]:
    """Each recorded trace's case, with its trace id and root span id, read from the file."""
    roots: dict[str, tuple[str, str]] = {}
    for line in traces.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    if span.get("parentSpanId"):
                        continue
                    case = next(
                        a["value"]["stringValue"]
                        for a in span["attributes"]
                        if a["key"] == "agenteval.case.id"
                    )
                    roots[case] = (span["traceId"], span["spanId"])
    return roots


def test_score_parents_each_score_to_its_recorded_traces_root_span(
    tmp_path: Path, sink: Sink
) -> None:
    traces = EXAMPLE / "traces.jsonl"
    done = agenteval_cli(
        tmp_path,
        "score",
        str(traces),
        "--cases",
        str(EXAMPLE / "cases.yaml"),
        "--store",
        str(tmp_path / "runs.db"),
        "--otlp-endpoint",
        sink.url,
    )
    assert done.returncode == 0, done.stderr
    events = _events(sink)
    assert set(events) == set(_stored(tmp_path / "runs.db"))
    roots = _roots(traces)
    assert {case for case, _, _ in events} == set(roots)
    for (case, _, _), event in events.items():
        assert (event["trace_id"], event["span_id"]) == roots[case]
    # The recorded root spans are the user's: agenteval sends no span of its own.
    assert sink.spans == []


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_endpoint_that_is_down_leaves_the_run_and_its_exit_code_alone(project: Path) -> None:
    (project / "cases.yaml").write_text(
        "- {id: c1, input: q1, expected_output: Q1}\n- {id: c2, input: q2, expected_output: no}\n"
    )
    plain = agenteval_cli(project, "run", ".", "--json", "plain.json")
    down = agenteval_cli(
        project,
        "run",
        ".",
        "--json",
        "down.json",
        "--otlp-endpoint",
        f"http://127.0.0.1:{_closed_port()}",
    )
    assert down.returncode == plain.returncode, down.stderr
    warnings = [line for line in down.stderr.splitlines() if "OTLP endpoint" in line]
    assert len(warnings) == 1, down.stderr
    assert "connection refused" in warnings[0]
    assert "Traceback" not in down.stderr and "Failed to export" not in down.stderr

    def verdicts(name: str) -> object:
        results = json.loads((project / name).read_text())["results"]
        return {
            (r["case_id"], r["trial"]): {n: s["passed"] for n, s in r["scores"].items()}
            for r in results
        }

    assert verdicts("down.json") == verdicts("plain.json")


@pytest.mark.parametrize("command", ["run", "score", "rescore"])
def test_a_bad_url_on_the_command_line_is_one_message_naming_the_flag(
    project: Path, command: str
) -> None:
    args = {
        "run": ["run", "."],
        "score": ["score", str(EXAMPLE / "traces.jsonl"), "--cases", str(EXAMPLE / "cases.yaml")],
        "rescore": ["rescore", "latest"],
    }[command]
    done = agenteval_cli(project, *args, "--otlp-endpoint", "localhost:4318")
    assert done.returncode == 2, done.stderr
    assert "--otlp-endpoint" in done.stderr and "not an http:// or https:// URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_url_in_the_config_names_its_line(project: Path) -> None:
    config = project / "agenteval.yaml"
    config.write_text(config.read_text() + "otlp_endpoint: collector:4318\n")
    done = agenteval_cli(project, "run", ".")
    assert done.returncode == 2, done.stderr
    assert "agenteval.yaml:4" in done.stderr and "otlp_endpoint" in done.stderr


def test_a_bad_url_in_the_environment_names_the_variable(project: Path) -> None:
    done = agenteval_cli(project, "run", ".", env=cli_env(AGENTEVAL_OTLP_ENDPOINT="nope"))
    assert done.returncode == 2, done.stderr
    assert "AGENTEVAL_OTLP_ENDPOINT" in done.stderr


_WITHOUT_EXPORTER = """
import sys
# The OTLP exporter is not installed (the `opentelemetry` extra left out): importing it fails.
sys.modules["opentelemetry.exporter.otlp.proto.http"] = None
from agenteval.cli import main
sys.argv = ["agenteval", *sys.argv[1:]]
main()
"""


def test_without_the_extra_one_message_names_the_install(project: Path, sink: Sink) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXPORTER, "run", ".", "--otlp-endpoint", sink.url],
        cwd=project,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'agenteval[opentelemetry]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert sink.bodies == []
    assert not (project / ".agenteval" / "runs.db").exists()  # refused before anything ran


_NOTHING_LOADED = """
import sys
import agenteval
run = agenteval.evaluate(lambda q: q.upper(), [agenteval.EvalCase(id="c", input="q")],
                         store=sys.argv[1])
loaded = sorted(m for m in sys.modules
                if m == "agenteval.otel.results" or m.startswith("opentelemetry.exporter"))
print(loaded)
"""


def test_a_run_that_sends_nothing_loads_nothing_of_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NOTHING_LOADED, str(tmp_path / "runs.db")],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


SLOW_AGENT = """
import time

def answer(text):
    time.sleep(0.05)
    return text.upper()
"""


def test_ctrl_c_still_sends_the_scores_of_every_stored_trial(project: Path, sink: Sink) -> None:
    import signal
    import time

    from tests.cli_process import interruptible

    (project / "agent.py").write_text(SLOW_AGENT)
    (project / "cases.yaml").write_text(
        "".join(f"- {{id: c{i:02d}, input: q{i}, expected_output: Q{i}}}\n" for i in range(60))
    )
    store = project / ".agenteval" / "runs.db"
    command = [sys.executable, "-m", "agenteval", "run", ".", "--concurrency", "1"]
    command.extend(["--otlp-endpoint", sink.url])
    process = interruptible(command, project, cli_env())
    try:
        deadline = time.monotonic() + 60  # a safety net against a hang, not a measure
        stored = 0
        while stored < 3:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
            if store.exists():
                with RunStore(store) as runs:
                    rows = runs.list_runs()
                    stored = rows[0].trials_done if rows else 0
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    kept = _stored(store)
    assert 3 <= len({(case, trial) for case, trial, _ in kept}) < 60
    sent = _events(sink)  # each once
    assert set(kept) <= set(sent)
