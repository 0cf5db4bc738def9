"""The run setting from Python and agenteval.yaml: `evaluate(user_simulator="openai:...")`, a
config, the judge's mapping form in agenteval.yaml; a case no one can play, or a simulator that
cannot run here, is one `ConfigError` before anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import FakeOpenAI
from tests.simulation.model import numbered_agent, refund_case

from agenteval import ConfigError, EndReason, EvalCase, evaluate
from agenteval.config import ProjectConfig, resolve_settings
from agenteval.engine.options import RunOptions
from agenteval.simulation.simulator import UserSimulatorConfig


def stored_runs(store: Path) -> int:
    if not store.exists():
        return 0
    from agenteval import RunStore

    with RunStore(store) as runs:
        return len(runs.list_runs())


def test_a_spec_string_plays_the_cases(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    store = tmp_path / "runs.db"
    run = evaluate(
        numbered_agent, [refund_case()], store=store, user_simulator="openai:gpt-4o-mini"
    )
    simulation = run.results[0].trial.simulation
    assert simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert simulation.user == "openai:gpt-4o-mini"
    assert run.info.settings["user_simulator"]["spec"] == "openai:gpt-4o-mini"
    # Cached beside the store, in the judge's file.
    assert (tmp_path / "judge-cache.db").exists()


def test_a_case_no_one_can_play_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = [EvalCase(id="fine", input="hi"), refund_case("a"), refund_case("b")]
    with pytest.raises(ConfigError) as caught:
        evaluate(numbered_agent, cases, store=store)
    error = caught.value
    assert error.case == "a"
    assert error.field == "user_simulation"
    assert "(and 1 more)" in error.message
    assert "user_simulator" in (error.hint or "") and "script" in (error.hint or "")
    assert stored_runs(store) == 0


def test_a_simulator_with_no_api_key_is_refused_before_anything_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.judge.fakes import clear_provider_env

    clear_provider_env(monkeypatch)
    store = tmp_path / "runs.db"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as caught:
        evaluate(numbered_agent, [refund_case()], store=store, user_simulator="openai:gpt-4o-mini")
    assert caught.value.field == "user_simulator"
    assert stored_runs(store) == 0


def test_a_spec_that_is_not_provider_model_is_refused_when_the_options_are_made() -> None:
    with pytest.raises(ConfigError, match="'gpt-4o-mini' is not a user simulator") as caught:
        RunOptions(user_simulator="gpt-4o-mini")
    assert caught.value.field == "user_simulator"


def test_the_judges_mapping_form_in_agenteval_yaml(tmp_path: Path) -> None:
    config = ProjectConfig.model_validate(
        {
            "user_simulator": {
                "model": "anthropic:claude-haiku-4-5",
                "base_url": "http://127.0.0.1:9/v1",
                "params": {"temperature": 0.9},
                "timeout": 30,
                "concurrency": 2,
                "cache": False,
            }
        }
    )
    settings = resolve_settings(config, tmp_path, store=str(tmp_path / "runs.db"), env={})
    simulator = settings.user_simulator
    assert isinstance(simulator, UserSimulatorConfig)
    assert simulator.spec == "anthropic:claude-haiku-4-5"
    assert simulator.base_url == "http://127.0.0.1:9/v1"
    assert dict(simulator.params) == {"temperature": 0.9}
    assert (simulator.timeout_s, simulator.concurrency, simulator.use_cache) == (30, 2, False)
    assert simulator.cache_path == tmp_path / "judge-cache.db"


def test_the_flag_and_the_environment_name_the_model_and_no_cache_applies(tmp_path: Path) -> None:
    config = ProjectConfig.model_validate({"user_simulator": "openai:gpt-4o-mini"})
    flagged = resolve_settings(
        config, tmp_path, user_simulator="google:gemini-2.5-flash", use_cache=False, env={}
    )
    assert flagged.user_simulator is not None
    assert flagged.user_simulator.spec == "google:gemini-2.5-flash"
    assert flagged.user_simulator.use_cache is False
    from_env = resolve_settings(
        ProjectConfig(), tmp_path, env={"AGENTEVAL_USER_SIMULATOR": "openai:gpt-4.1-mini"}
    )
    assert from_env.user_simulator is not None
    assert from_env.user_simulator.spec == "openai:gpt-4.1-mini"
    assert resolve_settings(ProjectConfig(), tmp_path, env={}).user_simulator is None


def test_recorded_trials_play_no_user_and_open_no_simulator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A project whose agenteval.yaml names a simulator this machine cannot run still scores
    # recorded trials (`agenteval score`): no user is played, so none is opened.
    from tests.judge.fakes import clear_provider_env

    from agenteval import Trial

    clear_provider_env(monkeypatch)
    recorded = {("refund", 0): Trial(case_id="refund", output="Refund issued for order 8812.")}
    run = evaluate(
        None,
        [refund_case()],
        recorded=recorded,
        store=tmp_path / "runs.db",
        user_simulator="openai:gpt-4o-mini",
        scorers=["exact_match"],
        builtins=False,
    )
    assert run.results[0].scores["exact_match"].passed is True
    assert "user_simulator" not in run.info.settings
