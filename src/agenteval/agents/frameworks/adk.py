"""Google ADK agents (google-adk 2.x: `Agent` / `LlmAgent`, the workflow agents, any custom
`BaseAgent`) run by agenteval: one fresh ADK session per trial, every user turn of the case in
it, and the trial read from the session's events.

What is read, and from where:
- tool calls and results: the events' `function_call` / `function_response` parts, paired by
  their ids (so parallel calls pair up); a tool that raises: ADK 2.13 lets the exception out of
  `Runner.run_async` (after an event carrying `error_code`), so the trial fails, and the call
  that raised keeps the error (seen by a plugin's `on_tool_error_callback`, which knows the
  call's id) along with every call made before;
- model calls: each event's `usage_metadata`, priced by the model of the agent that wrote the
  event;
- the answer: each turn's last final response with text (`is_final_response()`);
- node visits: the agents that wrote events, and the targets of `transfer_to_agent`;
- the session state at the end, under `metadata["session_state"]`, so
  `final_session_state_match` applies; it is also the trial's environment state
  (`Trial.state`, `agenteval.state()` in a tool), and the case's `initial_state` seeds it;
- tool mocks, injected failures and replayed answers: the trial's plugin answers a call in the
  tool's place (`adk_environment.py`);
- tool schemas: ADK's own declarations of each agent's tools (`LlmRequest.append_tools`, public
  API), the sub-agents' included, and of `transfer_to_agent` where an agent can transfer; and,
  during the run, the declarations each model call is offered (a plugin's
  `before_model_callback`), which add the tools of toolsets (MCP, OpenAPI), listed only then.

ADK is imported only inside functions: importing agenteval imports no framework.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Self

from agenteval.agents.frameworks.adk_environment import ToolAnswerer, trial_answerer
from agenteval.agents.frameworks.adk_tools import (
    agents_of,
    declared_tools,
    model_name,
    requested_tools,
    tool_agents,
)
from agenteval.agents.frameworks.base import (
    Conversation,
    FrameworkAgent,
    TrialBuilder,
    conversation,
)
from agenteval.agents.tools import error_text
from agenteval.case import EvalCase, Message
from agenteval.errors import AgentLoadError
from agenteval.jsonsafe import plain_copy
from agenteval.trace import Failure, FailureCause, ToolSpec, Trial, Usage

if TYPE_CHECKING:
    from google.adk.events import Event
    from google.adk.sessions import BaseSessionService

__all__ = ["DEFAULT_APP_NAME", "DEFAULT_USER_ID", "AdkAgent"]

SESSION_INPUT = "session_input"
"""`EvalCase.metadata` key of a case's ADK `session_input` (app_name, user_id, state). The
same literal as `agenteval.casefiles.adk_keys.SESSION_INPUT`, which `agents/` may not import
(the layers keep `agents` and `casefiles` apart); a test holds them equal."""

SESSION_STATE = "session_state"
"""`Trial.metadata` key of the session state at the end of the trial, the one
`agenteval.evalset.session.SESSION_STATE` reads (a layer above: a test holds them equal)."""

DEFAULT_APP_NAME = "EvaluationGenerator"
"""The app name of a case that gives none: ADK's own evaluator's, so an agent plays a case as
it does under `adk eval`."""

DEFAULT_USER_ID = "test_user_id"
"""The user id of a case that gives none (ADK's evaluator's, as the app name)."""

_RUNNER_APP = "agenteval"
"""The name of the `App` wrapping the agent (ADK checks it as an identifier); the session's app
name, which may be any text, overrides it in the runner."""


_RUN_MODULES = (
    "google.adk.apps:App",
    "google.adk.artifacts:InMemoryArtifactService",
    "google.adk.events:Event",
    "google.adk.flows.llm_flows.auto_flow",  # the LLM agents' flow, loaded on first use
    "google.adk.memory:InMemoryMemoryService",
    "google.adk.models.google_llm",
    "google.adk.models.llm_request",
    "google.adk.plugins:BasePlugin",
    "google.adk.runners:Runner",
    "google.adk.sessions:InMemorySessionService",
    "google.adk.workflow:Workflow",
    "google.genai.types",
    "agenteval.providers.google",
)
"""What a trial imports (`module:attribute` for a name a package loads on first use)."""


def _quiet_unconfigured_logs() -> None:
    """ADK logs a tool's exception with its traceback before letting it out of the runner;
    with no logging configured, Python prints that on stderr (its last-resort handler), over
    the run's progress, for a failure the trial already records. A `NullHandler` on ADK's
    logger, what the logging docs ask of a library, stops only that last resort: handlers a
    user configured still get ADK's records."""
    adk_logger = logging.getLogger("google_adk")
    if not any(isinstance(h, logging.NullHandler) for h in adk_logger.handlers):
        adk_logger.addHandler(logging.NullHandler())


