"""Settings every test folder shares."""

from hypothesis import settings

# No wall-clock limit in a unit test: hypothesis's per-example deadline (200 ms by default)
# fails a property test on a loaded machine (two cores running the suite), never on a bug.
settings.register_profile("agenteval", deadline=None)
settings.load_profile("agenteval")
