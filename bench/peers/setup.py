"""Create and update one virtual environment per peer framework under ``bench/.venvs/``.

Stdlib only, so it runs from any Python 3.  ``peer_python(name)`` returns the venv's
interpreter, creating the venv and installing the pinned release when it is missing or
when the installed release differs from the pin.  Run as a script to prepare peers::

    python bench/peers/setup.py [names...]
"""

from __future__ import annotations

import fcntl
import re
import subprocess
import sys
import venv
from pathlib import Path

VENVS_DIR = Path(__file__).resolve().parent.parent / ".venvs"

PEERS: dict[str, str] = {
    "pydantic-evals": "pydantic-evals==2.62.0",
    "deepeval": "deepeval==4.3.1",
    "inspect-ai": "inspect-ai==0.3.285",
}

WORKLOADS: dict[str, Path] = {
    "pydantic-evals": Path(__file__).resolve().parent / "pydantic_evals_workload.py",
    "deepeval": Path(__file__).resolve().parent / "deepeval_workload.py",
    "inspect-ai": Path(__file__).resolve().parent / "inspect_workload.py",
}


def _dist_info_stem(requirement: str) -> str:
    """The ``name-version`` stem of the ``.dist-info`` directory a pinned requirement installs."""
    name, version = requirement.split("==")
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}"


def _venv_python(name: str) -> Path:
    """Path of the interpreter inside the venv of peer ``name`` (it may not exist yet)."""
    return VENVS_DIR / name / "bin" / "python"


def is_ready(name: str) -> bool:
    """Whether the venv of ``name`` exists and holds exactly the pinned release (no subprocess)."""
    env = VENVS_DIR / name
    if not _venv_python(name).exists():
        return False
    stem = _dist_info_stem(PEERS[name])
    return any(env.glob(f"lib/python3*/site-packages/{stem}.dist-info"))


def peer_python(name: str) -> Path:
    """Return the python of peer ``name``'s venv, creating it and installing the pin if needed.

    Idempotent and fast when the venv already holds the pinned release; reinstalls when the
    installed release differs.  A file lock keeps concurrent callers from installing twice.
    """
    if name not in PEERS:
        raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
    if is_ready(name):
        return _venv_python(name)
    VENVS_DIR.mkdir(parents=True, exist_ok=True)
    with (VENVS_DIR / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_ready(name):
            _install(name)
    return _venv_python(name)


def _install(name: str) -> None:
    """Create the venv of ``name`` if absent and pip-install its pinned requirement into it."""
    env = VENVS_DIR / name
    python = _venv_python(name)
    if not python.exists():
        print(f"[peers] creating venv {env}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
    requirement = PEERS[name]
    print(f"[peers] installing {requirement} into {env}", file=sys.stderr)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-qq", requirement],
        check=True,
        stdout=sys.stderr,
    )
    if not is_ready(name):
        raise RuntimeError(f"{requirement} still not installed in {env} after pip install")


def main(argv: list[str]) -> int:
    """Prepare the named peers (all of them when none is named) and print their pythons."""
    names = argv or list(PEERS)
    unknown = [name for name in names if name not in PEERS]
    if unknown:
        print(f"unknown peer(s): {', '.join(unknown)}; known: {', '.join(PEERS)}", file=sys.stderr)
        return 2
    for name in names:
        print(f"{name}\t{PEERS[name]}\t{peer_python(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
