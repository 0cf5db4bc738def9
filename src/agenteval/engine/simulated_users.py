"""The run's simulated users, decided before the first trial: whether every case can be
played (`check_players`), the simulator an ADK eval set names when the run names none
(`with_named_simulator`), the run's simulator opened into the engine's settings
(`with_users`), and closed when the plan cannot be made (`planned_with`). `plan_new` and
`plan_resume` (`engine/planning.py`) call them in that order; recorded trials play no user."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from agenteval.agents.users import UserPlan
from agenteval.case import EvalCase
from agenteval.engine.options import RunOptions
from agenteval.engine.plans import planned
from agenteval.engine.scheduler import EngineSettings
from agenteval.errors import ConfigError
from agenteval.simulation.choice import SimulatorChoice, choose_user_simulator

if TYPE_CHECKING:
    from agenteval.judge.choice import JudgeChoice

__all__ = ["check_players", "planned_with", "with_named_simulator", "with_users"]

T = TypeVar("T")


def check_players(cases: Iterable[EvalCase], simulator: Any) -> None:
    """Before the run starts: a case whose user is simulated by the run's model (a
    `user_simulation` without a `script`) needs the run to have a simulator. One
    `ConfigError`, naming the first such case and the fix. (A stream of cases is checked as
    each case is met, by the trial that plays it.)"""
    if simulator is not None:
        return
    unplayed = [
        case.id
        for case in cases
        if case.user_simulation is not None and case.user_simulation.script is None
    ]
    if not unplayed:
        return
    more = f" (and {len(unplayed) - 1} more)" if len(unplayed) > 1 else ""
    raise ConfigError(
        f"case {unplayed[0]!r}{more} simulates its user (a user_simulation with a goal and no "
        "script) and the run has no user simulator",
        case=unplayed[0],
        field="user_simulation",
        hint="give the run one: `user_simulator: openai:gpt-4o-mini` in agenteval.yaml, "
        "--user-simulator PROVIDER:MODEL, or evaluate(user_simulator=...); or give the case a "
        "scripted user (`script: module:function`)",
    )


def with_named_simulator(options: RunOptions, cases: Sequence[EvalCase]) -> RunOptions:
    """`options` with the simulator the cases name (an ADK eval set's
    `user_simulator_config.model`, kept as `extra["model"]`) when the run names none: the file
    says which model plays its users, as ADK would run it. The run's own setting wins; cases
    naming different models are refused (a run has one simulator)."""
    if options.user_simulator is not None:
        return options
    named: dict[str, str] = {}  # each model named, and the first case naming it
    for case in cases:
        if (
            case.user_simulation is not None
            and case.user_simulation.script is None
            and isinstance(model := case.user_simulation.extra.get("model"), str)
        ):
            named.setdefault(model, case.id)
    if not named:
        return options
    from agenteval.simulation.simulator import UserSimulatorConfig

    for model, case_id in named.items():
        try:
            UserSimulatorConfig(spec=model)
        except ConfigError as exc:  # said where the user wrote it, not as a run setting
            raise ConfigError(
                f"case {case_id!r} names its user simulator model {model!r}, which is not "
                "PROVIDER:MODEL",
                case=case_id,
                field="user_simulation.extra.model",
                hint=f"{exc.hint or 'write PROVIDER:MODEL'}; or name the run's: "
                "`user_simulator:` in agenteval.yaml, --user-simulator PROVIDER:MODEL",
            ) from None
    if len(named) > 1:
        raise ConfigError(
            f"the cases name different simulator models ({', '.join(sorted(named))}) and a run "
            "has one user simulator",
            field="user_simulator",
            hint="name the run's: `user_simulator:` in agenteval.yaml, --user-simulator "
            "PROVIDER:MODEL, or evaluate(user_simulator=...)",
        )
    return replace(options, user_simulator=next(iter(named)))


def with_users(
    options: RunOptions, settings: EngineSettings, stored: Mapping[str, Any] | None = None
) -> tuple[EngineSettings, SimulatorChoice]:
    """The run's engine settings with its user simulator opened (the one `options` names,
    else the one the run `stored`), and the choice that closes it; raises `ConfigError` when
    it cannot run (no key, no SDK extra), before anything is stored."""
    choice = choose_user_simulator(
        options.user_simulator,
        stored=stored,
        use_cache=options.use_cache,
        prices=options.prices,
        cache_path=options.judge_cache,
    )
    users = UserPlan(simulator=choice.user, base_dir=options.base_dir, owned=choice.owned)
    return replace(settings, users=users), choice


async def planned_with(users: SimulatorChoice, choice: JudgeChoice, make: Callable[[], T]) -> T:
    """`planned(choice, make)`, closing the user simulator too when the plan cannot be made."""
    try:
        return await planned(choice, make)
    except BaseException:
        await users.aclose()
        raise
