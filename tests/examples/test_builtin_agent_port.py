"""The built-in agent example when its scripted server's port is taken: the offline run picks a
free port for its server (so it never tests whatever else listens on 8765), and the server
started alone on a taken port says so and exits, with no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest
from tests.cli_process import assert_clean, cli_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "builtin_agent"
PORT = 8765  # the scripted server's documented port


class _Decoy(BaseHTTPRequestHandler):
    """Another program on the port: an OpenAI-compatible server with other answers."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        reply = {
            "id": "decoy",
            "object": "chat.completion",
            "created": 0,
            "model": "decoy",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "DECOY"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def port_taken() -> Iterator[None]:
    """Port 8765 held by another program while the test runs (if something else already holds
    it, it is taken all the same)."""
    try:
        decoy = ThreadingHTTPServer(("127.0.0.1", PORT), _Decoy)
    except OSError:
        yield
        return
    decoy.daemon_threads = True
    Thread(target=decoy.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        decoy.shutdown()
        decoy.server_close()


def test_the_offline_run_uses_its_own_server_when_8765_is_taken(
    port_taken: None, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run_offline.py"), "--store", "runs.db", "--json", "r.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=cli_env(NO_PROXY="*"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert_clean(done.stderr)
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert len(results) == 8
    assert not any("DECOY" in (r["output"] or "") for r in results)
    paris = [r for r in results if r["case_id"] == "paris-weather"]
    assert paris and all(r["scores"]["exact_match"]["passed"] for r in paris)


def test_the_server_alone_on_a_taken_port_says_so_and_exits(port_taken: None) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "scripted_server.py"), "--port", str(PORT)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert done.returncode != 0
    assert_clean(done.stderr)
    assert f"port {PORT} is in use" in done.stderr
    assert "run_offline.py" in done.stderr  # the way that picks a free port