@dataclass(frozen=True)
class SessionInput:
    """The session a case starts in: ADK's `session_input` (app name, user id, initial state),
    defaults where the case gives none. The session id is always agenteval's own, unique per
    trial (so concurrent trials of one case never meet in one session)."""

    app_name: str = DEFAULT_APP_NAME
    user_id: str = DEFAULT_USER_ID
    state: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, case: EvalCase, app_name: str = DEFAULT_APP_NAME) -> SessionInput:
        """The case's session input (`case.metadata["session_input"]`), checked; `app_name`
        where the case names no app."""
        given = case.metadata.get(SESSION_INPUT)
        if given is None:
            return cls(app_name=app_name)
        if not isinstance(given, dict):
            raise ValueError(
                f"case {case.id!r}: session_input must be a mapping "
                '{"app_name": ..., "user_id": ..., "state": {...}}'
            )
        state = given.get("state") or {}
        if not isinstance(state, dict):
            raise ValueError(f"case {case.id!r}: session_input.state must be a mapping")
        copied, _ = plain_copy(state)
        return cls(
            app_name=str(given.get("app_name") or app_name),
            user_id=str(given.get("user_id") or DEFAULT_USER_ID),
            state=dict(copied),
        )


_NO_USAGE = (
    "ADK's model response carried no usage_metadata (a model that reports none, such as a "
    "LiteLlm model whose provider left usage out), so what the call cost is unknown"
)


def _plugin(reader: _EventReader) -> Any:
    """The trial's runner plugin. It notes which call each tool exception belongs to (its
    function call id), and the tools each model call is offered (a toolset's tools are listed
    only then). With the trial's tool environment (`adk_environment.py`) it answers a mocked
    or replayed call in the tool's place and keeps the environment state and the session's one;
    otherwise each callback returns None, so ADK goes on as it would."""
    from google.adk.plugins import BasePlugin

    answerer = reader.answerer

    class AgentevalRecorder(BasePlugin):
        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            for spec in requested_tools(llm_request):
                reader.builder.declare(spec)
                if answerer is not None:
                    answerer.specs.setdefault(spec.name, spec)

        async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
            # An agent used as a tool (`AgentTool`) runs in a session of its own, with the
            # runner's plugins, this one included: its model calls are in no event of the
            # trial's session, and are the trial's spending all the same. In the trial's own
            # session the events count the calls (`_EventReader`), except a response without
            # usage_metadata, whose event the events' count skips: it is counted here.
            session = getattr(callback_context, "session", None)
            own = reader.session_id is None or getattr(session, "id", None) == reader.session_id
            usage = getattr(llm_response, "usage_metadata", None)
            if getattr(llm_response, "partial", False) or (own and usage is not None):
                return
            from agenteval.providers.google import usage as read_usage

            name = callback_context.agent_name
            model = reader.models.get(name) or llm_response.model_version or "unknown"
            if usage is None:
                reader.builder.model_call(model, Usage(), unrecorded=_NO_USAGE)
            else:
                reader.builder.model_call(model, read_usage(usage) or Usage())

        async def before_tool_callback(
            self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
        ) -> Any:
            if answerer is None:
                return None
            return await answerer.before_tool(tool, tool_args, tool_context)

        async def after_tool_callback(
            self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: Any
        ) -> None:
            if answerer is not None:  # what the tool wrote in agenteval.state(), as its delta
                answerer.mirror.push(tool_context.state)

        async def on_tool_error_callback(
            self, *, tool: Any, tool_args: Any, tool_context: Any, error: Exception
        ) -> None:
            call_id = getattr(tool_context, "function_call_id", None)
            # A call cancelled under a timeout raised nothing of its own: the trial says why.
            if call_id and not isinstance(error, asyncio.CancelledError):
                reader.tool_errors[str(call_id)] = error_text(error)
            if answerer is not None:
                answerer.mirror.push(tool_context.state)

    return AgentevalRecorder(name="agenteval_recorder")


