"""The keys Google ADK's eval set models accept, level by level, and the check that refuses the
others: the import path kept for `agenteval.casefiles.adk_keys`, where they live."""

from agenteval.casefiles.adk_keys import LEVELS, Level, UnknownKey, camel, unknown_key

__all__ = ["LEVELS", "Level", "UnknownKey", "camel", "unknown_key"]
