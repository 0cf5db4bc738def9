"""An agent service in another process, which imports nothing of agenteval and exports its spans
with the OpenTelemetry SDK's own OTLP/HTTP exporter (`remote_agent.py`): with the run's OTLP
receiver on, each trial gets exactly the tool calls its own request made, however many trials
run at once."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, cli_env
from tests.otel.remote_agent import TOOLS

import agenteval
from agenteval import EvalCase
from agenteval.agents.http import http_agent

REMOTE_AGENT = Path(__file__).with_name("remote_agent.py")
CASES = [
    EvalCase(id=city.lower(), input=city, expected_output=f"sunny in {city}", expected_tools=tools)
    for city, tools in TOOLS.items()
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class Service:
    def __init__(self, mode: str) -> None:
        self.otlp_port = _free_port()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{self.otlp_port}",
            # Export soon after the answer (the default is every 5 s).
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_BLRP_SCHEDULE_DELAY": "100",
        }
        self.process = subprocess.Popen(
            [sys.executable, str(REMOTE_AGENT), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("PORT "), line
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/"

    def close(self) -> None:
        # Killed, not shut down: its exporters would retry against a receiver gone with the run.
        self.process.kill()
        self.process.wait(timeout=60)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def service(request: pytest.FixtureRequest) -> Iterator[Service]:
    running = Service(getattr(request, "param", "export"))
    yield running
    running.close()


def _tools(trial: agenteval.Trial) -> list[tuple[str, object]]:
    return [(call.name, call.arguments) for call in trial.tool_calls]


def test_each_trial_gets_its_own_services_spans_under_concurrency(
    service: Service, tmp_path: Path, no_provider: None
) -> None:
    warnings: list[str] = []
    run = agenteval.evaluate(
        http_agent({"url": service.url}),
        CASES,
        trials=2,
        concurrency=12,
        store=tmp_path / "runs.db",
        otlp_receiver=service.otlp_port,
        on_warning=warnings.append,
    )
    assert len(run.results) == 12
    traces = set()
    for result in run.results:
        trial = result.trial
        city = str(result.case.input)
        assert trial.failure is None and trial.output == f"sunny in {city}"
        assert _tools(trial) == [(name, {"city": city}) for name in TOOLS[city]]
        assert trial.not_recorded == {}
        assert trial.trace_id is not None and trial.span_id is not None
        traces.add(trial.trace_id)
        assert result.scores["tool_selection"].passed is True
    assert len(traces) == 12  # each trial its own trace
    assert warnings == []


@pytest.mark.parametrize("service", ["silent"], indirect=True)
def test_a_service_whose_spans_never_come_holds_its_trial_only_for_the_wait(
    service: Service, tmp_path: Path, no_provider: None
) -> None:
    warnings: list[str] = []
    run = agenteval.evaluate(
        http_agent({"url": service.url}),
        CASES[:3],
        concurrency=3,
        store=tmp_path / "runs.db",
        otlp_receiver=service.otlp_port,
        otlp_wait=0.2,
        on_warning=warnings.append,
    )
    for result in run.results:
        trial = result.trial
        assert trial.tool_calls == []
        assert "spans may be missing" in trial.not_recorded["tool_calls"]
        # The wait is not the agent's time.
        assert trial.latency_s is not None and trial.latency_s < 0.2 + 5
    (warning,) = warnings
    assert warning.startswith("3 trial attempts stopped waiting for their agent service's spans")
    assert f"http://127.0.0.1:{service.otlp_port}" in warning


def test_agenteval_run_with_the_receiver_from_the_command_line(
    service: Service, tmp_path: Path
) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "".join(
            f"- id: {case.id}\n  input: {case.input}\n  expected_tools: {case.expected_tools}\n"
            for case in CASES
        )
    )
    (tmp_path / "agenteval.yaml").write_text(
        f"dataset: cases.yaml\nagent:\n  url: {service.url}\nconcurrency: 6\n"
        f"otlp_receiver: {service.otlp_port}\n"
    )
    done = agenteval_cli(tmp_path, "run", ".", "--json", "run.json")
    assert done.returncode == 0, done.stderr
    assert f"receiving OpenTelemetry spans at http://127.0.0.1:{service.otlp_port}" in done.stderr
    trials = {r["case_id"]: r for r in json.loads((tmp_path / "run.json").read_text())["results"]}
    for city, tools in TOOLS.items():
        calls = trials[city.lower()]["tool_calls"]
        assert [(c["name"], c["arguments"]) for c in calls] == [(t, {"city": city}) for t in tools]


def test_a_port_in_use_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text("- id: a\n  input: x\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = agenteval_cli(
            tmp_path,
            "run",
            "cases.yaml",
            "--agent",
            "http://127.0.0.1:9/",
            "--otlp-receiver",
            str(port),
            env=cli_env(),
        )
    assert done.returncode == 2, done.stderr
    assert f"127.0.0.1:{port}: the port is in use" in done.stderr
    assert "0 takes any free one" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".agenteval" / "runs.db").exists()
