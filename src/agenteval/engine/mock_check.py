"""A run's tool mocks checked before any trial runs: against the agent's tools, when the run
knows them, and (resuming a stored run) that each function a mock answers with loads again.

A mock of a tool the agent does not have, or a `when` on an argument its tool does not take,
would never answer: the case would quietly test the real tool (or fail as unmocked). So it is
refused up front, naming the tool meant. The run knows the agent's tools from `tools=` (the run
option), a framework agent's `tool_specs()`, the built-in agent's tools, or the
`@agenteval.tool` registry of a plain callable; it does not know a plain callable's when it
declares none, nor a framework agent's when its adapter reads none (tools hidden inside a
graph's own nodes): then nothing is said (a mock of a tool never called simply never answers).
An HTTP agent's tools run in its service, where no mock or replay can answer: a run of one with
mocks, a replay or environment state is refused (`_refused_for_service`). A framework agent
whose framework adds tools only while it runs (MCP servers, toolsets, tools the agent makes:
`FrameworkAgent.tools_complete()`) has a mock of a tool it does not list let through, and a
`when` on a listed tool still checked. Cases streamed from a generator are checked as they
stream into the store, before the first trial. The check is a few dictionary look-ups per mocked tool; a case without
mocks costs one attribute read.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agenteval.agents.builtin import BuiltinAgent
from agenteval.agents.frameworks import FrameworkAgent
from agenteval.agents.http import HttpAgent
from agenteval.agents.tools import known_tools
from agenteval.case import EvalCase
from agenteval.casefiles.locate import find_record
from agenteval.casefiles.positions import dotted
from agenteval.engine.options import OptionError, RunOptions
from agenteval.errors import DatasetError
from agenteval.loading import load_object
from agenteval.tool_mocks import CALLABLE_KEY, ToolMock
from agenteval.trace import ToolSpec
from agenteval.yaml_syntax import file_key_line

__all__ = ["agent_tools", "check_resumable", "checked_mocks"]

_CONFIG_NAMES = ("agenteval.yaml", "agenteval.yml")


def agent_tools(agent: Any, options: RunOptions) -> Mapping[str, ToolSpec] | None:
    """The agent's tools, by name, when the run knows them (see the module); else None."""
    if isinstance(agent, FrameworkAgent):
        # The adapter's own listing, whatever `tools=` says (it describes schemas for the
        # scorers): a mock of a tool the adapter cannot reach would never answer, and the real
        # tool would run. None when the adapter reads none and may not list them all.
        specs = agent.tool_specs()
        return specs if specs or agent.tools_complete() else None
    if options.tools is not None:
        return options.tools
    if agent is None or isinstance(agent, HttpAgent):
        return None
    if isinstance(agent, BuiltinAgent):
        return {spec.name: spec for spec in agent.tool_specs}
    return known_tools() or None  # a plain callable: its `@agenteval.tool`s, if it has any


def checked_mocks(
    cases: Iterable[EvalCase], agent: Any, options: RunOptions, source: Any = None
) -> Iterable[EvalCase]:
    """`cases`, their mocks and the run's checked against the agent's tools (a stream: as it
    is read, its functions given as results checked to load again). Raises `DatasetError`
    for a case's mock (file, line, case), `OptionError` for the run's (agenteval.yaml's line,
    or the `tool_mocks` option)."""
    file = str(source) if isinstance(source, str | Path) else None
    if isinstance(agent, HttpAgent):
        return _refused_for_service(cases, options, file)
    mocked = options.tool_mocks or not isinstance(cases, Sequence)
    if not mocked and not any(case.tool_mocks for case in cases):
        return cases  # nothing to check: the agent's tools are not even asked for
    tools = _Tools(agent, options)
    if options.tool_mocks and tools.known is not None:
        _check_run(options, tools.known, open_ended=tools.open, unreachable=tools.unreachable)
    if not isinstance(cases, Sequence):  # read back from the store: functions by reference
        return _checking(cases, tools, file)
    if tools.known is not None:
        for case in cases:
            if case.tool_mocks:
                _check_case(
                    case, tools.known, file, open_ended=tools.open, unreachable=tools.unreachable
                )
    return cases


