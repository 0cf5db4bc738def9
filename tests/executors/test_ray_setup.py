"""Getting the `ray` executor: Ray is never imported until a run names it, a missing Ray says
how to install it, and with no cluster named a local Ray instance is started for the run and
stopped after it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import pytest
from tests.executors.ray_cluster import LOOPBACK

import agenteval
from agenteval import EvalCase
from agenteval.agents.environment import EnvironmentPlan
from agenteval.engine.executors.cluster import _shipped
from agenteval.engine.executors.remote import TrialRecipe
from agenteval.errors import ConfigError
from agenteval.user_simulation import UserSimulation


def answer(question: str) -> str:
    return question[::-1]


def _locked(lock: threading.Lock, question: str) -> str:
    with lock:
        return question


async def _no_replay(case_id: str, trial: int) -> None:
    return None


@agenteval.tool
def ray_setup_weather(city: str) -> dict[str, int]:
    """Never runs in these tests: mocked."""
    raise AssertionError("the mock should answer")


def asks_the_weather(city: str) -> str:
    return str(ray_setup_weather(city)["celsius"])


def test_ray_is_imported_only_when_a_run_names_it() -> None:
    code = (
        "import sys, agenteval, agenteval.engine.executors.cluster\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_without_ray_the_run_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ConfigError) as raised:
        agenteval.evaluate(
            answer, [EvalCase(id="c", input="ab")], store=tmp_path / "r.db", executor="ray"
        )
    assert "pip install 'agenteval[ray]'" in str(raised.value.hint)


def test_a_cluster_address_where_nothing_listens_is_refused_at_once(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(ConfigError, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        agenteval.evaluate(
            answer,
            [EvalCase(id="c", input="ab")],
            store=tmp_path / "r.db",
            executor="ray",
            ray_address=f"127.0.0.1:{port}",
        )


@pytest.mark.parametrize(
    ("recipe", "refused"),
    [
        (TrialRecipe(answer, environment=EnvironmentPlan(replay=_no_replay)), "replaying"),
        (TrialRecipe(partial(_locked, threading.Lock())), "cannot be sent to Ray workers"),
    ],
    ids=["replay", "unpicklable"],
)
def test_what_cannot_run_in_ray_workers_is_refused_before_ray_starts(
    recipe: TrialRecipe, refused: str
) -> None:
    with pytest.raises(ConfigError, match=refused):
        _shipped(recipe)


def test_with_no_cluster_named_a_local_ray_runs_the_trials_and_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cases = [EvalCase(id=f"c{i}", input=f"q{i}") for i in range(4)]
    run = agenteval.evaluate(
        answer, cases, store=tmp_path / "r.db", executor="ray", workers=1, concurrency=2
    )
    assert sorted((r.case.id, r.trial.output) for r in run.results) == [
        (f"c{i}", f"{i}q") for i in range(4)
    ]
    assert not ray.is_initialized()  # the instance the run started is stopped

    # A tool mock written as a lambda reaches the workers (by value).
    mocked = agenteval.evaluate(
        asks_the_weather,
        [EvalCase(id="w", input="Lisbon")],
        store=tmp_path / "w.db",
        executor="ray",
        workers=1,
        tool_mocks={"ray_setup_weather": {"result": lambda city: {"celsius": len(city)}}},
    )
    (result,) = mocked.results
    assert result.trial.failure is None, result.trial.failure
    assert result.trial.output == "6"
    assert not ray.is_initialized()


def test_a_model_user_simulator_stops_a_ray_run_only_at_a_case_it_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A project naming its simulator (`user_simulator:` in agenteval.yaml) runs its cases
    # without simulated users on Ray; the simulator is opened, never called (no network).
    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used")
    plain = [EvalCase(id=f"c{i}", input=f"q{i}") for i in range(2)]
    run = agenteval.evaluate(
        answer,
        plain,
        store=tmp_path / "r.db",
        executor="ray",
        workers=1,
        user_simulator="openai:gpt-4o-mini",
    )
    assert sorted((r.case.id, r.trial.output) for r in run.results) == [
        ("c0", "0q"),
        ("c1", "1q"),
    ]
    played = EvalCase(id="talk", input="hi", user_simulation=UserSimulation(goal="a refund"))
    with pytest.raises(ConfigError, match="case 'talk': it is played by the model user simulator"):
        agenteval.evaluate(
            answer,
            [played, *plain, played.model_copy(update={"id": "talk2"})],
            store=tmp_path / "s.db",
            executor="ray",
            workers=1,
            concurrency=4,
            user_simulator="openai:gpt-4o-mini",
        )


AGENT_WITH_A_CLIENT = """
import threading

import tools

_client_lock = threading.Lock()  # a module-level SDK client holds one: it does not pickle


def answer(question: str) -> str:
    with _client_lock:
        return tools.shout(question)
"""


SCORERS = """
import os

with open({log!r}, "a") as log:
    log.write(f"{{os.getpid()}}\\n")


def shouted(case, trial):
    return trial.output == (case.input or "").upper()
"""


def test_an_agent_file_holding_a_client_runs_in_ray_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `client = OpenAI()` at the top of agent.py: each worker imports the file itself.
    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (tmp_path / "agent.py").write_text(AGENT_WITH_A_CLIENT)
    (tmp_path / "tools.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    # A scorer's file is the driver's: the workers never import it (it may need what only
    # the driver has).
    (tmp_path / "scorers.py").write_text(SCORERS.format(log=str(tmp_path / "imports.log")))
    run = agenteval.evaluate(
        "agent.py:answer",
        [EvalCase(id=f"c{i}", input=f"q{i}") for i in range(2)],
        scorers=["scorers.py:shouted"],
        agent_ref="agent.py:answer",  # as the CLI and agenteval.yaml give it
        base_dir=tmp_path,
        store=tmp_path / "r.db",
        executor="ray",
        workers=1,
    )
    assert sorted((r.case.id, r.trial.output) for r in run.results) == [
        ("c0", "Q0"),
        ("c1", "Q1"),
    ]
    assert all(r.scores["shouted"].passed for r in run.results)
    assert (tmp_path / "imports.log").read_text().split() == [str(os.getpid())]


def test_an_agent_file_given_to_evaluate_ships_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From Python, with no agent_ref or base_dir: the folder of the agent's own file ships, so
    # its sibling `import tools` works on the workers as the CLI's run does.
    for name, value in LOOPBACK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.py").write_text(AGENT_WITH_A_CLIENT)
    (project / "tools.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = agenteval.evaluate(
        f"{project / 'agent.py'}:answer",
        [EvalCase(id="c0", input="q0")],
        store=tmp_path / "r.db",
        executor="ray",
        workers=1,
    )
    ((result),) = run.results
    assert result.trial.failure is None, result.trial.failure
    assert result.trial.output == "Q0"
