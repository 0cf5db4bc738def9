"""Print the dev extra's requirement of each package named, as pyproject.toml spells it (its
pin or floor), one a line: a venv that needs only some of the dev extra's tools installs them
at the versions the main venv has, with the versions written in one place.

    python .ci/dev_requirements.py NAME ... > requirements.txt

`.ci/run`'s "newest without ADK" venv installs the test tools and the instrumentations pinned
there through it (`pip install -e '.[dev]'` would bring google-adk, which holds back the
OpenTelemetry SDK and google-genai that venv is for). A name the dev extra does not list is an
error, so a tool dropped from it is not silently installed at another version.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_NAME = re.compile(r"^([A-Za-z0-9_.\-]+)")


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dev_requirements(names: list[str]) -> list[str]:
    pyproject = Path(__file__).parent.parent / "pyproject.toml"
    dev = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["dev"]
    by_name: dict[str, str] = {}
    for requirement in dev:
        match = _NAME.match(requirement.strip())
        if match:
            by_name[_key(match.group(1))] = requirement.strip()
    missing = [name for name in names if _key(name) not in by_name]
    if missing:
        raise SystemExit(f"not in the dev extra of pyproject.toml: {', '.join(missing)}")
    return [by_name[_key(name)] for name in names]


if __name__ == "__main__":
    for line in dev_requirements(sys.argv[1:]):
        print(line)
