"""`RunOptions`: a run's settings as one frozen value, checked once, here.

Every face builds one (`evaluate` and `evaluate_async` from their keyword arguments, the CLI
and `agenteval.yaml` through `config.resolve_settings`, `EvalSuite.run`, `AgentEvaluator`,
`score_traces`, `rescore`, `judge_run`, the pytest plugin's `@agenteval_cases`) and hands it
to the engine, which plans the run with it and executes the plan (`engine.planning`,
`engine.evaluate`). A setting out of range is refused when the value is built, with the same
`ConfigError` whatever face it came through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from agenteval.agents.environment import EnvironmentPlan
from agenteval.agents.users import UserPlan
from agenteval.engine.executors import EXECUTORS, ExecutorSettings
from agenteval.engine.executors.settings import READ_BY
from agenteval.engine.scheduler import DEFAULT_CONCURRENCY, EngineSettings
from agenteval.errors import ConfigError
from agenteval.mock_errors import explain_mock, written_path
from agenteval.otel.live import DEFAULT_REMOTE_WAIT_S
from agenteval.retry import RetryPolicy
from agenteval.simulation.choice import is_user
from agenteval.store import DEFAULT_STORE_PATH
from agenteval.tool_mocks import MOCK_FIXES, ToolMock
from agenteval.validation import first_problem

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge, JudgeConfig
    from agenteval.pricing import PriceTable
    from agenteval.trace import ToolSpec

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_RETRIES",
    "DEFAULT_STORE_PATH",
    "EVALUATOR_BUILTINS",
    "REPLAY_MATCHES",
    "OptionError",
    "RunOptions",
    "Setting",
    "otlp_base_url",
    "run_tool_mocks",
]

REPLAY_MATCHES: Final = ("in-order", "any-order")
"""How a replay matches the agent's calls to the stored ones (`ReplayBook`)."""

DEFAULT_RETRIES: Final = 2
"""Retries of an infrastructure failure, unless a run says otherwise."""

EVALUATOR_BUILTINS: Final = False
"""Whether the built-in scorers join a run of `EvalSuite` and `AgentEvaluator`: no. Those two
doors report the evaluators (the criteria) they were given and nothing else, as the agent
evaluators' and the criterion API's documentation shows them; `EvalSuite.run(builtins=True)`
adds the built-ins. Every other door (`evaluate`, the CLI, `score_traces`, pytest) runs the
built-ins wherever they apply (`RunOptions.builtins`, True)."""


