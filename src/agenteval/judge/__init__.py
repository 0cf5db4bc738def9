"""The LLM judge: providers, prompt templates, structured verdicts, sampling, cache, cost."""
