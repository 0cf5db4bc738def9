"""ADK's static `AgentEvaluator.evaluate(agent_module=..., eval_dataset_file_path_or_dir=...)` on
agenteval's `AgentEvaluator`, with a callable `root_agent` (no framework): the module and agent
lookup, the test files and their criteria, the session file, `num_runs`, and the pass/fail
contract (an `AssertionError` naming the failing metrics and the stored runs)."""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, cli_env

from agenteval import AgentLoadError, ConfigError, DatasetError
from agenteval.evalset import SESSION_INPUT, AgentEvaluator, EvalConfig, EvalSet
from agenteval.evalset.config import EFFICIENCY_METRICS
from agenteval.store import RunStore

DATA = Path(__file__).parent / "data"
AGENTS = "tests.evalset.dropin.agents"
HOME = DATA / "home" / "home.test.json"
STORE = Path(".agenteval/runs.db")  # the default store, in the test's own folder (conftest)
REPORTED = sorted(EFFICIENCY_METRICS)  # reported on every case, as ADK does, never pass/fail


def stored_runs() -> list[str]:
    with RunStore(STORE, create=False) as store:
        return [row.run_id for row in store.list_runs()]


def has_store() -> bool:
    return STORE.exists()


def run_ids_in(message: str) -> list[str]:
    line = message.splitlines()[-1]
    return [word for word in line.replace(",", " ").split() if word[:8].isdigit()]


# --- passing: the same call as ADK's


async def test_a_passing_test_file_returns_and_stores_one_run_with_num_runs_trials() -> None:
    result = await AgentEvaluator.evaluate(
        agent_module=f"{AGENTS}.home_plain",
        eval_dataset_file_path_or_dir=str(HOME),
        num_runs=2,
        initial_session_file=str(DATA / "home" / "initial.session.json"),
        print_detailed_results=False,
    )

    assert result is None
    (run_id,) = stored_runs()
    with RunStore(STORE, create=False) as store:
        info = store.get_info(run_id)
        results = list(store.iter_results(run_id))
        (case,) = store.get_cases(run_id)
    assert info.trials == 2
    assert info.target == str(HOME)
    assert sorted(r.trial.trial for r in results) == [0, 1]
    # test_config.json beside the file: the trajectory at 1.0 and ADK's response_match_score
    # (ROUGE-1) at 0.5; and ADK's efficiency metrics, reported.
    for result in results:
        assert sorted(result.scores) == sorted(
            ["tool_trajectory_avg_score", "rouge_match", *REPORTED]
        )
        assert result.scores["tool_trajectory_avg_score"].value == 1.0
        assert result.scores["rouge_match"].value == 1.0
        assert all(result.scores[name].passed is None for name in REPORTED)
    assert case.metadata[SESSION_INPUT] == {
        "state": {"home": "flat-3"},
        "app_name": "home_automation",
        "user_id": "test_user",
    }


async def test_positional_arguments_in_adks_order() -> None:
    await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(HOME), 1, None, None, False)

    with RunStore(STORE, create=False) as store:
        (row,) = store.list_runs()
        assert store.get_info(row.run_id).trials == 1


async def test_without_initial_session_file_the_session_beside_the_file_is_not_read() -> None:
    # ADK reads a legacy file's session only from initial_session_file.
    await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(HOME), num_runs=1)

    with RunStore(STORE, create=False) as store:
        (case,) = store.get_cases(stored_runs()[0])
    assert not case.metadata.get(SESSION_INPUT)


async def test_a_folder_runs_each_test_file_with_the_config_beside_it() -> None:
    await AgentEvaluator.evaluate(
        agent_module=f"{AGENTS}.home_plain",
        eval_dataset_file_path_or_dir=str(DATA / "folder"),
        num_runs=1,
        print_detailed_results=False,
    )

    with RunStore(STORE, create=False) as store:
        runs = {
            Path(str(store.get_info(run_id).target)).name: list(store.iter_results(run_id))
            for run_id in stored_runs()
        }
    # lights/test_config.json asks for the trajectory only; rooms/ has none: ADK's defaults.
    assert {
        name: sorted(set(results[0].scores) - set(REPORTED)) for name, results in runs.items()
    } == {
        "lights.test.json": ["tool_trajectory_avg_score"],
        "rooms.test.json": ["rouge_match", "tool_trajectory_avg_score"],
    }


@pytest.mark.parametrize(
    "module",
    [
        f"{AGENTS}.home_plain.agent",  # ADK's other form: the module's name ends in `.agent`
        f"{AGENTS}.flat_root",  # no `agent` member, `root_agent` at its top: accepted too
    ],
)
async def test_the_agent_module_itself_may_hold_root_agent(module: str) -> None:
    await AgentEvaluator.evaluate(module, str(HOME), num_runs=1)
    assert len(stored_runs()) == 1


