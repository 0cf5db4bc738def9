"""Case files: `agenteval schema` (the JSON Schema a case file follows, for an editor to check
one as it is written)."""

from __future__ import annotations

import json
import sys

from agenteval.datasets import case_file_schema

__all__ = ["schema"]


def schema() -> None:
    """Print the JSON Schema of a case file."""
    sys.stdout.write(json.dumps(case_file_schema(), indent=2) + "\n")
