"""The ADK home automation agent, replaying home.test.json (as `adk` expects: `root_agent`)."""

from tests.evalset.dropin.agents.adk_home import home_agent

root_agent = home_agent()