_SET_MODEL_RESPONSE = "set_model_response"
"""The tool ADK gives an agent with an `output_schema` and tools to answer through: its
response is the validated answer, or `{"error": ...}` for the model to retry."""


def _reports_error(response: Any) -> bool:
    return isinstance(response, Mapping) and bool(response.get("error"))


@dataclass
class _EventReader:
    """Reads one trial's events into its builder (one reader per trial: nothing shared)."""

    builder: TrialBuilder
    models: dict[str, str | None]
    """Each agent's model name, by agent name, for pricing its model calls."""
    answerer: ToolAnswerer | None = None
    """The trial's tool environment at work (mocks, replay, state), when it has one."""
    session_id: str | None = None
    """The trial's session (an agent used as a tool runs in another)."""
    tool_errors: dict[str, str] = field(default_factory=dict)
    ended_with: str | None = None
    """The error code and message of the last event of the run, when ADK ended a turn on one
    (a response the model refused or cut, `error_code` set, nothing raised)."""

    def read(self, event: Event) -> None:
        if event.partial:  # streamed pieces: the whole response follows (and is what ADK keeps)
            return
        self.ended_with = (
            f"{event.error_code}: {event.error_message or ''}".rstrip(": ")
            if event.error_code
            else None
        )
        author = event.author or ""
        if author and author != "user":
            self.builder.visit(author)
        usage = event.usage_metadata
        if usage is not None and author != "user":
            from agenteval.providers.google import usage as read_usage

            model = self.models.get(author) or event.model_version or "unknown"
            self.builder.model_call(model, read_usage(usage) or Usage())
        for part in (event.content.parts or ()) if event.content else ():
            if part.function_call is not None:
                call = part.function_call
                self.builder.call(call.name or "", call.args, call.id)
            elif part.function_response is not None:
                response = part.function_response
                error = self.tool_errors.pop(response.id or "", None)
                result = response.response
                if response.name == _SET_MODEL_RESPONSE and not _reports_error(result):
                    # The structured answer itself (`output_schema` with tools), no tool's
                    # result: read as one, the answer would be "found" in what it says.
                    result = None
                recorded = self.builder.result(response.id, result, name=response.name)
                if recorded is not None and error is not None:
                    recorded.error = error  # the tool raised; a callback answered the model
        target = event.actions.transfer_to_agent if event.actions else None
        if target:
            self.builder.visit(target)
        if event.is_final_response() and event.content and event.content.parts:
            text = "".join(
                part.text for part in event.content.parts if part.text and not part.thought
            )
            if text:
                self.builder.answer(text)

    def note_error(self, call_id: str, error: BaseException) -> None:
        """The exception the call `call_id` raised (or a mock raised in its place)."""
        self.tool_errors[call_id] = error_text(error)

    def failed(self) -> None:
        """The run raised: a tool's exception goes to the call that raised it."""
        for call_id, error in list(self.tool_errors.items()):
            self.builder.result(call_id, error=error)
            del self.tool_errors[call_id]


