"""The engine's seam for framework agents, with a FrameworkAgent of the test's own (each real
framework's adapter has its own tests beside this one): one `run_case` per trial for the whole
case, the adapter's tool declarations as the run's tools, and its calls scored."""

from __future__ import annotations

from pathlib import Path

import agenteval
from agenteval.agents.frameworks import FrameworkAgent, TrialBuilder, conversation
from agenteval.case import EvalCase, Invocation
from agenteval.store import RunStore
from agenteval.trace import ToolSpec, Trial

SPEC = ToolSpec(
    name="lookup",
    description="Look a word up.",
    parameters={
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": False,
    },
)


class Scripted(FrameworkAgent):
    """Plays each turn by calling `lookup` with the turn's text as `word`, or with a wrong
    argument name when the turn says "bad"; counts the sessions it opened."""

    framework = "scripted"

    def __init__(self, agent: object) -> None:
        super().__init__(agent)
        self.sessions: list[tuple[str, ...]] = []

    @property
    def name(self) -> str:
        return "scripted"

    def tool_specs(self) -> dict[str, ToolSpec]:
        return {"lookup": SPEC}

    async def run_case(self, case: EvalCase) -> Trial:
        talk = conversation(case)
        self.sessions.append(talk.turns)
        builder = TrialBuilder(talk, self.tool_specs())
        for turn in talk.turns:
            builder.start_turn()
            arguments = {"term": turn} if turn == "bad" else {"word": turn}
            builder.call("lookup", arguments, f"call-{turn}")
            builder.result(f"call-{turn}", {"found": turn})
            builder.answer(f"{turn}: found")
        return builder.build()


def test_a_framework_agent_plays_each_case_once_per_trial(tmp_path: Path) -> None:
    agent = Scripted(None)
    cases = [
        EvalCase(id="one", input="apple"),
        EvalCase(id="talk", conversation=[Invocation(input="pear"), Invocation(input="fig")]),
    ]
    run = agenteval.evaluate(
        agent, cases, ["tool_arguments_valid"], trials=2, store=tmp_path / "runs.db"
    )
    assert sorted(agent.sessions) == sorted([("apple",)] * 2 + [("pear", "fig")] * 2)
    by_case = {r.trial.case_id: r for r in run.results}
    talk = by_case["talk"].trial
    assert talk.metadata["turn_outputs"] == ["pear: found", "fig: found"]
    assert [c.arguments for c in talk.tool_calls] == [{"word": "pear"}, {"word": "fig"}]
    with RunStore(tmp_path / "runs.db") as store:
        info = store.get_info(run.run_id)
    assert info.tools == {"lookup": SPEC}
    assert info.target == "python:scripted:scripted"


def test_the_declared_schemas_check_the_calls_arguments(tmp_path: Path) -> None:
    run = agenteval.evaluate(
        Scripted(None),
        [EvalCase(id="good", input="apple"), EvalCase(id="bad", input="bad")],
        ["tool_arguments_valid"],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    scores = {r.trial.case_id: r.scores["tool_arguments_valid"] for r in run.results}
    assert scores["good"].passed is True
    assert scores["bad"].passed is False
