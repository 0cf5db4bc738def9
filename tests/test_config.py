"""Settings resolve in one order: flag, environment, agenteval.yaml, default."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.config import ProjectConfig, find_target, resolve_settings
from agenteval.errors import ConfigError


def test_a_flag_beats_the_environment_which_beats_the_config_which_beats_the_default(
    tmp_path: Path,
) -> None:
    config = ProjectConfig(trials=3, concurrency=4, timeout=10, store="runs.db")
    env = {"AGENTEVAL_TRIALS": "5", "AGENTEVAL_TIMEOUT": "20"}
    settings = resolve_settings(config, tmp_path, trials=7, env=env)
    assert settings.trials == 7  # flag
    assert settings.timeout == 20  # environment
    assert settings.concurrency == 4  # config
    assert settings.retries == 2  # default
    assert settings.store == tmp_path / "runs.db"  # config, relative to its folder
    assert resolve_settings(ProjectConfig(), tmp_path, env={}).store == Path(".agenteval/runs.db")


def test_a_bad_environment_value_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="AGENTEVAL_TRIALS='many' is not a whole number"):
        resolve_settings(ProjectConfig(), tmp_path, env={"AGENTEVAL_TRIALS": "many"})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENTEVAL_TRIALS", "0"),
        ("AGENTEVAL_CONCURRENCY", "0"),
        ("AGENTEVAL_TIMEOUT", "-1"),
        ("AGENTEVAL_RETRIES", "-2"),
    ],
)
def test_an_environment_value_out_of_range_names_the_variable(
    tmp_path: Path, name: str, value: str
) -> None:
    # Every command reads the settings, so the variable, not a setting the user never typed,
    # is what the message must name for them to find it.
    with pytest.raises(ConfigError) as caught:
        resolve_settings(ProjectConfig(), tmp_path, env={name: value})
    assert caught.value.field == name
    assert f"{name}={value}" in str(caught.value)


def test_a_flag_out_of_range_is_refused_as_before(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="trials must be at least 1, got 0") as caught:
        resolve_settings(ProjectConfig(), tmp_path, trials=0, env={"AGENTEVAL_TRIALS": "0"})
    assert caught.value.field == "trials"


def test_a_target_is_a_folder_a_config_or_a_dataset(tmp_path: Path) -> None:
    (tmp_path / "agenteval.yaml").write_text("dataset: data/cases.yaml\nagent: agent.py:run\n")
    (tmp_path / "cases.yaml").write_text("- input: hi\n")
    (tmp_path / "other.yaml").write_text("dataset: cases.yaml\n")
    folder = find_target(tmp_path)
    assert folder.dataset == tmp_path / "data" / "cases.yaml"
    assert folder.config.agent == "agent.py:run"
    assert find_target(tmp_path / "other.yaml").dataset == tmp_path / "cases.yaml"
    bare = find_target(tmp_path / "cases.yaml")
    assert bare.dataset == tmp_path / "cases.yaml" and bare.config == ProjectConfig()


def test_a_folder_without_a_config_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no agenteval\.yaml in"):
        find_target(tmp_path)


def test_a_wrong_type_in_the_config_names_the_line_and_setting(tmp_path: Path) -> None:
    path = tmp_path / "agenteval.yaml"
    path.write_text("dataset: cases.yaml\ntrials: lots\n")
    with pytest.raises(ConfigError) as info:
        find_target(path)
    assert info.value.line == 2 and info.value.field == "trials"
