"""agenteval's tests: a package, so that `tests/agents` is `tests.agents` and never shadows the
OpenAI Agents SDK (imported as `agents`) in the test process."""
