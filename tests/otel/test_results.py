"""Scores out as OpenTelemetry (`otel/results.py`): every score of a run, a rescore and a scoring
of recorded traces arrives at a loopback OTLP receiver as one `gen_ai.evaluation.result` event,
parented to its trial's span; an endpoint that is down or refuses changes nothing but one
warning; secrets never arrive."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agenteval
from agenteval import EvalCase
from agenteval.errors import ConfigError
from agenteval.otel.results import ScoreExport
from agenteval.records import TrialResult
from agenteval.score import Score
from agenteval.trace import Trial

from .otlp_sink import Event, Sink, otlp_sink

SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3"

CASES = [
    EvalCase(id="c1", input="q1", expected_output="Q1"),
    EvalCase(id="c2", input="q2", expected_output="something else"),
]


def shout(text: str) -> str:
    return text.upper()


def graded(case: EvalCase, trial: object) -> tuple[float, str]:
    return (0.25 if case.id == "c2" else 0.75), f"graded with key {SECRET}"


def broken(case: EvalCase, trial: object) -> float:
    raise ValueError("the scorer broke")


def skipped(case: EvalCase, trial: object) -> None:
    return None


SCORERS = [graded, broken, skipped]


@pytest.fixture
def sink() -> Iterator[Sink]:
    with otlp_sink() as running:
        yield running


def _sent(result: TrialResult) -> dict[str, Score]:
    """The scores of a trial that are sent: every one but those that did not apply."""
    return {n: s for n, s in result.scores.items() if s.value is not None or s.error}


def _by_trial(events: list[Event]) -> dict[tuple[str, int, str], Event]:
    keyed: dict[tuple[str, int, str], Event] = {}
    for event in events:
        key = (
            event.attributes["agenteval.case.id"],
            event.attributes["agenteval.trial.index"],
            event.attributes["gen_ai.evaluation.name"],
        )
        assert key not in keyed, f"sent twice: {key}"
        keyed[key] = event
    return keyed


def _check_events(run: agenteval.Run, sink: Sink) -> dict[tuple[str, int, str], Event]:
    """Every score that applied or failed arrived once, as the run has it."""
    events = _by_trial(sink.evaluations())
    expected = {
        (r.case.id, r.trial.trial, name): score
        for r in run.results
        for name, score in _sent(r).items()
    }
    assert set(events) == set(expected)
    for key, score in expected.items():
        attributes = events[key].attributes
        assert attributes["agenteval.run.id"] == run.run_id
        assert events[key].service == "agenteval"
        if score.error is not None:
            assert attributes["error.type"] == "ValueError"
            assert "gen_ai.evaluation.score.value" not in attributes
            assert "gen_ai.evaluation.score.label" not in attributes
            assert attributes["gen_ai.evaluation.explanation"] == score.error
            continue
        assert "error.type" not in attributes
        assert attributes["gen_ai.evaluation.score.value"] == score.value
        assert attributes["gen_ai.evaluation.score.label"] == ("pass" if score.passed else "fail")
        explanation = attributes["gen_ai.evaluation.explanation"]
        if key[2] == "graded":
            assert explanation == "graded with key sk-proj-[REDACTED]"
        else:
            assert explanation == score.reason
    return events


def test_every_score_of_a_run_arrives_once_on_a_trial_span_agenteval_sends(
    tmp_path: Path, sink: Sink, no_provider: None
) -> None:
    run = agenteval.evaluate(
        shout,
        CASES,
        SCORERS,
        trials=2,
        store=tmp_path / "runs.db",
        otlp_endpoint=sink.url,
    )
    events = _check_events(run, sink)
    labels = {
        (case, name): e.attributes.get("gen_ai.evaluation.score.label")
        for (case, _, name), e in events.items()
    }
    assert labels[("c1", "exact_match")] == "pass"
    assert labels[("c2", "exact_match")] == "fail"
    assert labels[("c1", "graded")] == "pass" and labels[("c2", "graded")] == "fail"
    assert not any(name == "skipped" for _, _, name in events)
    # No OpenTelemetry of the user's: agenteval sent one span per trial, and each trial's
    # events are parented to it.
    spans = {
        (s.attributes["agenteval.case.id"], s.attributes["agenteval.trial.index"]): s
        for s in sink.spans
    }
    assert len(spans) == len(sink.spans) == 4
    for result in run.results:
        span = spans[(result.case.id, result.trial.trial)]
        if result.trial.span_id is not None:  # live capture's bare root: sent with its ids
            assert (span.trace_id, span.span_id) == (result.trial.trace_id, result.trial.span_id)
        assert span.name == f"agenteval trial {result.case.id}"
        assert span.parent_id == ""
        assert span.attributes["agenteval.run.id"] == run.run_id
        assert result.trial.started_at is not None and result.trial.latency_s is not None
        assert span.start_ns == int(result.trial.started_at.timestamp() * 1e9)
        assert span.end_ns - span.start_ns == int(result.trial.latency_s * 1e9)
        for name in _sent(result):
            event = events[(result.case.id, result.trial.trial, name)]
            assert (event.trace_id, event.span_id) == (span.trace_id, span.span_id)
    assert SECRET.encode() not in b"".join(sink.bodies)


def test_a_failed_trial_sends_its_span_with_the_error_status(
    tmp_path: Path, sink: Sink, no_provider: None
) -> None:
    def failing(text: str) -> str:
        raise RuntimeError(f"agent down, token {SECRET}")

    run = agenteval.evaluate(
        failing, CASES[:1], [graded], retries=0, store=tmp_path / "runs.db", otlp_endpoint=sink.url
    )
    _check_events(run, sink)
    (span,) = sink.spans
    assert span.status_code == 2  # STATUS_CODE_ERROR
    assert span.attributes["error.type"] == "RuntimeError"
    assert "agent_error" in span.status_message and "[REDACTED]" in span.status_message
    assert SECRET.encode() not in b"".join(sink.bodies)


def test_under_the_users_tracer_provider_events_are_parented_to_its_trial_span(
    tmp_path: Path, sink: Sink, user_exporter: InMemorySpanExporter
) -> None:
    run = agenteval.evaluate(
        shout, CASES, [graded], store=tmp_path / "runs.db", otlp_endpoint=sink.url
    )
    user_spans = {
        s.attributes["agenteval.case.id"]: s
        for s in user_exporter.get_finished_spans()
        if s.name.startswith("agenteval trial ") and s.attributes is not None
    }
    assert set(user_spans) == {"c1", "c2"}
    if any(r.trial.span_id is None for r in run.results):
        pytest.skip("live capture does not fill Trial.trace_id / span_id yet (session receiver)")
    events = _check_events(run, sink)
    for (case_id, _, _), event in events.items():
        context = user_spans[case_id].context
        assert context is not None
        assert (event.trace_id, event.span_id) == (
            f"{context.trace_id:032x}",
            f"{context.span_id:016x}",
        )
    # The user's provider exported the trial spans: agenteval sends none of its own.
    assert sink.spans == []


def test_a_rescore_sends_its_new_scores(tmp_path: Path, sink: Sink, no_provider: None) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(shout, CASES, [graded], store=store)
    assert sink.events == []  # not asked to send: nothing sent
    rescored = agenteval.rescore(run.run_id, [graded], store=store, otlp_endpoint=sink.url)
    events = _check_events(rescored, sink)
    assert {name for _, _, name in events} == {"exact_match", "graded"}
    spans = {s.span_id: s for s in sink.spans}
    assert len(spans) == 2
    assert {(e.trace_id, e.span_id) for e in events.values()} == {
        (s.trace_id, s.span_id) for s in spans.values()
    }


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _verdicts(run: agenteval.Run) -> dict[tuple[str, int], dict[str, bool | None]]:
    return {r.key: {n: s.passed for n, s in r.scores.items()} for r in run.results}


def test_an_endpoint_that_is_down_costs_one_warning_and_nothing_else(
    tmp_path: Path, no_provider: None
) -> None:
    warnings: list[str] = []
    down = f"http://user:{SECRET}@127.0.0.1:{_closed_port()}"
    run = agenteval.evaluate(
        shout,
        CASES,
        [graded],
        store=tmp_path / "down.db",
        otlp_endpoint=down,
        on_warning=warnings.append,
    )
    plain = agenteval.evaluate(shout, CASES, [graded], store=tmp_path / "plain.db")
    assert run.complete and _verdicts(run) == _verdicts(plain)
    assert len(warnings) == 1, warnings
    assert "could not all be sent" in warnings[0] and "connection refused" in warnings[0]
    assert f"http://127.0.0.1:{down.rsplit(':', 1)[1]}" in warnings[0]
    assert SECRET not in warnings[0] and "user" not in warnings[0]


def test_an_endpoint_that_refuses_costs_one_warning(tmp_path: Path, no_provider: None) -> None:
    warnings: list[str] = []
    with otlp_sink(status=403) as refusing:
        run = agenteval.evaluate(
            shout,
            CASES,
            [graded],
            store=tmp_path / "runs.db",
            otlp_endpoint=refusing.url,
            on_warning=warnings.append,
        )
    assert run.complete
    assert len(warnings) == 1 and "HTTP 403" in warnings[0], warnings


@pytest.mark.parametrize("url", ["localhost:4318", "ftp://collector", "http://:4318", ""])
def test_an_endpoint_that_is_no_url_is_refused_naming_the_option(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        agenteval.evaluate(shout, CASES, otlp_endpoint=url)
    assert caught.value.field == "otlp_endpoint"
    assert "--otlp-endpoint" in (caught.value.hint or "")


def test_the_signal_path_and_a_trailing_slash_are_taken_off(
    sink: Sink, tmp_path: Path, no_provider: None
) -> None:
    run = agenteval.evaluate(
        shout, CASES[:1], [graded], store=tmp_path / "runs.db", otlp_endpoint=sink.url + "/v1/logs/"
    )
    _check_events(run, sink)


def _trial(case_id: str, trace_id: int | None = None, span_id: int | None = None) -> TrialResult:
    return TrialResult(
        case=EvalCase(id=case_id, input="q"),
        trial=Trial(
            case_id=case_id,
            started_at=datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
            latency_s=1.5,
            trace_id=None if trace_id is None else f"{trace_id:032x}",
            span_id=None if span_id is None else f"{span_id:016x}",
        ),
        scores={"exact_match": Score(name="exact_match", value=1.0, passed=True, reason="ok")},
    )


USERS = (0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7)
"""A trace and span of the user's (random ids, as an SDK makes them)."""
BARE = ((0x9E3779B97F4A7C15 << 64) | 7, 7)
"""Live capture's bare root of the run's 7th trial: nothing exported it."""


