"""What a user reads after a run: the summary, the terminal view and the JSON document."""
