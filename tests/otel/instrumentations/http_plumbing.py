"""What the loopback provider servers of these tests share: a quiet request handler that reads
and writes JSON and server-sent events, and serving one on 127.0.0.1 (a free port) while a
block runs. Each server (`loopback.py`, `loopback_anthropic.py`, `loopback_gemini.py`) keeps
only its own routes and wire format."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing, with the JSON and event-stream replies the servers send."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers["content-length"])))

    def send_json(self, data: Any) -> None:
        out = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def send_events(self, frames: Iterator[str]) -> None:
        """Server-sent events, each frame written as it comes, the connection closed by the
        server: no length is known in advance."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for frame in frames:
            self.wfile.write(frame.encode())
            self.wfile.flush()
        self.close_connection = True


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve `handler` on 127.0.0.1 while the block runs; yields the port."""
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield http.server_port
    finally:
        http.shutdown()
        http.server_close()
        thread.join()
