"""Simulated conversations in the reports: the summary tallies how they ended, their user turns
and turns to goal, and keeps the simulator's tokens and cost apart from the agent's and the
judge's (its cost is in the run's total, and the terminal says so); the terminal, the JSON
document and the HTML report show them; a run without any shows nothing of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from tests.report.simulated_runs import CALL_USAGE, CALL_USD, CASES, simulated_run

from agenteval import EvalCase
from agenteval.report.html import render_html
from agenteval.report.json_document import run_document
from agenteval.report.summary import SummaryBuilder
from agenteval.report.terminal import print_summary
from agenteval.run import Run, TrialResult
from agenteval.trace import EndReason, ModelCall, SimulatedConversation, Trial, Usage, UserTurn

REASONS = [
    "goal_achieved",
    "agent_cannot_help",
    "user_gave_up",
    "max_turns",
    "user_stopped",
    "trial_failed",
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return simulated_run(tmp_path_factory.mktemp("sim") / "runs.db")


def _terminal(run: Run) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_summary(run.summary, run.info, console)
    return console.export_text()


def test_the_summary_tallies_every_end_reason_and_the_user_turns(run: Run) -> None:
    stats = run.summary.simulation
    assert stats is not None
    assert stats.trials == 7  # every case but `plain`
    assert stats.end_reasons == {
        "goal_achieved": 2,
        "agent_cannot_help": 1,
        "user_gave_up": 1,
        "max_turns": 1,
        "user_stopped": 1,
        "trial_failed": 1,
    }
    assert list(stats.end_reasons) == REASONS
    # priced 2, written-first 2, hopeless 1, gives-up 1, quiet 1, loops 3, crash 2
    assert stats.user_turns_max == 3
    assert stats.user_turns_mean == pytest.approx(12 / 7)
    assert stats.goal_achieved == 2
    assert stats.turns_to_goal_mean == 2.0
    assert stats.turns_to_goal_median == 2.0
    assert stats.users == sorted(
        ["openai:gpt-4o-mini"]
        + [
            f"script:tests.report.simulated_runs:{name}"
            for name in ("gave_up_user", "quiet_user", "looping_user", "crashing_user")
        ]
    )
    assert run.summary.section("simulation") is not None


def test_the_simulators_tokens_and_cost_are_its_own_and_in_the_total(run: Run) -> None:
    stats = run.summary.simulation
    assert stats is not None
    # PricedUser replied 7 times: priced 3 (two messages, the stop), written-first 2 (a
    # message, the stop), hopeless 2 (the message, the stop). Scripted users cost nothing.
    assert stats.model_calls == 7
    assert stats.usage.input_tokens == 7 * CALL_USAGE.input_tokens
    assert stats.usage.output_tokens == 7 * CALL_USAGE.output_tokens
    assert stats.cost_usd == pytest.approx(7 * CALL_USD)
    cost = run.summary.cost
    assert cost.simulator_usd == pytest.approx(7 * CALL_USD)
    assert cost.agent_usd is None and cost.judge_usd is None
    assert cost.total_usd == pytest.approx(7 * CALL_USD)
    # Not the agent's tokens.
    assert run.summary.usage.total_tokens == 0
    assert run.summary.section("cost") is not None


def test_the_total_adds_the_simulator_to_the_agent_and_the_judge() -> None:
    builder = SummaryBuilder()
    case = EvalCase(id="c", user_simulation={"goal": "g"})
    trial = Trial(
        case_id="c",
        output="ok",
        model_calls=[ModelCall(model="gpt-4o-mini", usage=Usage(input_tokens=1000))],
        simulation=SimulatedConversation(
            user="openai:gpt-4o-mini",
            turns=[UserTurn(user="hi", source="simulated", agent="ok")],
            end_reason=EndReason.GOAL_ACHIEVED,
            cost_usd=0.25,
        ),
    )
    builder.add(TrialResult(case=case, trial=trial, scores={}))
    cost = builder.build().cost
    assert cost.agent_usd is not None and cost.agent_usd > 0
    assert cost.simulator_usd == 0.25
    assert cost.total_usd == pytest.approx(cost.agent_usd + 0.25)


def _conversation(turns: int, reason: EndReason | None, **more: object) -> SimulatedConversation:
    return SimulatedConversation.model_validate(
        {
            "user": "openai:gpt-4o-mini",
            "turns": [{"user": f"m{i}", "source": "simulated"} for i in range(turns)],
            "end_reason": reason,
            **more,
        }
    )


def test_turns_to_goal_is_over_the_conversations_that_reached_it() -> None:
    builder = SummaryBuilder()
    case = EvalCase(id="c", user_simulation={"goal": "g"})
    shapes = [
        (2, EndReason.GOAL_ACHIEVED),
        (3, EndReason.GOAL_ACHIEVED),
        (7, EndReason.GOAL_ACHIEVED),
        (10, EndReason.MAX_TURNS),
        (1, None),  # stored without a reason: counted apart, not dropped
    ]
    for index, (turns, reason) in enumerate(shapes):
        trial = Trial(case_id="c", trial=index, output="x", simulation=_conversation(turns, reason))
        builder.add(TrialResult(case=case, trial=trial, scores={}))
    stats = builder.build().simulation
    assert stats is not None
    assert stats.goal_achieved == 3
    assert stats.turns_to_goal_mean == 4.0
    assert stats.turns_to_goal_median == 3.0
    assert stats.user_turns_max == 10
    assert stats.end_reasons["max_turns"] == 1
    assert stats.end_reasons["unknown"] == 1
    assert stats.end_reasons["user_gave_up"] == 0


def test_a_simulator_model_without_a_price_is_named_not_counted_as_free() -> None:
    builder = SummaryBuilder()
    case = EvalCase(id="c", user_simulation={"goal": "g"})
    conversation = _conversation(
        1,
        EndReason.GOAL_ACHIEVED,
        model_calls=[{"model": "my-own-simulator", "usage": {"input_tokens": 50}}],
    )
    builder.add(TrialResult(case=case, trial=Trial(case_id="c", simulation=conversation)))
    summary = builder.build()
    assert summary.simulation is not None and summary.simulation.unpriced
    assert summary.cost.simulator_usd is None
    assert summary.cost.total_usd is None
    assert "my-own-simulator" in summary.cost.unpriced_models
    assert summary.section("cost") is not None


def test_the_terminal_shows_the_section_and_says_the_total_includes_the_simulator(
    run: Run,
) -> None:
    text = _terminal(run)
    assert "Simulated conversations" in text
    assert (
        "ended: goal_achieved 2, agent_cannot_help 1, user_gave_up 1, max_turns 1, "
        "user_stopped 1, trial_failed 1"
    ) in text
    assert "user turns: mean 1.7, max 3" in text
    assert "turns to goal: mean 2.0, median 2.0" in text
    assert "reported, never a pass or a fail" in text
    assert "simulator: 7 model calls, 840 tokens in, 105 out, $0.0105" in text
    assert "agent — · judge — · simulator $0.0105 · total $0.0105" in text
    assert "(the total includes the simulator)" in text
    assert "Simulator tokens: 840 in, 105 out" in text


def test_the_json_document_holds_the_summary_and_each_conversation(run: Run) -> None:
    document = json.loads(json.dumps(run_document(run.info, run.summary, run.iter_results())))
    summary = document["summary"]
    assert summary["simulation"]["end_reasons"]["trial_failed"] == 1
    assert summary["simulation"]["cost_usd"] == pytest.approx(7 * CALL_USD)
    assert summary["cost"]["simulator_usd"] == pytest.approx(7 * CALL_USD)
    results = {r["case_id"]: r for r in document["results"]}
    assert "simulation" not in results["plain"]
    written = results["written-first"]["simulation"]
    assert written["user"] == "openai:gpt-4o-mini"
    assert written["goal"] == "Get the refund"
    assert [t["source"] for t in written["turns"]] == ["written", "simulated"]
    assert written["turns"][0]["agent"] == "Found it. What is your email?"
    assert written["end_reason"] == "goal_achieved"
    assert written["end_detail"] == "refund confirmed"
    assert written["turns_to_goal"] == 2
    assert written["model_calls"] == 2
    assert written["cost_usd"] == pytest.approx(2 * CALL_USD)
    crashed = results["scripted-crash"]["simulation"]
    assert crashed["end_reason"] == "trial_failed"
    assert crashed["turns_to_goal"] is None


def _trace_of(page: str, run: Run, case_id: str) -> str:
    """The trace row of the trial of `case_id` (rows are numbered from 1 in the run's order)."""
    index = 1 + [result.case.id for result in run.results].index(case_id)
    start = page.index(f'<tr class="trace" id="trace-{index}"')
    return page[start : page.index("</tbody>", start)]


def test_the_html_report_shows_the_section_and_each_conversation_turn_by_turn(run: Run) -> None:
    page = render_html(run.info, run.summary, run.results)
    assert '<section id="simulation" class="card">' in page
    assert "<h2>Simulated conversations</h2>" in page
    assert "user simulator" in page  # the cost table's row
    assert "(agent, judge and user simulator)" in page
    trace = _trace_of(page, run, "written-first")
    assert "<h4>Simulated conversation</h4>" in trace
    sources = re.findall(r'<span class="badge (written|simulated|scripted)"', trace)
    assert sources == ["written", "simulated"]
    # The first turn's tool call sits under it, before the agent's answer to it.
    first = trace.index("My order 8812 arrived broken")
    call = trace.index('<code class="tool">look_up_broken_order</code>', first)
    assert call < trace.index("Found it. What is your email?", first)
    assert "<code>goal_achieved</code>" in trace and "the user: refund confirmed" in trace
    assert "<code>openai:gpt-4o-mini</code>" in trace
    scripted = _trace_of(page, run, "scripted-loops")
    assert (
        re.findall(r'<span class="badge (written|simulated|scripted)"', scripted)
        == ["scripted"] * 3
    )
    assert "script:tests.report.simulated_runs:looping_user" in scripted
    crashed = _trace_of(page, run, "scripted-crash")
    assert "failure: agent_error" in crashed


def test_a_trials_cost_in_the_table_counts_its_simulator(run: Run) -> None:
    page = render_html(run.info, run.summary, run.results)
    data = json.loads(re.search(r'id="trials-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    costs = {row["case"]: row["cost"] for row in data}
    assert costs["priced"] == pytest.approx(3 * CALL_USD)
    assert costs["scripted-loops"] is None
    assert costs["plain"] is None


def test_a_run_without_simulated_conversations_shows_nothing_of_them(tmp_path: Path) -> None:
    plain = [case for case in CASES if case.user_simulation is None]
    run = simulated_run(tmp_path / "runs.db", plain)
    assert run.summary.simulation is None
    assert run.summary.section("simulation") is None
    text = _terminal(run)
    page = render_html(run.info, run.summary, run.results)
    page = re.sub(r"<style.*?</style>", "", page, flags=re.S)  # the stylesheet names every badge
    document = json.dumps(run_document(run.info, run.summary, run.iter_results()))
    for where, shown in {"terminal": text, "html": page, "json": document}.items():
        assert "simulat" not in shown.lower(), where


def test_concurrent_trials_each_show_their_own_conversation(tmp_path: Path) -> None:
    """Three trials of each case at concurrency 8: every trial's conversation, as the reports
    show it, is its own case's (its goal opens it, its answers follow its messages)."""
    cases = [
        EvalCase(id=f"goal-{n}", user_simulation={"goal": f"Refund for order 8812, ask {n}"})
        for n in range(4)
    ]
    run = simulated_run(tmp_path / "runs.db", cases, trials=3, concurrency=8)
    document = run_document(run.info, run.summary, run.iter_results())
    assert len(document["results"]) == 12
    for result in document["results"]:
        n = result["case_id"].removeprefix("goal-")
        turns = result["simulation"]["turns"]
        assert turns[0]["user"] == f"Refund for order 8812, ask {n}"
        assert [t["user"] for t in turns[1:]] == ["ana@example.com"]
        assert result["simulation"]["end_reason"] == "goal_achieved"
    stats = run.summary.simulation
    assert stats is not None
    assert stats.trials == 12 and stats.end_reasons["goal_achieved"] == 12
    assert stats.model_calls == 12 * 3
    assert run.summary.cost.simulator_usd == pytest.approx(12 * 3 * CALL_USD)


def test_a_run_of_scripted_users_only_says_no_model_played(tmp_path: Path) -> None:
    scripted = [case for case in CASES if case.id.startswith("scripted-")]
    terminal = _terminal(simulated_run(tmp_path / "runs.db", scripted))
    assert "simulator: no model calls (scripted users)" in terminal
    assert "0 model calls" not in terminal


def test_one_conversation_is_said_in_the_singular(tmp_path: Path) -> None:
    (one,) = [case for case in CASES if case.id == "scripted-quiet"]
    terminal = _terminal(simulated_run(tmp_path / "runs.db", [one]))
    assert "1 conversation ·" in terminal and "1 conversations" not in terminal
