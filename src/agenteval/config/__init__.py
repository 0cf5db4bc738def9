"""The project config (`agenteval.yaml`, `config/project.py`) and the one place settings
resolve: command-line flag, then environment (`AGENTEVAL_*`), then the config file, then the
default (`config/settings.py`)."""

from agenteval.config.project import (
    CONFIG_NAMES,
    JudgeSection,
    ProjectConfig,
    Target,
    find_target,
)
from agenteval.config.settings import (
    RunSettings,
    check_scorer_flags,
    check_scorers,
    load_infrastructure_errors,
    resolve_settings,
)
from agenteval.engine.agent_spec import AgentSpec, resolve_agent
from agenteval.engine.options import RunOptions
from agenteval.exception_refs import exception_classes

__all__ = [
    "CONFIG_NAMES",
    "AgentSpec",
    "JudgeSection",
    "ProjectConfig",
    "RunOptions",
    "RunSettings",
    "Target",
    "check_scorer_flags",
    "check_scorers",
    "exception_classes",
    "find_target",
    "load_infrastructure_errors",
    "resolve_agent",
    "resolve_settings",
]