class OptionError(ConfigError, ValueError):
    """A run setting out of range (`trials=0`, a negative `timeout`): a `ConfigError` like every
    mistake in a setting, and a `ValueError`, as Python's own checks of a value are."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How a run runs and is scored, resolved and checked: the one way settings travel.

    Built from keyword arguments (`RunOptions(trials=3, judge="openai:gpt-4o-mini")`), from
    `agenteval.yaml` and the environment (`agenteval.config.resolve_settings`), or from
    another value (`dataclasses.replace(options, trials=5)`, checked again).
    """

    trials: int = 1
    """Trials per case (each an independent run of the agent)."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Trials in flight at once (for a rescore: trials scored at once)."""
    timeout: float | None = None
    """Seconds per trial attempt; None for no limit."""
    retries: int = DEFAULT_RETRIES
    """Retries of an infrastructure failure (rate limit, connection, provider 5xx, timeout)."""
    builtins: bool = True
    """Whether the built-in scorers run wherever they apply, besides the scorers given."""
    store: Path = DEFAULT_STORE_PATH
    """The SQLite run store (a `str` is taken as a path)."""
    judge: Judge | JudgeConfig | str | None = None
    """The LLM judge: `"provider:model"`, a `JudgeConfig` or a `Judge`; else
    `AGENTEVAL_JUDGE`; None with neither set."""
    rubrics: Sequence[str | Mapping[str, Any]] | None = None
    """The judge rubrics to score with; None for all four when there is a judge."""
    use_cache: bool = True
    """Whether the judge's verdicts are cached (judging the same trial again is free)."""
    prices: PriceTable | None = None
    """Model prices for the run's cost; None for the shipped table."""
    passing: Sequence[str] | None = None
    """The scorers that decide whether a trial passes; None for every scorer that applied."""
    tools: Mapping[str, ToolSpec] | None = None
    """The agent's tools, by name; None for the tools registered with `@agenteval.tool`."""
    infrastructure_errors: Sequence[type[BaseException] | str] = ()
    """Exception classes (or `module:Class` references) that are infrastructure failures
    when an agent raises them: retried, never scored as the agent's own failure."""
    retry_policy: RetryPolicy | None = field(default=None, repr=False)
    """The whole retry policy (waits included), in place of one made from `retries`."""
    base_dir: Path | None = None
    """The folder references (agent, scorers, exception classes) are relative to."""
    otlp_endpoint: str | None = None
    """An OTLP/HTTP endpoint's base URL (`http://localhost:4318`) each score is also sent to,
    as a `gen_ai.evaluation.result` event (`agenteval.otel.results`); None sends nothing."""
    otlp_receiver: int | None = None
    """The port of an OTLP/HTTP receiver on 127.0.0.1 while the run lasts (0: any free one),
    for the spans of agents in other processes; None for none."""
    otlp_wait: float = DEFAULT_REMOTE_WAIT_S
    """With the receiver: seconds a trial waits, after its agent service answered, for the
    service's spans (it stops waiting as soon as they are in)."""
    tool_mocks: Mapping[str, Any] | None = None
    """What tools answer instead of running, for every case (`agenteval.tool_mocks`: a tool's
    rules, one answer or a `sequence`); a case's own mock of a tool wins. Kept as `ToolMock`s."""
    replay_tools: str | None = None
    """A stored, finished run (its id, a unique prefix, or `latest`: the newest finished run
    of the same target) whose recorded tool results answer the tool calls, case by case
    (`engine/replay.py`); None: no replay."""
    replay_match: str = "in-order"
    """How replayed calls match: `in-order` (the stored trial's order) or `any-order`."""
    replay_fallthrough: bool = False
    """A call the replayed run never made runs for real instead of failing the trial."""
    user_simulator: Any = None
    """Who plays the user of cases with a `user_simulation` and no `script`: a model,
    `"provider:model"` or a `JudgeConfig` (`simulation.UserSimulatorConfig`), opened when the
    run is planned; or an object with a `label` and an async `reply(request)`
    (`agents.users.User`); None: scripted users only (a resumed run: the one it stored)."""
    executor: str = "local"
    """Where trials run: `local` (the driver's event loop), `process` (worker processes on
    this machine) or `ray` (a Ray cluster); scoring and the store stay with the driver."""
    workers: int | None = None
    """Worker processes (`process`; default: `concurrency`) or Ray actors (`ray`; default:
    the cluster's CPUs)."""
    ray_address: str | None = None
    """The Ray cluster to run on (`ray`; default `RAY_ADDRESS`, else a local Ray instance)."""
    worker_memory_mb: int | None = None
    """A `process` worker whose resident memory passes this many MB is killed, and its trial
    recorded `worker_crashed`; None: no limit."""

    def __post_init__(self) -> None:
        _check_at_least(self.trials, 1, "trials")
        _check_at_least(self.concurrency, 1, "concurrency")
        if self.timeout is not None and not self.timeout > 0:
            raise OptionError(f"timeout must be positive, got {self.timeout}", field="timeout")
        if self.retries < 0:
            raise OptionError(f"retries must be 0 or more, got {self.retries}", field="retries")
        if self.otlp_receiver is not None and not 0 <= self.otlp_receiver <= 65535:
            raise OptionError(
                f"otlp_receiver must be a port, 0 to 65535, got {self.otlp_receiver}",
                field="otlp_receiver",
            )
        if self.replay_match not in REPLAY_MATCHES:
            raise OptionError(
                f"replay_match (--replay-match) is in-order or any-order, got {self.replay_match!r}",
                field="replay_match",
            )
        if self.replay_tools is None and (
            self.replay_fallthrough or self.replay_match != "in-order"
        ):
            raise OptionError(
                "replay_match and replay_fallthrough (--replay-match, --replay-fallthrough) "
                "apply only to a replay",
                field="replay_tools",
                hint="name the run to replay: --replay-tools RUN_ID (replay_tools=)",
            )
        if not self.otlp_wait >= 0:
            raise OptionError(
                f"otlp_wait must be 0 or more, got {self.otlp_wait}", field="otlp_wait"
            )
        _check_executor(self)
        # Taken as given (a str, a list) and kept in one shape: a path, tuples.
        set_ = object.__setattr__
        set_(self, "store", Path(self.store))
        if self.base_dir is not None:
            set_(self, "base_dir", Path(self.base_dir))
        if self.rubrics is not None:
            set_(self, "rubrics", tuple(self.rubrics))
        if self.passing is not None:
            set_(self, "passing", tuple(self.passing))
        set_(self, "infrastructure_errors", tuple(self.infrastructure_errors))
        if self.otlp_endpoint is not None:
            set_(self, "otlp_endpoint", otlp_base_url(self.otlp_endpoint))
        if self.tool_mocks is not None:
            set_(self, "tool_mocks", run_tool_mocks(self.tool_mocks))
        if isinstance(self.user_simulator, str):  # refused here if not `provider:model`
            from agenteval.simulation.simulator import UserSimulatorConfig

            UserSimulatorConfig(spec=self.user_simulator)
        elif not _simulator_setting(self.user_simulator):
            raise ConfigError(
                f"user_simulator={self.user_simulator!r} is no user simulator",
                field="user_simulator",
                hint="give `provider:model` (e.g. openai:gpt-4o-mini), a UserSimulatorConfig, "
                "or a user object with a `label` and an async `reply(request)`",
            )

    @property
    def judge_cache(self) -> Path:
        """The judge cache lives beside the run store."""
        return self.store.parent / "judge-cache.db"

    def engine_settings(
        self, infrastructure: tuple[type[BaseException], ...] = ()
    ) -> EngineSettings:
        """How the engine runs the trials, with the `infrastructure_errors` classes loaded."""
        return EngineSettings(
            trials=self.trials,
            concurrency=self.concurrency,
            timeout_s=self.timeout,
            retry=self.retry_policy or RetryPolicy(max_retries=self.retries),
            infrastructure=infrastructure,
            remote_wait_s=self.otlp_wait if self.otlp_receiver is not None else None,
            environment=(EnvironmentPlan(tool_mocks=self.tool_mocks) if self.tool_mocks else None),
            # A model named is opened by the planner (`engine.planning`), which puts it here.
            users=UserPlan(
                simulator=self.user_simulator if is_user(self.user_simulator) else None,
                base_dir=self.base_dir,
            ),
            executor=ExecutorSettings(
                self.executor, self.workers, self.ray_address, self.worker_memory_mb
            ),
            base_dir=self.base_dir,
        )


