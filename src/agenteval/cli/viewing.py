"""`agenteval view`: the stored runs in a local web viewer (`agenteval.view`), until Ctrl-C.

The viewer's web stack (Starlette, uvicorn) is the optional extra `agenteval[view]`, imported
here only when the command runs; without it the command says what to install.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import sys
import threading
from types import FrameType
from typing import Annotated

import typer

from agenteval.cli.common import INTERRUPTED_EXIT, console, warn
from agenteval.cli.options import Flags, with_options
from agenteval.cli.settings import global_settings, run_prices
from agenteval.errors import ConfigError
from agenteval.pricing import PriceTable
from agenteval.records import RunInfo

__all__ = ["view_command"]

VIEW_EXTRA = "pip install 'agenteval[view]'"


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the server starts so a busy port is one message
    (and `--port 0` takes a free one, whose number the command prints)."""
    if not 0 <= port <= 65535:
        # getaddrinfo would take 70000 as 70000 % 65536 and listen there.
        raise ConfigError(
            f"{port} is not a port", field="--port", hint="give a port from 1 to 65535, or 0"
        )
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(
            f"cannot listen on {host!r}: {exc.strerror}",
            field="--host",
            hint="give an address of this machine, e.g. 127.0.0.1",
        ) from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRNOTAVAIL:
            raise ConfigError(
                f"cannot listen on {host}: {exc.strerror}",
                field="--host",
                hint="give an address of this machine, e.g. 127.0.0.1 (0.0.0.0 for all of them)",
            ) from None
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            field="--port",
            hint="pass another --port (0 picks a free one), or stop what is using it",
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


@with_options("store")
def view_command(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            metavar="ADDRESS",
            show_default=False,
            help="The address to listen on (default: 127.0.0.1, this machine only); any other "
            "lets whoever reaches it read every stored run.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port",
            metavar="PORT",
            show_default=False,
            help="The port; 0 picks a free one (default: 8000).",
        ),
    ] = 8000,
    *,
    flags: Flags,
) -> None:
    """Browse the stored runs in a local web viewer: every run, a run's summary and traces a
    page at a time, any two runs compared, and a run in progress updating as it goes."""
    try:
        import uvicorn

        from agenteval.view.app import create_app
        from agenteval.view.pages import Pages
        from agenteval.view.reader import StoreReader
    except ImportError as exc:
        raise ConfigError(
            f"agenteval view needs its web server, which is not installed ({exc.name} is missing)",
            hint=f"{VIEW_EXTRA}, then run agenteval view again",
        ) from None
    settings = global_settings(flags.store)
    reader = StoreReader(settings.store)

    def prices_for(info: RunInfo) -> PriceTable | None:
        return run_prices(info, settings.prices)

    pages = Pages(reader, store_label=str(settings.store), prices_for=prices_for)
    # [::1] as an address is written in a URL: the address is what is inside the brackets.
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    loopback = is_loopback(host)
    sock = _bind(host, port)
    if not loopback:
        warn(
            f"listening on {host}, not this machine only: anyone who can reach it can read "
            "every run in the store (pass --host 127.0.0.1 to keep it local)"
        )
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    # The names this server answers to besides its addresses (a rebinding site's name is
    # refused, also when listening on every address, which includes 127.0.0.1): on loopback
    # the machine's own; elsewhere also the names the machine goes by.
    hosts = ["localhost", host]
    if not loopback:
        hosts += [socket.gethostname(), socket.getfqdn()]
    app = create_app(pages, hosts=hosts)
    console.print(f"agenteval view: [bold]http://{shown}:{bound}/[/] (read-only; Ctrl-C stops)")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")

    class Server(uvicorn.Server):
        """uvicorn's server, stopping at the first Ctrl-C without waiting for the pages being
        made (uvicorn waits for them until a second Ctrl-C)."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self.force_exit = True
            # The requests left unanswered end cancelled, which uvicorn would log as errors.
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            super().handle_exit(sig, frame)

    interrupted = False
    try:
        Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        sock.close()
        pages.close()
        if interrupted and _still_answering():
            # A page still being made in a worker thread (a comparison of two 100,000-trial
            # runs: ~30 s) cannot be stopped midway, and the process would wait for it: the
            # viewer writes nothing, so nothing is lost by ending now.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(INTERRUPTED_EXIT)


def _still_answering() -> bool:
    """Whether a thread that would keep the process alive (a request's) is still running."""
    current = threading.current_thread()
    return any(t is not current and not t.daemon and t.is_alive() for t in threading.enumerate())
