"""A module (not a package) holding root_agent itself, with no `agent` member."""

from tests.evalset.dropin.agents.home_plain.agent import root_agent as root_agent