@pytest.mark.parametrize("again", [False, True])
def test_each_trial_is_parented_to_a_span_the_backend_has(sink: Sink, again: bool) -> None:
    warnings: list[str] = []
    export = ScoreExport.open(sink.url, warnings.append)
    send = export.sending("run-1", None, again=again)
    send(_trial("users", *USERS))
    send(_trial("bare", *BARE))
    send(_trial("trace-only", BARE[0] + 1))
    send(_trial("nothing"))
    export.close()
    assert warnings == []
    parents = {
        e.attributes["agenteval.case.id"]: (e.trace_id, e.span_id) for e in sink.evaluations()
    }
    spans = {s.attributes["agenteval.case.id"]: s for s in sink.spans}
    # The user's span is in the backend already: parented to it, no span sent.
    assert parents["users"] == (f"{USERS[0]:032x}", f"{USERS[1]:016x}")
    assert "users" not in spans
    # Every other trial gets a span of agenteval's, and its events hang under it.
    assert set(spans) == {"bare", "trace-only", "nothing"}
    for case_id, span in spans.items():
        assert parents[case_id] == (span.trace_id, span.span_id)
        assert span.name == f"agenteval trial {case_id}"
        assert span.start_ns == int(datetime(2026, 12, 1, 12, tzinfo=UTC).timestamp() * 1e9)
        assert span.end_ns - span.start_ns == 1_500_000_000
    # The bare root is sent with its own ids, so the agent's spans naming it connect; a
    # rescore (again) sends a new span in the same trace instead.
    assert spans["bare"].trace_id == f"{BARE[0]:032x}"
    assert (spans["bare"].span_id == f"{BARE[1]:016x}") is not again
    assert spans["trace-only"].trace_id == f"{BARE[0] + 1:032x}"
    assert spans["trace-only"].span_id != f"{(BARE[0] + 1) & ((1 << 64) - 1):016x}"
    assert spans["nothing"].trace_id not in {f"{USERS[0]:032x}", f"{BARE[0]:032x}"}


