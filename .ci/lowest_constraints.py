"""Print pip constraints pinning every dependency agenteval declares with a floor (`name>=X`)
to that floor: the oldest versions a user's `pip install agenteval` may leave in place.

    python .ci/lowest_constraints.py [EXTRA ...] > constraints.txt

The core dependencies, and those of the extras named. `.ci/run` installs the package against
them in a venv of its own and runs the tests that need no optional framework, so a floor in
pyproject.toml is one the tests have passed on (typer 0.12 with today's click printed the
version and exited 0 on every command, `agenteval gate` included).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_FLOOR = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)$")


def floors(extras: list[str]) -> dict[str, str]:
    pyproject = Path(__file__).parent.parent / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    out: dict[str, str] = {}
    for requirement in wanted:
        match = _FLOOR.match(requirement.strip())
        if match:  # `agenteval[...]` and exact pins are not floors
            out[match.group(1).lower()] = match.group(3)
    return out


if __name__ == "__main__":
    for name, version in sorted(floors(sys.argv[1:]).items()):
        print(f"{name}=={version}")
