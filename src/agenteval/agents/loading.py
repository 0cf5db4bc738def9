"""Loading an agent or scorer by reference: moved to `agenteval.loading` (a foundation, below
the scorers and the agents alike); re-exported here, where it was first."""

from agenteval.loading import load_object

__all__ = ["load_object"]
