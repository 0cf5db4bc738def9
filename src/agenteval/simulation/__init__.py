"""The user simulator: a model that plays a case's user toward its goal (issue 18), asked
through the judge's provider clients, limits, retries and cache (`judge.sampling`). It
implements `agents.users.User` by shape (this package sits below `agents/` and imports none of
it): `UserSimulator` (`simulator.py`), its structured reply and prompt (`reply.py`), and how a
run chooses it (`choice.py`)."""

from agenteval.simulation.simulator import UserSimulator, UserSimulatorConfig

__all__ = ["UserSimulator", "UserSimulatorConfig"]