class AdkAgent(FrameworkAgent):
    """A Google ADK agent (any `BaseAgent`) as agenteval runs it.

    Each trial gets its own `InMemorySessionService`, artifact and memory services, runner and
    session (a unique id), so concurrent trials share nothing but the agent object, which ADK
    keeps free of per-session state. A case's `session_input` sets the session's app name,
    user id and initial state. A case given as a list of messages starts with the earlier
    messages as the session's events (user messages as the user's, assistant messages as the
    root agent's); a system message has no place in an ADK session and is refused.

    `session_service`: what makes each trial's session service (default
    `InMemorySessionService`); a test passes its own to read ADK's sessions afterwards.
    """

    framework: ClassVar[str] = "adk"

    def __init__(
        self, agent: Any, *, session_service: Callable[[], BaseSessionService] | None = None
    ) -> None:
        from google.adk.apps import App

        # An `App` runs as ADK runs it (its plugins, its context cache and compaction
        # settings, its name as the sessions' app); its root agent is the agent.
        self.app: Any = agent if isinstance(agent, App) else None
        super().__init__(agent.root_agent if self.app is not None else agent)
        _quiet_unconfigured_logs()
        # Imported now, once per run: imported by the first trial, they held the event loop
        # for a second, under that trial's time limit.
        for name in _RUN_MODULES:
            module, _, attribute = name.partition(":")
            loaded = importlib.import_module(module)
            if attribute:
                getattr(loaded, attribute)
        self._session_service = session_service
        # Now, before any trial: the first declaration builds ADK's request models (half a
        # second), which under a trial would count against its time limit.
        self._specs = declared_tools(self.agent)

    @classmethod
    def of(cls, agent: Any) -> Self:
        """The adapter of an ADK agent or `App`; any other ADK object (a tool, a runner) is
        refused with what to pass instead."""
        from google.adk.agents import BaseAgent
        from google.adk.apps import App

        if isinstance(agent, BaseAgent | App):
            return cls(agent)
        kind = type(agent).__name__
        root = getattr(agent, "agent", None)
        hint = (
            f"pass its agent ({kind}.agent) instead"
            if isinstance(root, BaseAgent)
            else "pass an ADK agent (an Agent / LlmAgent, a workflow agent, a BaseAgent) or an App"
        )
        raise AgentLoadError(
            f"the ADK object given as the agent is a {kind}, not an agent", hint=hint
        )

    @property
    def name(self) -> str:
        if self.app is not None:
            return str(self.app.name)
        return str(getattr(self.agent, "name", "") or type(self.agent).__name__)

    def tool_specs(self) -> dict[str, ToolSpec]:
        return dict(self._specs)

    def tools_complete(self) -> bool:
        # A toolset (MCP, OpenAPI, ...) lists its tools only when a run asks it.
        from google.adk.tools.base_toolset import BaseToolset

        return not any(
            isinstance(tool, BaseToolset)
            for agent in agents_of(self.agent)
            for tool in getattr(agent, "tools", ())
        )

    def unreachable_tools(self) -> dict[str, str]:
        # An AgentTool runs its agent in a runner of its own, which agenteval does not record:
        # a mock of that agent's tool would not be recorded, or would not answer at all.
        from google.adk.tools.agent_tool import AgentTool

        unreachable: dict[str, str] = {}
        for agent in agents_of(self.agent):
            for tool in getattr(agent, "tools", ()):
                if isinstance(tool, AgentTool):
                    for name in declared_tools(tool.agent):
                        unreachable.setdefault(name, f"the agent inside AgentTool {tool.name!r}")
        return unreachable

    async def run_case(self, case: EvalCase) -> Trial:
        talk = conversation(case)
        session_input = SessionInput.of(
            case, self.app.name if self.app is not None else DEFAULT_APP_NAME
        )
        history = _history(talk, str(getattr(self.agent, "name", "")), case)
        builder = TrialBuilder(talk, self.tool_specs())
        models = {a.name: model_name(a) for a in [*agents_of(self.agent), *tool_agents(self.agent)]}
        reader = _EventReader(builder, models)
        reader.answerer = trial_answerer(self.tool_specs(), reader.note_error)
        if case.initial_state:
            # The case's environment state seeds the session beside session_input's state,
            # and wins on a key both give: it is the start `expected_state` is checked from.
            copied, _ = plain_copy(case.initial_state)
            session_input = replace(session_input, state={**session_input.state, **copied})
        with builder.kept_on_failure():
            await self._play(talk, session_input, history, reader)
        trial = builder.build()
        if reader.ended_with is not None and not (trial.output or "").strip():
            # Not the engine's bare "no answer": why ADK ended the turn without one.
            trial.failure = Failure(
                cause=FailureCause.NO_RESPONSE,
                message=f"ADK ended the turn without an answer: {reader.ended_with}",
            )
        return trial

    async def _play(
        self,
        talk: Conversation,
        session_input: SessionInput,
        history: list[Event],
        reader: _EventReader,
    ) -> None:
        from google.adk.apps import App
        from google.adk.artifacts import InMemoryArtifactService
        from google.adk.memory import InMemoryMemoryService
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        service = self._session_service() if self._session_service else InMemorySessionService()
        if self.app is not None:  # the user's App, with the trial's plugin after its own
            app = self.app.model_copy(update={"plugins": [*self.app.plugins, _plugin(reader)]})
        else:
            app = App(name=_RUNNER_APP, root_agent=self.agent, plugins=[_plugin(reader)])
        runner = Runner(
            app=app,
            app_name=session_input.app_name,
            session_service=service,
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
        )
        # No `runner.close()`: it closes the agent's toolsets (an MCP server's connection),
        # which the agent shares with the trials still running; the runner's own services
        # are in memory and go with it.
        session = await service.create_session(
            app_name=session_input.app_name,
            user_id=session_input.user_id,
            state=session_input.state,
            session_id=f"agenteval-{uuid.uuid4().hex}",
        )
        reader.session_id = session.id
        for event in history:
            await service.append_event(session, event)
        answerer = reader.answerer
        if answerer is not None:
            answerer.mirror.seed(session.state)
        async for turn in talk.play(reader.builder):
            message = types.Content(role="user", parts=[types.Part(text=turn)])
            try:
                async for event in runner.run_async(
                    user_id=session_input.user_id, session_id=session.id, new_message=message
                ):
                    reader.read(event)
            except BaseException as raised:
                reader.failed()
                if answerer is not None and isinstance(raised, Exception):
                    answerer.mirror.seed(await _session_state(service, session))
                    escaped = answerer.unwrapped(raised)
                    if escaped is not None and escaped is not raised:
                        # What ADK lets out for a tool that raises, not its plugin wrapper.
                        raise escaped.with_traceback(escaped.__traceback__) from None
                raise
        state = await _session_state(service, session)
        if answerer is not None:
            answerer.mirror.seed(state)
        reader.builder.metadata(SESSION_STATE, state)


