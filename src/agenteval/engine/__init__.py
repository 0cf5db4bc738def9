"""Scheduling trials: concurrency, timeouts, retries, resume; `evaluate` is the front door."""
