"""An ADK eval set's `user_simulator_config.model` is the simulator of a run that names none:
the run opens that model (so a missing key is said before anything is stored), and the run's
own `user_simulator` wins over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.users.test_user_seam import EchoSimulator

from agenteval import ConfigError, EndReason, EvalCase, RunStore, evaluate


def _case(model: str = "google:gemini-2.5-flash", case_id: str = "scenario") -> EvalCase:
    return EvalCase(
        id=case_id,
        user_simulation={"goal": "a refund", "starting_prompt": "hi", "extra": {"model": model}},
    )


def _agent(messages: object) -> str:
    return "What is your order number?"


def test_the_files_model_plays_when_the_run_names_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    store = tmp_path / "runs.db"
    with pytest.raises(ConfigError, match="google"):
        evaluate(_agent, [_case()], store=store)
    assert not store.exists() or not RunStore(store).list_runs()


def test_cases_naming_different_models_ask_the_run_to_name_one(tmp_path: Path) -> None:
    cases = [_case("google:gemini-2.5-flash", "a"), _case("openai:gpt-4o-mini", "b")]
    with pytest.raises(ConfigError, match="different simulator models"):
        evaluate(_agent, cases, store=tmp_path / "runs.db")


def test_the_runs_own_simulator_wins(tmp_path: Path) -> None:
    run = evaluate(_agent, [_case()], store=tmp_path / "runs.db", user_simulator=EchoSimulator())
    trial = run.results[0].trial
    assert trial.simulation.user == "test:echo"
    assert trial.simulation.end_reason is EndReason.USER_GAVE_UP
