"""Which objects are framework agents (by type, lazily), and the error when a user's agent file
imports a framework that is not installed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, cli_env

from agenteval.agents.frameworks import FRAMEWORKS, framework_of
from agenteval.errors import AgentLoadError
from agenteval.loading import framework_hint, load_object


def test_each_framework_names_an_extra_declared_in_pyproject() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    for framework in FRAMEWORKS:
        extra = framework.extra.removeprefix("agenteval[").removesuffix("]")
        assert f"\n{extra} = [" in pyproject, framework.name


def test_an_object_of_a_users_own_agents_module_is_no_framework_agent() -> None:
    # `agents` is also the OpenAI Agents SDK's module name: a class of the user's own
    # `agents` package must not be taken for the SDK's `AgentBase`.
    mine = type("Agent", (), {"__module__": "agents.mine", "__call__": lambda self, p: p})
    assert framework_of(mine()) is None
    assert framework_of(lambda prompt: prompt) is None
    assert framework_of("not an agent") is None


def test_classes_are_not_agents_only_their_instances() -> None:
    from google.adk.agents import LlmAgent

    assert framework_of(LlmAgent) is None
    framework = framework_of(LlmAgent(name="helper", model="gemini-2.0-flash"))
    assert framework is not None
    assert framework.name == "adk"
    assert framework.extra == "agenteval[adk]"


@pytest.mark.parametrize(
    ("missing", "extra"),
    [
        ("google.adk", "agenteval[adk]"),
        ("google.adk.agents", "agenteval[adk]"),
        ("agents", "agenteval[openai-agents]"),
        ("langgraph", "agenteval[langgraph]"),
        ("langchain_core.messages", "agenteval[langgraph]"),
        ("pydantic_ai", "agenteval[pydantic-ai]"),
    ],
)
def test_a_missing_framework_module_names_its_extra(missing: str, extra: str) -> None:
    hint = framework_hint(missing)
    assert hint is not None
    assert f"pip install '{extra}'" in hint


def test_other_missing_modules_name_no_framework() -> None:
    assert framework_hint("numpy") is None
    assert framework_hint("agentsmith") is None
    assert framework_hint(None) is None


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("langgraph.prebuilt", "agenteval[langgraph]"),
        ("pydantic_ai", "agenteval[pydantic-ai]"),
        ("agents", "agenteval[openai-agents]"),
        ("google.adk.agents", "agenteval[adk]"),
    ],
)
def test_an_agent_file_importing_a_framework_not_installed_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, extra: str
) -> None:
    # A None in sys.modules makes the import fail as if the package were not installed.
    monkeypatch.setitem(sys.modules, module, None)
    agent_file = tmp_path / "my_agent.py"
    agent_file.write_text(f"import {module}\n\nroot_agent = None\n")
    with pytest.raises(AgentLoadError) as caught:
        load_object(f"{agent_file}:root_agent")
    assert f"pip install '{extra}'" in (caught.value.hint or "")
    assert caught.value.line == 1


@pytest.mark.parametrize(
    ("module", "extra"),
    [("langgraph.prebuilt", "agenteval[langgraph]"), ("google.adk.agents", "agenteval[adk]")],
)
def test_agenteval_run_with_a_framework_not_installed_says_which_extra_in_one_message(
    tmp_path: Path, module: str, extra: str
) -> None:
    # The child process cannot import the framework (as on a machine without it): a
    # sitecustomize blocks the import before agenteval starts.
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text(
        f"import sys\nsys.modules[{module.split('.')[0]!r}] = None\n"
        if not module.startswith("google")
        else f"import sys\nsys.modules[{module!r}] = None\nsys.modules['google.adk'] = None\n"
    )
    (tmp_path / "agent.py").write_text(f"import {module}\n\nroot_agent = None\n")
    (tmp_path / "cases.yaml").write_text("- id: one\n  input: hello\n")
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(blocked), env["PYTHONPATH"]) if p)
    done = agenteval_cli(tmp_path, "run", "cases.yaml", "--agent", "agent.py:root_agent", env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"pip install '{extra}'" in done.stderr
    assert "agent.py" in done.stderr
    assert "Traceback" not in done.stderr