_SERVICE = (
    "an HTTP agent's tools run in its service, where agenteval's tool mocks, replay and "
    "environment state cannot reach them: the real tools would run and the case would test a "
    "scenario that never played"
)
_SERVICE_HINT = (
    "run these cases against the agent's code in this process (agent: my_agent.py:run), or "
    "leave {what} out for the HTTP agent"
)


def _refused_for_service(
    cases: Iterable[EvalCase], options: RunOptions, file: str | None
) -> Iterable[EvalCase]:
    """`cases` as given, for an HTTP agent: a `ConfigError` for the run's mocks or replay, a
    `DatasetError` naming the first case that mocks tools (a stream: as it streams in)."""
    for what, given in (
        ("tool_mocks", options.tool_mocks),
        ("--replay-tools", options.replay_tools),
    ):
        if given:
            raise OptionError(
                _SERVICE,
                field=what.removeprefix("--").replace("-", "_"),
                hint=_SERVICE_HINT.format(what=what),
            )
    if isinstance(cases, Sequence):
        for case in cases:
            _refuse_case(case, file)
        return cases
    return _refusing(cases, file)


def _refusing(cases: Iterable[EvalCase], file: str | None) -> Iterator[EvalCase]:
    for case in cases:
        _refuse_case(case, file)
        yield case


def _refuse_case(case: EvalCase, file: str | None) -> None:
    fields = {
        "tool_mocks": bool(case.tool_mocks),
        "tool_mocks_only": case.tool_mocks_only,
        # Its tools cannot reach the trial's state either: `state_match` would compare the
        # case's own initial state with its expectation.
        "initial_state": case.initial_state is not None,
        "expected_state": case.expected_state is not None,
    }
    field = next((name for name, given in fields.items() if given), None)
    if field is None:
        return
    record = find_record(file, case.id) if file is not None else None
    line = record.where.line((field,)) if record is not None else None
    raise DatasetError(
        _SERVICE,
        file=file,
        line=line,
        case=case.id,
        field=field,
        hint=_SERVICE_HINT.format(what=f"the case's `{field}`"),
    )


def more_tools_possible(agent: Any, options: RunOptions) -> bool:
    """Whether the agent may call tools `agent_tools` does not list: a framework agent whose
    framework adds tools only while it runs (MCP servers, toolsets, tools made by the agent).
    A mock of a tool not listed is then not refused (it may be one of those); a `when` on a
    listed tool is still checked."""
    del options  # a framework agent's own listing decides, whatever `tools=` says
    return isinstance(agent, FrameworkAgent) and not agent.tools_complete()


class _Tools:
    """The agent's tools, asked for once, when a mock first needs them."""

    def __init__(self, agent: Any, options: RunOptions) -> None:
        self._agent, self._options = agent, options
        self._asked = False
        self._known: Mapping[str, ToolSpec] | None = None
        self.open = more_tools_possible(agent, options)
        self.unreachable = agent.unreachable_tools() if isinstance(agent, FrameworkAgent) else {}

    @property
    def known(self) -> Mapping[str, ToolSpec] | None:
        if not self._asked:
            self._known, self._asked = agent_tools(self._agent, self._options), True
        return self._known


def _check_run(
    options: RunOptions,
    tools: Mapping[str, ToolSpec],
    *,
    open_ended: bool = False,
    unreachable: Mapping[str, str] | None = None,
) -> None:
    for name, mock in (options.tool_mocks or {}).items():
        problem = _problem(name, mock, tools, open_ended=open_ended, unreachable=unreachable)
        if problem is not None:
            raise _run_error(name, problem, options)


