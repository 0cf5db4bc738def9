"""The user simulator: a model that plays a case's user toward its goal (issue 18), asked
through the judge's provider clients, limits, retries and cache. It implements
`agents.users.User` by shape (this package sits below `agents/` and imports none of it)."""
