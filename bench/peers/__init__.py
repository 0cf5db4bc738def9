"""Peer frameworks for the benchmark: their venvs (setup.py) and one workload runner each."""
