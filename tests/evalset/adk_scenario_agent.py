"""The ADK agent of `test_adk_simulated_runs.py`, by reference for `agenteval run --agent`."""

from tests.evalset.test_adk_simulated_runs import SCRIPT
from tests.frameworks.adk.scripted import weather_agent

root_agent = weather_agent(SCRIPT)
