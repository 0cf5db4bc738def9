"""A mocked run as the views show it: each call a mock answered marked so, and the trial's final
state, in the HTML trace view, `agenteval show --verbose` and the JSON document."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from rich.console import Console
from tests.cli_process import agenteval_cli

import agenteval
from agenteval import EvalCase
from agenteval.report.failing import environment_lines
from agenteval.trace import ToolCall, Trial


@agenteval.tool
def create_ticket(title: str) -> dict[str, str]:
    raise AssertionError("the mock answers: the real tool never runs in these tests")


@agenteval.tool
def lookup(user: str) -> str:
    return f"user {user}"  # runs for real: no mock of it


def support_agent(prompt: str) -> str:
    lookup("ada")
    ticket = create_ticket(prompt)
    agenteval.state()["tickets"] = [*agenteval.state().get("tickets", []), ticket["id"]]
    return f"opened {ticket['id']}"


def mocked_run(tmp_path: Path) -> agenteval.Run:
    case = EvalCase(
        id="refund",
        input="refund please",
        initial_state={"tickets": ["T-0"]},
        expected_state={"tickets": ["T-0", "T-2"]},  # the agent opens T-1: fails, shown
        tool_mocks={"create_ticket": {"result": {"id": "T-1"}}},
    )
    return agenteval.evaluate(support_agent, [case], store=tmp_path / "runs.db")


def test_the_trace_view_marks_mocked_calls_and_shows_the_final_state(tmp_path: Path) -> None:
    run = mocked_run(tmp_path)
    page = run.to_html(tmp_path / "report.html").read_text(encoding="utf-8")
    calls = re.findall(r'<div class="call-head"><code class="tool">(\w+)</code>(.*?)</div>', page)
    marks = {name: "badge mocked" in rest for name, rest in calls}
    assert marks == {"lookup": False, "create_ticket": True}
    assert ">mocked</span>" in page
    final = re.search(r'<h4>Final state</h4>\s*<pre class="state">(.*?)</pre>', page, re.DOTALL)
    assert final is not None
    assert json.loads(html.unescape(final.group(1))) == {"tickets": ["T-0", "T-1"]}
    expected = "<dt>expected state</dt><dd>{&#34;tickets&#34;: [&#34;T-0&#34;, &#34;T-2&#34;]}</dd>"
    assert expected in page
    assert "<summary>initial state</summary>" in page
    assert "state.tickets[1]: expected &#34;T-2&#34;, got &#34;T-1&#34;" in page


def test_show_verbose_lists_the_mocked_calls_and_the_final_state(tmp_path: Path) -> None:
    run = mocked_run(tmp_path)
    done = agenteval_cli(tmp_path, "show", run.run_id, "--store", "runs.db", "--verbose")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "state_match" in out and 'state.tickets[1]: expected "T-2", got "T-1"' in out
    assert "calls: lookup, create_ticket (mocked)" in out
    assert 'final state: {"tickets": ["T-0", "T-1"]}' in out


def test_the_json_document_carries_mocked_calls_and_states(tmp_path: Path) -> None:
    run = mocked_run(tmp_path)
    done = agenteval_cli(tmp_path, "show", run.run_id, "--store", "runs.db", "--json", "run.json")
    assert done.returncode == 0, done.stderr
    (result,) = json.loads((tmp_path / "run.json").read_text())["results"]
    assert [(c["name"], c["mocked"]) for c in result["tool_calls"]] == [
        ("lookup", None),
        ("create_ticket", "mock"),
    ]
    assert result["state"] == {"tickets": ["T-0", "T-1"]}
    assert result["expected_state"] == {"tickets": ["T-0", "T-2"]}
    assert result["scores"]["state_match"]["passed"] is False


def test_the_terminal_lines_mark_replays_and_errors_and_stay_short() -> None:
    calls = [ToolCall(name="pay", mocked="replay", error="TimeoutError: no answer in 30 s")] + [
        ToolCall(name=f"t{i}") for i in range(20)
    ]
    trial = Trial(tool_calls=calls, state={"big": "x" * 2000})
    console = Console(record=True, width=400, color_system=None)
    for line in environment_lines(trial):
        console.print(line)
    text = console.export_text()
    assert "calls: pay (replayed; error: TimeoutError), t0," in text
    assert "… 9 more" in text
    state = text[text.index("final state:") :]
    assert state.count("x") < 400 and state.rstrip().endswith("…")
    # No mocked call and no state: nothing is added.
    assert environment_lines(Trial(tool_calls=[ToolCall(name="x")])) == []
