"""An agent module that forgot its root_agent."""

main_agent = None
