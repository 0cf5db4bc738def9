"""Run the built-in agent example offline, in one step: the scripted OpenAI-compatible server on
a free port, then `agenteval run examples/builtin_agent` against it.

    python examples/builtin_agent/run_offline.py [agenteval run options, e.g. --verbose]

A free port, chosen by the system, means the run never talks to another program that happens to
listen on a fixed one. The server stops when the run ends; the exit code is the run's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scripted_server import serve  # noqa: E402  (the example's server, next to this file)


def main(args: list[str]) -> int:
    server = serve(0)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    print(f"scripted OpenAI-compatible server on {url}", flush=True)
    # The scripted model needs no key; a real one set in the shell is not sent to it.
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["OPENAI_BASE_URL"] = url
    try:
        return subprocess.call(
            [sys.executable, "-m", "agenteval", "run", str(HERE), *args], env=env
        )
    except KeyboardInterrupt:  # agenteval, in the same process group, says what it stopped
        return 130
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
