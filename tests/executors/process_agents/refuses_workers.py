"""An agent whose module cannot be imported in a worker process (only in the driver): how a
recipe the workers cannot rebuild ends the run."""

from __future__ import annotations

import multiprocessing

if multiprocessing.parent_process() is not None:
    raise RuntimeError("this module refuses to load in a worker process")

__all__ = ["run"]


def run(question: str) -> str:
    """Answer the question as it is."""
    return question
