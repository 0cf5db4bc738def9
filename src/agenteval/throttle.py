"""The adaptive throttle under its former name: it lives in `agenteval.providers.throttle`."""

from agenteval.providers.throttle import *  # noqa: F403
from agenteval.providers.throttle import __all__ as __all__
