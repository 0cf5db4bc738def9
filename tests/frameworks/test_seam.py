"""The engine's seam for framework agents, with a FrameworkAgent of the test's own (each real
framework's adapter has its own tests beside this one): one `run_case` per trial for the whole
case, the adapter's tool declarations as the run's tools, and its calls scored."""

from __future__ import annotations

from pathlib import Path

import agenteval
from agenteval.agents.frameworks import FrameworkAgent, TrialBuilder, conversation
from agenteval.case import EvalCase, Invocation
from agenteval.store import RunStore
from agenteval.trace import ToolSpec, Trial, Usage

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


class Traced(Scripted):
    """Also emits the OpenTelemetry spans a framework's own tracing does (ADK traces every
    model call and tool call with the GenAI conventions): a model call with its usage, and a
    tool call, while reporting both in its trial."""

    async def run_case(self, case: EvalCase) -> Trial:
        from opentelemetry import trace

        tracer = trace.get_tracer("framework-under-test")
        with tracer.start_as_current_span("call_llm") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "scripted-model")
            span.set_attribute("gen_ai.usage.input_tokens", 100)
            span.set_attribute("gen_ai.usage.output_tokens", 10)
        with tracer.start_as_current_span("execute_tool lookup") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.tool.name", "lookup")
        talk = conversation(case)
        builder = TrialBuilder(talk, self.tool_specs())
        builder.call("lookup", {"word": "apple"}, "c1")
        builder.result("c1", {"found": "apple"})
        builder.model_call("scripted-model", Usage(input_tokens=100, output_tokens=10))
        builder.answer("apple: found")
        return builder.build()


def test_the_frameworks_record_wins_over_its_own_spans(tmp_path: Path) -> None:
    # The framework's run objects already hold every model call and tool call its spans
    # describe: the spans, captured live, must not add them a second time.
    run = agenteval.evaluate(
        Traced(None), [EvalCase(id="one", input="apple")], store=tmp_path / "runs.db"
    )
    trial = run.results[0].trial
    assert [c.name for c in trial.tool_calls] == ["lookup"]
    assert len(trial.model_calls) == 1
    assert trial.usage.input_tokens == 100


class TracedFailing(Scripted):
    """A framework run that traces a tool call and a model call, then raises (a tool's
    exception the framework does not catch)."""

    async def run_case(self, case: EvalCase) -> Trial:
        from opentelemetry import trace

        tracer = trace.get_tracer("framework-under-test")
        builder = TrialBuilder(conversation(case), self.tool_specs())
        with builder.kept_on_failure():
            with tracer.start_as_current_span("call_llm") as span:
                span.set_attribute("gen_ai.operation.name", "chat")
                span.set_attribute("gen_ai.request.model", "scripted-model")
                span.set_attribute("gen_ai.usage.input_tokens", 100)
            builder.model_call("scripted-model", Usage(input_tokens=100))
            with tracer.start_as_current_span("execute_tool lookup") as span:
                span.set_attribute("gen_ai.operation.name", "execute_tool")
                span.set_attribute("gen_ai.tool.name", "lookup")
                builder.call("lookup", {"word": "apple"}, "c1")
                builder.result("c1", error="LookupError: the dictionary is closed")
                raise LookupError("the dictionary is closed")
        return builder.build()


def test_a_failed_framework_run_keeps_its_calls_once(tmp_path: Path) -> None:
    run = agenteval.evaluate(
        TracedFailing(None),
        [EvalCase(id="one", input="apple")],
        retries=0,
        store=tmp_path / "runs.db",
    )
    trial = run.results[0].trial
    assert trial.failure is not None
    assert trial.failure.error_type == "LookupError"
    assert [(c.name, c.error) for c in trial.tool_calls] == [
        ("lookup", "LookupError: the dictionary is closed")
    ]
    assert trial.usage.input_tokens == 100