def _checking(cases: Iterable[EvalCase], tools: _Tools, file: str | None) -> Iterator[EvalCase]:
    """A stream, checked as it streams into the store (before the first trial). Its cases
    run as read back from the store, so a function given as a mock's result must load again
    by its reference, as on a resume."""
    for case in cases:
        if case.tool_mocks:
            if tools.known is not None:
                _check_case(
                    case, tools.known, file, open_ended=tools.open, unreachable=tools.unreachable
                )
            for name, mock in case.tool_mocks.items():
                _loads(name, mock, case.id, resuming=False)
        yield case


@dataclass(frozen=True)
class _Problem:
    """What is wrong with one tool's mock, and the fix: the tool is unknown, or (`argument`
    given) the `when` of its rule number `rule` names an argument the tool does not take."""

    message: str
    hint: str
    rule: int | None = None
    argument: str | None = None


def _problem(
    name: str,
    mock: ToolMock,
    tools: Mapping[str, ToolSpec],
    *,
    open_ended: bool = False,
    unreachable: Mapping[str, str] | None = None,
) -> _Problem | None:
    spec = tools.get(name)
    whose = (unreachable or {}).get(name)
    if spec is None and whose is not None:
        return _Problem(
            f"the mock of {name!r} cannot answer: {name} is a tool of {whose}, which runs its "
            "own tools where agenteval does not answer for them (the real tool would run)",
            "mock the tool that calls it instead (the agent-as-a-tool itself), or give the "
            "agent the tool directly",
        )
    if spec is None and open_ended:  # a tool the framework adds only while it runs, maybe
        return None
    if spec is None:
        close = difflib.get_close_matches(name, list(tools), n=1)
        known = _listed(sorted(tools))
        if close:
            return _Problem(
                f"the mock of {name!r} names no tool of the agent — did you mean {close[0]!r}?",
                f"rename {name!r} to {close[0]!r}",
            )
        return _Problem(
            f"the mock of {name!r} names no tool of the agent (its tools: {known})",
            "mock one of the agent's tools, or remove this mock (a plain Python agent's tool "
            "that is not `@agenteval.tool` is named by the run's `tools=`; a framework agent's "
            "tools are those it declares: a tool of an agent it calls inside a tool, such as "
            "an ADK AgentTool or an OpenAI `as_tool`, cannot be mocked from outside)",
        )
    accepted = _arguments(spec)
    if accepted is None:
        return None
    for index, rule in enumerate(mock.rules or ()):
        for argument in rule.when or {}:
            if argument in accepted:
                continue
            close = difflib.get_close_matches(argument, sorted(accepted), n=1)
            takes = _listed(sorted(accepted))
            if close:
                return _Problem(
                    f"the mock of {name!r} has a `when` on {argument!r}, which {name} does not "
                    f"take — did you mean {close[0]!r}?",
                    f"rename {argument!r} to {close[0]!r}",
                    index,
                    argument,
                )
            return _Problem(
                f"the mock of {name!r} has a `when` on {argument!r}, which {name} does not take "
                f"(its arguments: {takes})",
                "name one of the tool's arguments in `when`",
                index,
                argument,
            )
    return None


def _listed(names: Sequence[str], shown: int = 12) -> str:
    if not names:
        return "none"
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _arguments(spec: ToolSpec) -> set[str] | None:
    """The argument names the tool's schema lists; None when it takes any (no list of
    properties, or `additionalProperties` allowed)."""
    schema = spec.parameters
    properties = schema.get("properties")
    if not isinstance(properties, dict) or schema.get("additionalProperties") not in (None, False):
        return None
    return set(properties)


