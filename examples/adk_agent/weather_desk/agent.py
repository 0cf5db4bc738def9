"""The weather desk: a root agent that looks the weather up (several cities at once) and keeps
the user's home city in the session state, and a sub-agent it transfers packing questions to.

Its model is `ScriptedGemini` (see scripted_model.py) so the example runs offline; the tools and
the agents are plain ADK.
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.tools import ToolContext

from .scripted_model import ScriptedGemini

WEATHER = {"paris": (21, "sunny"), "oslo": (4, "rain"), "lima": (17, "cloudy")}


def get_weather(city: str) -> dict[str, object]:
    """Today's weather in a city: temperature in Celsius and the sky."""
    celsius, sky = WEATHER[city.lower()]  # an unknown city raises: the trial records it
    return {"city": city, "celsius": celsius, "sky": sky}


def set_home_city(city: str, tool_context: ToolContext) -> str:
    """Remember the user's home city for the rest of the session."""
    tool_context.state["home_city"] = city
    return f"home city set to {city}"


packing_advisor = Agent(
    name="packing_advisor",
    model=ScriptedGemini(
        script={
            "What should I pack for Oslo?": [
                [("get_weather", {"city": "Oslo"})],
                "Pack a raincoat: Oslo is 4C with rain.",
            ],
        }
    ),
    description="Advises what to pack for a trip, from the weather at the destination.",
    instruction="Say what to pack, from the weather at the destination.",
    tools=[get_weather],
)

root_agent = Agent(
    name="weather_desk",
    model=ScriptedGemini(
        script={
            "Weather in Paris and Lima?": [
                [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Lima"})],
                "Paris is 21C and sunny; Lima is 17C and cloudy.",
            ],
            "I live in Oslo.": [[("set_home_city", {"city": "Oslo"})], "Noted: Oslo."],
            "How is the weather at home?": [
                [("get_weather", {"city": "Oslo"})],
                "Oslo is 4C with rain.",
            ],
            "What should I pack for Oslo?": [
                [("transfer_to_agent", {"agent_name": "packing_advisor"})]
            ],
            "Weather in Atlantis?": [[("get_weather", {"city": "Atlantis"})], "unreachable"],
        }
    ),
    instruction=(
        "Answer weather questions with get_weather; remember the user's home city with "
        "set_home_city; send packing questions to packing_advisor."
    ),
    tools=[get_weather, set_home_city],
    sub_agents=[packing_advisor],
)