def test_a_closed_export_sends_nothing_more(sink: Sink) -> None:
    export = ScoreExport.open(sink.url, print)
    send = export.sending("run-1", None)
    send(_trial("first", *USERS))
    export.close()
    export.close()  # closing twice is harmless
    send(_trial("late", *USERS))
    assert [e.attributes["agenteval.case.id"] for e in sink.evaluations()] == ["first"]


def test_scores_coming_faster_than_they_are_sent_are_never_dropped(sink: Sink) -> None:
    # 20,000 events at once, as a rescore of thousands of trials gives them: more than the
    # batch processor's queue holds (with the SDK's defaults, some 70% were dropped, measured).
    warnings: list[str] = []
    export = ScoreExport.open(sink.url, warnings.append)
    send = export.sending("run-1", None)
    scores = {f"s{i}": Score(name=f"s{i}", value=1.0, passed=True, reason="ok") for i in range(5)}
    for index in range(4000):
        result = _trial(f"c{index}", *USERS)
        send(result.model_copy(update={"scores": scores}))
    export.close()
    assert warnings == []
    assert len(sink.evaluations()) == 20_000


def test_with_the_sdk_disabled_one_warning_says_nothing_is_sent(
    sink: Sink, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_provider: None
) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    warnings: list[str] = []
    run = agenteval.evaluate(
        shout,
        CASES,
        [graded],
        store=tmp_path / "runs.db",
        otlp_endpoint=sink.url,
        on_warning=warnings.append,
    )
    assert run.complete
    assert warnings == [
        "OTEL_SDK_DISABLED=true turns the OpenTelemetry SDK off: no score is sent to the OTLP "
        f"endpoint {sink.url}"
    ]
    assert sink.bodies == []
