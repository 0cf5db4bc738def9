"""A coordinator whose sub-agent is the home automation agent: `agent_name="home_automation"`
evaluates the sub-agent alone, as ADK's `find_agent` picks it."""

from google.adk.agents import LlmAgent
from tests.evalset.dropin.agents.adk_home import ReplayLlm, home_agent

root_agent = LlmAgent(
    name="coordinator",
    model=ReplayLlm(model="replay", script={}),
    instruction="Hand the user to the right agent.",
    sub_agents=[home_agent(name="home_automation")],
)