async def _session_state(service: BaseSessionService, session: Any) -> dict[str, Any]:
    """The session's state as stored now (a plain copy)."""
    ended = await service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id
    )
    state, _ = plain_copy(dict(ended.state) if ended is not None else {})
    return dict(state)


def _history(talk: Conversation, root: str, case: EvalCase) -> list[Event]:
    """The messages before the first turn as session events (ADK keeps a conversation as its
    session's events: the user's, and the agents' under their names)."""
    if not talk.history:
        return []
    from google.adk.events import Event
    from google.genai import types

    events: list[Event] = []
    for message in talk.history:
        events.append(_history_event(Event, types, message, root, case))
    return events


def _history_event(event_type: Any, types: Any, message: Message, root: str, case: EvalCase) -> Any:
    if message.role == "user":
        author, role = "user", "user"
    elif message.role == "assistant":
        author, role = root, "model"
    else:
        raise ValueError(
            f"case {case.id!r}: an ADK session has no place for a {message.role!r} message "
            "before the first turn: put it in the agent's instruction, or drop it from the "
            "case's input"
        )
    return event_type(
        author=author,
        invocation_id=f"agenteval-history-{uuid.uuid4().hex}",
        content=types.Content(role=role, parts=[types.Part(text=message.content)]),
    )