async def test_get_agent_async_is_called_and_its_exit_stack_closed() -> None:
    from tests.evalset.dropin.agents.factory_made.agent import CLOSED

    CLOSED.clear()
    await AgentEvaluator.evaluate(f"{AGENTS}.factory_made", str(HOME), num_runs=1)

    assert CLOSED == [True]
    assert len(stored_runs()) == 1


def test_find_config_for_test_file_is_adks() -> None:
    beside = AgentEvaluator.find_config_for_test_file(str(HOME))
    assert beside.criteria == EvalConfig.load(DATA / "home" / "test_config.json").criteria
    none_beside = AgentEvaluator.find_config_for_test_file(
        str(DATA / "folder" / "rooms" / "r.json")
    )
    assert none_beside.criteria == EvalConfig.default().criteria
    # ADK 2.13 does not compare a case's final_session_state, and reports its efficiency
    # metrics on every case.
    assert not beside.check_final_session_state
    assert not none_beside.check_final_session_state
    assert beside.report_efficiency and none_beside.report_efficiency


async def test_a_final_session_state_is_not_compared_as_adk_does_not() -> None:
    # ADK's evaluator, and so the drop-in, do not compare a case's final_session_state;
    # agenteval's instance API does (final_session_state_match).
    from tests.evalset.dropin.agents.home_plain.agent import root_agent

    state_file = DATA / "state" / "home_state.test.json"
    await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(state_file), num_runs=1)
    with RunStore(STORE, create=False) as store:
        (result,) = store.iter_results(stored_runs()[0])
    assert "final_session_state_match" not in result.scores

    report = await AgentEvaluator(root_agent).evaluate(state_file)
    assert "final_session_state_match" in report.results[0].criterion_results


# --- failing: the AssertionError


async def test_a_failing_metric_raises_assertion_error_naming_it_and_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(
            agent_module=f"{AGENTS}.home_wrong",
            eval_dataset_file_path_or_dir=str(HOME),
            num_runs=2,
            print_detailed_results=False,
        )

    message = str(caught.value)
    assert message.startswith("Following are all the test failures.")
    # ADK's wording; the first turn's call is wrong in both trials: 1 of 2 calls, 0.5.
    assert (
        f"tool_trajectory_avg_score for {AGENTS}.home_wrong Failed. Expected 1.0, but got 0.5. "
        f"(eval case home of {HOME})" in message
    )
    # ADK's response_match_score (ROUGE-1) passes: 0 on the first turn ("Done."), 1 on the
    # second, a mean of 0.5 against a threshold of 0.5.
    assert "response_match_score" not in message
    (run_id,) = stored_runs()
    assert run_ids_in(message) == [run_id]
    assert "agenteval show RUN_ID" in message
    assert capsys.readouterr().out == ""  # print_detailed_results=False prints nothing


async def test_failures_of_every_file_of_a_folder_are_named_at_once() -> None:
    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(f"{AGENTS}.home_wrong", str(DATA / "folder"), num_runs=1)

    message = str(caught.value)
    assert "lights.test.json" in message and "rooms.test.json" in message
    # rooms/ has no test_config.json: ADK's default response_match_score threshold, 0.8.
    assert f"response_match_score for {AGENTS}.home_wrong Failed. Expected 0.8, but got 0.5." in (
        message
    )
    assert sorted(run_ids_in(message)) == sorted(stored_runs())
    assert len(stored_runs()) == 2


async def test_print_detailed_results_prints_each_metric_and_trial(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(f"{AGENTS}.home_wrong", str(HOME), num_runs=1)

    out = capsys.readouterr().out
    assert (
        "Summary: `FAILED` for Metric: `tool_trajectory_avg_score` on eval case `home`. "
        "Expected threshold: `1.0`, actual value: `0.5`." in out
    )
    assert "home (trial 0): failed; tools: set_device_info, get_device_info" in out
    # ADK's efficiency metrics, reported with their measured value (one tool call a turn).
    assert (
        "Summary: `INFORMATIONAL` for Metric: `tool_call_count_v1` on eval case `home`. "
        "Expected threshold: `None`, actual value: `1.0`." in out
    )
    assert "re-run this test" not in str(caught.value)


async def test_a_metric_that_gives_no_score_is_a_failure_not_evaluated(tmp_path: Path) -> None:
    folder = tmp_path / "no_reference"
    folder.mkdir()
    turns = json.loads(HOME.read_text())
    for turn in turns:
        turn["reference"] = ""
    (folder / "home.test.json").write_text(json.dumps(turns))

    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(folder), num_runs=1)

    message = str(caught.value)
    assert f"response_match_score for {AGENTS}.home_plain was not evaluated." in message
    assert "no expected final response" in message
    assert "tool_trajectory_avg_score" not in message  # it passed


