"""Simulated conversations in the HTML report, in a real headless Chromium (Debian's `chromium`,
driven by Playwright, as `test_html_browser.py`): the XSS corpus said by the simulated user, the
agent, in the goal, the persona, the user's label and the end detail never runs, is shown as
text, and the page logs no console error. Skipped, saying why, only where no chromium is
installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from tests.report.test_html import XSS
from tests.report.test_html_browser import (  # noqa: F401  (browser is a fixture)
    CHROMIUM,
    Watched,
    browser,
    exercise,
)

from agenteval import EvalCase
from agenteval.report.html import render_html
from agenteval.report.summary import summarize
from agenteval.run import RunInfo, RunStatus, TrialResult
from agenteval.trace import (
    AgentStep,
    EndReason,
    ModelCall,
    SimulatedConversation,
    ToolCall,
    Trial,
    Usage,
    UserTurn,
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on this machine: `apt-get install chromium` (the browser tests need "
    "Debian's chromium; .ci/run installs it)",
)

SOURCES = ("written", "simulated", "scripted")


def xss(i: int) -> str:
    return XSS[i % len(XSS)]


def simulated_xss_run() -> tuple[RunInfo, list[TrialResult]]:
    """Four simulated conversations with the corpus in everything a conversation carries:
    messages of every source, the agent's answers, the turns' tool calls, the goal, the
    persona, the user's label and the end detail (one for each end reason but two)."""
    info = RunInfo(run_id="20261202-000000-sim0", trials=1, target="t", agent="a")
    info = info.model_copy(update={"status": RunStatus.FINISHED})
    reasons = [
        EndReason.GOAL_ACHIEVED,
        EndReason.USER_GAVE_UP,
        EndReason.AGENT_CANNOT_HELP,
        EndReason.TRIAL_FAILED,
    ]
    results = []
    for c, reason in enumerate(reasons):
        case = EvalCase(
            id=f"sim-{c}",
            user_simulation={"goal": xss(c), "persona": xss(c + 1), "max_turns": 5},
        )
        turns = [
            UserTurn.model_validate(
                {"user": xss(c + 2 + k), "source": SOURCES[k], "agent": xss(c + 5 + k)}
            )
            for k in range(3)
        ]
        steps = [
            AgentStep(
                tool_calls=[ToolCall(name=f"tool_{xss(c + k)}", arguments={"q": xss(c + k + 1)})],
                output=turn.agent,
            )
            for k, turn in enumerate(turns)
        ]
        conversation = SimulatedConversation(
            user=f"openai:{xss(c + 8)}",
            turns=turns,
            end_reason=reason,
            end_detail=xss(c + 9),
            model_calls=[ModelCall(model="gpt-4o-mini", usage=Usage(input_tokens=90))],
            cost_usd=0.002,
        )
        trial = Trial(case_id=case.id, steps=steps, simulation=conversation)
        results.append(TrialResult(case=case, trial=trial, scores={}))
    return info, results


@pytest.fixture
def watched(browser: Browser, tmp_path: Path) -> Iterator[Watched]:  # noqa: F811
    info, results = simulated_xss_run()
    page = render_html(info, summarize(results), results)
    out = tmp_path / "report.html"
    out.write_text(page, encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    seen = Watched(context.new_page())
    seen.page.goto(out.as_uri())
    seen.page.wait_for_selector("#case-table")
    yield seen
    context.close()


def test_the_xss_corpus_in_a_simulated_conversation_never_runs(watched: Watched) -> None:
    exercise(watched)
    assert watched.xss_flag() is None
    assert watched.dialogs == []
    assert watched.errors == []
    trace = str(watched.page.text_content("#trace-1"))
    # Every message, answer, goal, persona, label and end detail is on the page as text.
    for i in range(2, 10):
        assert xss(i).strip() in trace, xss(i)
    assert xss(0).strip() in trace and xss(1).strip() in trace


def test_each_turn_is_marked_by_its_source_in_the_browser(watched: Watched) -> None:
    page = watched.page
    page.click("tbody.trial[data-i='1'] button.open-trace")
    badges = page.eval_on_selector_all(
        "#trace-1 ol.conversation .badge", "els => els.map(e => e.textContent)"
    )
    assert [b for b in badges if b in SOURCES] == list(SOURCES)
    summary = str(page.text_content("#simulation"))
    assert "goal_achieved" in summary and "1 of 4" in summary
    assert watched.errors == []
