"""`python -m agenteval` runs the command line."""

from agenteval.cli import main

main()
