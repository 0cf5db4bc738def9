"""`python -m agenteval.cli` runs the command line, as `python -m agenteval` does."""

from agenteval.cli import main

main()
