"""How an agent is called and recorded: callables, `@tool`, model-call recording, loading."""