async def test_an_agent_that_raises_fails_its_metrics_and_says_why() -> None:
    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(
            f"{AGENTS}.home_broken", str(HOME), num_runs=2, print_detailed_results=False
        )

    at = f"(eval case home of {HOME})"
    # The failed trials are scored (nothing done: 0.0), and the case says why they failed.
    assert str(caught.value).splitlines()[1:-1] == [
        f"tool_trajectory_avg_score for {AGENTS}.home_broken Failed. Expected 1.0, but got 0.0. "
        + at,
        f"response_match_score for {AGENTS}.home_broken Failed. Expected 0.5, but got 0.0. " + at,
        f"home for {AGENTS}.home_broken: 2 of 2 runs failed: agent_error: the device hub "
        f"crashed {at}",
    ]


async def test_runs_stopped_by_infrastructure_fail_the_case_as_in_adk() -> None:
    # A refused connection is retried, then recorded with no score: ADK's line for a run that
    # produced no metric result (and no "not evaluated" line per metric besides it).
    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(
            f"{AGENTS}.home_offline", str(HOME), num_runs=2, print_detailed_results=False
        )

    assert str(caught.value).splitlines()[1:-1] == [
        f"home for {AGENTS}.home_offline Failed. 2 of 2 runs were recorded as failed without "
        "producing any metric results: connection_error: the device hub refused the "
        f"connection (eval case home of {HOME})"
    ]


async def test_the_failing_runs_are_stored_for_show_compare_and_gate(tmp_path: Path) -> None:
    await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(HOME), num_runs=1)
    with pytest.raises(AssertionError) as caught:
        await AgentEvaluator.evaluate(f"{AGENTS}.home_wrong", str(HOME), num_runs=1)
    (bad_id,) = run_ids_in(str(caught.value))
    good_id = next(run_id for run_id in stored_runs() if run_id != bad_id)
    env = cli_env()

    shown = agenteval_cli(Path.cwd(), "show", bad_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "tool_trajectory_avg_score" in shown.stdout

    compared = agenteval_cli(Path.cwd(), "compare", good_id, bad_id, env=env)
    assert compared.returncode == 0, compared.stderr
    assert "tool_trajectory_avg_score" in compared.stdout

    policy = tmp_path / "policy.yaml"
    policy.write_text("scorers:\n  tool_trajectory_avg_score:\n    min_pass_rate: 1.0\n")
    gated = agenteval_cli(Path.cwd(), "gate", good_id, bad_id, "--policy", str(policy), env=env)
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert "tool_trajectory_avg_score" in gated.stdout + gated.stderr


# --- mistakes: one clear error each


async def test_a_missing_agent_module_is_one_clear_error() -> None:
    with pytest.raises(AgentLoadError) as caught:
        await AgentEvaluator.evaluate(f"{AGENTS}.nowhere", str(HOME))

    assert caught.value.render().startswith(f"no agent module named '{AGENTS}.nowhere'")
    assert "root_agent" in (caught.value.hint or "")


async def test_an_agent_object_for_agent_module_names_the_instance_form() -> None:
    from tests.evalset.dropin.agents.home_plain.agent import root_agent

    with pytest.raises(AgentLoadError, match="agent_module should be a module name") as caught:
        await AgentEvaluator.evaluate(root_agent, str(HOME))  # type: ignore[arg-type]

    assert "AgentEvaluator(agent, config).evaluate(eval_set)" in (caught.value.hint or "")


async def test_a_module_without_root_agent_is_one_clear_error() -> None:
    with pytest.raises(AgentLoadError) as caught:
        await AgentEvaluator.evaluate(f"{AGENTS}.no_root", str(HOME))

    assert str(caught.value.message) == (
        f"Module {AGENTS}.no_root does not have a root_agent or get_agent_async method."
    )
    assert "agent.py" in (caught.value.hint or "")
    assert not has_store()  # nothing ran


async def test_agent_name_on_a_callable_root_agent_is_one_clear_error() -> None:
    with pytest.raises(AgentLoadError, match="agent_name picks a sub-agent of an ADK agent"):
        await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(HOME), agent_name="lights")


@pytest.mark.parametrize("num_runs", [0, -1])
async def test_num_runs_below_one_is_adks_value_error(num_runs: int) -> None:
    with pytest.raises(ValueError, match="`num_runs` must be at least 1"):
        await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(HOME), num_runs=num_runs)