def _check_case(
    case: EvalCase,
    tools: Mapping[str, ToolSpec],
    file: str | None,
    *,
    open_ended: bool = False,
    unreachable: Mapping[str, str] | None = None,
) -> None:
    for name, mock in (case.tool_mocks or {}).items():
        problem = _problem(name, mock, tools, open_ended=open_ended, unreachable=unreachable)
        if problem is None:
            continue
        path: tuple[str | int, ...] = ("tool_mocks", name)
        line = None
        record = find_record(file, case.id) if file is not None else None
        if record is not None:
            path = _written(record.data, name, problem)
            line = record.where.line(path)
        else:  # cases built in Python: as the mock is written back
            path = _written({"tool_mocks": {name: mock.model_dump(mode="json")}}, name, problem)
        raise DatasetError(
            problem.message,
            file=file,
            line=line,
            case=case.id,
            field=dotted(path),
            hint=problem.hint,
        )


def _written(data: Any, name: str, problem: _Problem) -> tuple[str | int, ...]:
    """Where the problem is in the case as written: a tool's one rule has no index."""
    path: tuple[str | int, ...] = ("tool_mocks", name)
    if problem.argument is None:
        return path
    written = data.get("tool_mocks", {}).get(name) if isinstance(data, dict) else None
    rule: tuple[str | int, ...] = (problem.rule or 0,) if isinstance(written, list) else ()
    return (*path, *rule, "when", problem.argument)


def _run_error(name: str, problem: _Problem, options: RunOptions) -> OptionError:
    for config in _config_files(options):
        declared = _declared_mocks(config)
        if name in declared:  # the run's mocks are the ones agenteval.yaml declares
            path = _written({"tool_mocks": declared}, name, problem)
            line = file_key_line(config, *map(str, path))
            return OptionError(
                problem.message, file=config, line=line, field=dotted(path), hint=problem.hint
            )
    mock = (options.tool_mocks or {})[name]
    path = _written({"tool_mocks": {name: mock.model_dump(mode="json")}}, name, problem)
    return OptionError(problem.message, field=dotted(path), hint=problem.hint)


def _config_files(options: RunOptions) -> list[Path]:
    if options.base_dir is None:
        return []
    return [path for name in _CONFIG_NAMES if (path := options.base_dir / name).is_file()]


def _declared_mocks(config: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    mocks = data.get("tool_mocks") if isinstance(data, dict) else None
    return mocks if isinstance(mocks, dict) else {}


def check_resumable(cases: Iterable[EvalCase], run_mocks: Mapping[str, ToolMock] | None) -> None:
    """Resuming a stored run: each function a mock answers with (stored by its reference)
    loads again; one that cannot (a lambda, a function defined inside another) is one
    `DatasetError` naming the case (or the run's `tool_mocks`) and the fix."""
    for name, mock in (run_mocks or {}).items():
        _loads(name, mock, None)
    for case in cases:
        for name, mock in (case.tool_mocks or {}).items():
            _loads(name, mock, case.id)


_AGAIN = {
    True: ("to resume the run", "and start the run again"),
    False: ("as the stream's cases run from the store", "or give the cases as a list"),
}


def _loads(name: str, mock: ToolMock, case: str | None, resuming: bool = True) -> None:
    for answer in (*(mock.rules or ()), *(mock.sequence or ())):
        result = answer.result
        if not (isinstance(result, dict) and set(result) == {CALLABLE_KEY}):
            continue
        ref = str(result[CALLABLE_KEY])
        try:
            load_object(ref)
        except Exception as exc:  # any import or attribute error: the reference is stale
            why = (
                "a lambda"
                if "<lambda>" in ref
                else "a function defined inside another"
                if "<locals>" in ref
                else str(exc).splitlines()[0]
            )
            when, then = _AGAIN[resuming]
            whose = "the mock" if case is not None else "the run's mock"
            raise DatasetError(
                f"{whose} of {name!r} answers with the function {ref}, which cannot be loaded "
                f"again {when} ({why})",
                case=case,
                field=f"tool_mocks.{name}",
                hint="define the function at the top level of a module (so `module:name` loads "
                f"it), {then}",
            ) from None