def _check_executor(options: RunOptions) -> None:
    """The executor settings: a known executor, and only the settings it reads."""
    kind = options.executor
    if kind not in EXECUTORS:
        raise OptionError(
            f"executor (--executor) is local, process or ray, got {kind!r}", field="executor"
        )
    _check_at_least(options.workers, 1, "workers")
    _check_at_least(options.worker_memory_mb, 1, "worker_memory_mb")
    for name, readers in READ_BY.items():
        if getattr(options, name) is not None and kind not in readers:
            reads = " and ".join(readers)
            raise OptionError(
                f"{name} applies to the {reads} executor{'s' * (' and ' in reads)}, "
                f"and this run's is {kind}",
                field=name,
                hint=f"name the executor (--executor, executor:), or leave {name} out"
                + ("; trials in flight at once are `concurrency`" if name == "workers" else ""),
            )
    if kind == "process":
        _refuse_in_a_starting_worker()
    if kind != "local" and options.otlp_receiver is not None:
        raise OptionError(
            f"the OTLP receiver (otlp_receiver, --otlp-receiver) works with the local executor "
            f"only, and this run's is {kind}: its workers' spans would not reach their trials",
            field="otlp_receiver",
            hint="run with --executor local, or leave the receiver out",
        )


def _refuse_in_a_starting_worker() -> None:
    """A run on worker processes asked for while this process is a worker importing the
    driver's script (every multiprocessing program's workers do, before they run anything):
    the script calls it with no `if __name__ == "__main__":` guard. Refused here, before a
    run is stored or a pool started in the worker (multiprocessing's own error came from
    deep in the pool, in every worker, and the worker's run was left in the store)."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise OptionError(
            "executor='process' was asked for by a worker process importing the script "
            "that started the run: the script calls it at import",
            field="executor",
            hint="put the script's run under `if __name__ == '__main__':` (each worker "
            "imports the script again, as every multiprocessing program's do)",
        )


def run_tool_mocks(given: Mapping[str, Any]) -> dict[str, ToolMock]:
    """A run's `tool_mocks` as `ToolMock`s, each checked: a mistake is an `OptionError` naming
    the tool and the key as written (`tool_mocks.get_weather.latency_s`; agenteval.yaml adds
    its file and line), with the fix."""
    if not isinstance(given, Mapping):
        message, hint = explain_mock((), [{"type": "dict_type", "input": given}], given)
        raise OptionError(message, field="tool_mocks", hint=hint)
    mocks: dict[str, ToolMock] = {}
    for name, mock in given.items():
        try:
            mocks[str(name)] = ToolMock.model_validate(mock)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            written = {name: mock}
            path = written_path((name, *errors[0]["loc"]), written)
            said = explain_mock(path, [e for e in errors if e["loc"] == errors[0]["loc"]], written)
            message, hint = said or (
                f"the mock of {name!r}: {first_problem(exc)[0]}",
                MOCK_FIXES["mock_shape"],
            )
            field = ".".join(map(str, ("tool_mocks", *path)))
            raise OptionError(message, field=field, hint=hint) from None
    return mocks


def otlp_base_url(url: str) -> str:
    """An OTLP endpoint as the exporters take it: its base URL, `http(s)://host[:port][/path]`,
    without a trailing `/` or a signal's own path (`/v1/logs`, `/v1/traces`), which the
    exporters add. Anything else is an `OptionError` naming the option."""
    from urllib.parse import urlsplit

    text = url.strip().rstrip("/")
    for signal in ("/v1/logs", "/v1/traces"):
        text = text.removesuffix(signal)
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise OptionError(
            f"{_shown_url(url)} is not an http:// or https:// URL",
            field="otlp_endpoint",
            hint="give the OTLP/HTTP endpoint's base URL, e.g. --otlp-endpoint "
            "http://localhost:4318 (or `otlp_endpoint:` in agenteval.yaml)",
        )
    return text


def _shown_url(url: str) -> str:
    """A URL as a message may show it: without credentials (nor its query, which may hold a
    token); one too broken to parse is not echoed."""
    from agenteval.redaction import public_url

    try:
        return repr(public_url(url.strip()))
    except ValueError:
        return "the URL given"


def _check_at_least(value: int | None, least: int, name: str) -> None:
    if value is not None and value < least:
        raise OptionError(f"{name} must be at least {least}, got {value}", field=name)


class Setting:
    """An attribute of a face (`AgentEvaluator`, the pytest plugin's `EvalSpec`) that reads the
    setting of the same name from the face's `options`: `evaluator.trials` is
    `evaluator.options.trials`, kept in one place."""

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, face: Any, owner: type | None = None) -> Any:
        return self if face is None else getattr(face.options, self.name)


def _simulator_setting(value: Any) -> bool:
    """Whether `value` can name a run's user simulator: none, a config, a user object, or the
    mapping a run stored (its `spec`); a spec string is checked apart."""
    from agenteval.judge.settings import JudgeConfig

    if value is None or isinstance(value, JudgeConfig) or is_user(value):
        return True
    return isinstance(value, Mapping) and isinstance(value.get("spec"), str)