async def test_a_folder_without_test_files_is_adks_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"No `\*.test.json` eval files found"):
        await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(tmp_path))


async def test_a_missing_file_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such eval file or folder"):
        await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(tmp_path / "gone.test.json"))


async def test_adks_persistence_options_are_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="does not take ADK's output_file"):
        await AgentEvaluator.evaluate(f"{AGENTS}.home_plain", str(HOME), output_file="r.csv")


async def test_an_initial_session_with_an_eval_set_file_is_adks_error(tmp_path: Path) -> None:
    shutil.copy(DATA / "new_format" / "weather.test.json", tmp_path / "weather.test.json")

    with pytest.raises(ConfigError, match="Initial session should be specified as a part"):
        await AgentEvaluator.evaluate(
            f"{AGENTS}.home_plain",
            str(tmp_path / "weather.test.json"),
            initial_session_file=str(DATA / "home" / "initial.session.json"),
        )


# --- evaluate_eval_set


async def test_evaluate_eval_set_with_adks_deprecated_criteria() -> None:
    eval_set = EvalSet.load(HOME)

    await AgentEvaluator.evaluate_eval_set(
        f"{AGENTS}.home_plain",
        eval_set,
        criteria={"tool_trajectory_avg_score": 1.0},
        num_runs=1,
        print_detailed_results=False,
    )
    with pytest.raises(AssertionError, match=r"tool_trajectory_avg_score for .* Failed"):
        await AgentEvaluator.evaluate_eval_set(
            f"{AGENTS}.home_wrong",
            eval_set,
            eval_config=EvalConfig.from_adk({"criteria": {"tool_trajectory_avg_score": 1.0}}),
            num_runs=1,
            print_detailed_results=False,
        )
    assert len(stored_runs()) == 2


async def test_evaluate_eval_set_with_adks_own_eval_set_and_config() -> None:
    from google.adk.evaluation.eval_config import EvalConfig as AdkEvalConfig
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    text = (DATA / "state" / "home_state.test.json").read_text(encoding="utf-8")
    adk_set = AdkEvalSet.model_validate_json(text)
    adk_config = AdkEvalConfig(criteria={"tool_trajectory_avg_score": 1.0})

    await AgentEvaluator.evaluate_eval_set(
        f"{AGENTS}.home_plain", adk_set, eval_config=adk_config, num_runs=1
    )
    with pytest.raises(
        AssertionError, match=r"Expected 1\.0, but got 0\.5\. \(eval case switch_off"
    ):
        await AgentEvaluator.evaluate_eval_set(
            f"{AGENTS}.home_wrong", adk_set, eval_config=adk_config, num_runs=1
        )

    with RunStore(STORE, create=False) as store:
        targets = {store.get_info(run_id).target for run_id in stored_runs()}
        scores = {
            name
            for run_id in stored_runs()
            for r in store.iter_results(run_id)
            for name in r.scores
        }
    assert targets == {"home_state"}  # the eval set's id
    assert scores == {"tool_trajectory_avg_score", *REPORTED}


async def test_evaluate_eval_set_needs_a_config_and_cases() -> None:
    with pytest.raises(ValueError, match=r"`eval_config` is required\."):
        await AgentEvaluator.evaluate_eval_set(f"{AGENTS}.home_plain", EvalSet.load(HOME))
    with pytest.raises(ValueError, match="No eval cases were evaluated"):
        await AgentEvaluator.evaluate_eval_set(
            f"{AGENTS}.home_plain", EvalSet(id="empty"), criteria={"safety_v1": 0.5}
        )


# --- the two forms of one name


async def test_the_instance_form_still_returns_a_report() -> None:
    from tests.evalset.dropin.agents.home_plain.agent import root_agent

    report = await AgentEvaluator(root_agent).evaluate(HOME)

    assert report.passed
    assert report.run_id in stored_runs()
    assert list(inspect.signature(AgentEvaluator(root_agent).evaluate).parameters) == [
        "eval_set",
        "on_result",
    ]


@pytest.mark.parametrize("name", ["evaluate", "evaluate_eval_set", "find_config_for_test_file"])
def test_the_class_form_takes_adks_arguments_in_adks_order_with_adks_defaults(name: str) -> None:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkAgentEvaluator

    adk = inspect.signature(getattr(AdkAgentEvaluator, name)).parameters
    ours = inspect.signature(getattr(AgentEvaluator, name)).parameters

    assert list(ours)[: len(adk)] == list(adk)
    assert [p.default for p in ours.values()][: len(adk)] == [p.default for p in adk.values()]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(ours.values())[len(adk) :])
