"""`agenteval view`'s web app: the addresses of `pages.py` on Starlette, served by uvicorn.

Imported only by `agenteval view` (the optional extra `agenteval[view]`): importing agenteval
never imports Starlette. Every answer carries a strict Content-Security-Policy (scripts and
styles from this server only, nothing fetched elsewhere, no framing), and only the addresses
this machine is known by are answered (a page on another site cannot reach the viewer through
a name it rebinds to 127.0.0.1).

Addresses: `/` the runs, `/runs/RUN_ID` a run (`/summary` and `/cases` its two live parts),
`/runs/RUN_ID/trials/CASE_ID/TRIAL` a trace, `/compare/BASE/CANDIDATE` (and `/cases/CASE_ID`,
the case's traces side by side), `/compare?base=&candidate=` (the runs list's form),
`/api/runs` and `/api/runs/RUN_ID/progress` (what the live pages poll), `/static/NAME`.
"""

from __future__ import annotations

import ipaddress
import traceback
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenteval.errors import AgentEvalError, StoreError
from agenteval.view.addresses import BadRequest, RunFilters, RunsFilters, whole_number
from agenteval.view.pages import Pages
from agenteval.view.reader import UnknownRun

__all__ = ["CONTENT_SECURITY_POLICY", "create_app"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
# What /static serves: the report's own files and the viewer's, nothing else.
_STATIC = {
    "report.css": ("agenteval.report", "text/css"),
    "trace.js": ("agenteval.report", "text/javascript"),
    "view.css": ("agenteval.view", "text/css"),
    "view.js": ("agenteval.view", "text/javascript"),
}


class _SecurityHeaders:
    """Adds the policy headers to every answer, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


class _KnownHosts:
    """Answers only requests addressed to one of `names` or to an IP address: a page on
    another site whose name rebinds to this machine sends its own name and is refused, while
    an address typed by a user cannot be a rebinding site's (so `--host 0.0.0.0` answers
    whatever address of the machine the user reaches it by)."""

    def __init__(self, app: ASGIApp, names: Sequence[str]) -> None:
        self.app = app
        self.names = {name.lower().strip("[]") for name in names}

    def allowed(self, header: str) -> bool:
        """Whether a request with this `Host` header is answered."""
        if header.startswith("["):  # [IPv6]:port
            name = header[1 : header.find("]")]
        else:
            name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
        name = name.lower()
        if not name:
            return False
        if name in self.names:
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(Headers(scope=scope).get("host", "")):
            refused = PlainTextResponse("Invalid host header", status_code=400)
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


Handler = Callable[[Request], Awaitable[Response]]


def create_app(pages: Pages, *, hosts: Sequence[str] = ("localhost",)) -> Starlette:
    """The viewer over `pages`' store, answering requests addressed to `hosts` or to an IP
    address only."""

    def html(status: int, title: str, message: str, hint: str = "") -> HTMLResponse:
        return HTMLResponse(pages.error(status, title, message, hint), status_code=status)

    def guarded(handler: Callable[[Request], Response | None]) -> Handler:
        """The handler run off the event loop (it reads SQLite), its misses answered 404 and
        a damaged store 503, each as one message, never a traceback."""

        async def endpoint(request: Request) -> Response:
            try:
                response = await run_in_threadpool(handler, request)
            except UnknownRun as exc:
                return html(404, "No such run", f"This store has no run {exc.run_id!r}.")
            except BadRequest as exc:
                return html(400, "Bad address", str(exc))
            except StoreError as exc:
                return html(503, "The store cannot be read", exc.render())
            except AgentEvalError as exc:  # a comparison that cannot be made, say
                return html(400, "This cannot be shown", exc.render())
            except Exception as exc:
                # The viewer's own bug: one line on the page, the traceback in the terminal.
                traceback.print_exc()
                return html(500, "The viewer failed", f"{type(exc).__name__}: {exc}")
            if response is None:
                return html(404, "Not found", f"Nothing at {request.url.path}.")
            return response

        return endpoint

    def runs(request: Request) -> Response:
        return HTMLResponse(pages.runs_page(RunsFilters.parse(request.query_params)))

    def run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        return HTMLResponse(pages.run_page(run_id, RunFilters.parse(request.query_params)))

    def summary(request: Request) -> Response:
        text, pending = pages.summary_fragment(request.path_params["run_id"])
        return HTMLResponse(text, status_code=202 if pending else 200)

    def cases(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        text, pending = pages.cases_fragment(run_id, RunFilters.parse(request.query_params))
        return HTMLResponse(text, status_code=202 if pending else 200)

    def trial(request: Request) -> Response | None:
        params = request.path_params
        number = whole_number(params["trial"])
        if number is None:
            return None
        text = pages.trial_page(params["run_id"], params["case_id"], number)
        return None if text is None else HTMLResponse(text)

    def compare_form(request: Request) -> Response:
        base = request.query_params.get("base", "")
        candidate = request.query_params.get("candidate", "")
        if not base or not candidate:
            raise BadRequest("pick a base run and a candidate run to compare")
        return RedirectResponse(f"/compare/{_quote(base)}/{_quote(candidate)}", status_code=303)

    def compare(request: Request) -> Response:
        params = request.path_params
        text, pending = pages.compare_page(params["base"], params["candidate"])
        return HTMLResponse(text, status_code=202 if pending else 200)

    def api_compare(request: Request) -> Response:
        params = request.path_params
        return JSONResponse(pages.compare_progress(params["base"], params["candidate"]))

    def compare_case(request: Request) -> Response | None:
        params = request.path_params
        text = pages.compare_case_page(params["base"], params["candidate"], params["case_id"])
        return None if text is None else HTMLResponse(text)

    def api_runs(request: Request) -> Response:
        rows = pages.runs_rows()
        keep = ("run_id", "status", "live", "done", "rate", "cost", "duration", "pending")
        return JSONResponse([{name: row[name] for name in keep} for row in rows])

    def api_progress(request: Request) -> Response:
        return JSONResponse(pages.progress(request.path_params["run_id"]))

    def static(request: Request) -> Response | None:
        found = _STATIC.get(request.path_params["name"])
        if found is None:
            return None
        package, media_type = found
        text = (resources.files(package) / "static" / request.path_params["name"]).read_text(
            encoding="utf-8"
        )
        return Response(text, media_type=media_type)

    routes = [
        Route("/", guarded(runs)),
        Route("/runs/{run_id}", guarded(run)),
        Route("/runs/{run_id}/summary", guarded(summary)),
        Route("/runs/{run_id}/cases", guarded(cases)),
        Route("/runs/{run_id}/trials/{case_id:path}/{trial}", guarded(trial)),
        Route("/compare", guarded(compare_form)),
        Route("/compare/{base}/{candidate}", guarded(compare)),
        Route("/compare/{base}/{candidate}/cases/{case_id:path}", guarded(compare_case)),
        Route("/api/runs", guarded(api_runs)),
        Route("/api/runs/{run_id}/progress", guarded(api_progress)),
        Route("/api/compare/{base}/{candidate}", guarded(api_compare)),
        Route("/static/{name}", guarded(static)),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return html(404, "Not found", f"Nothing at {request.url.path}.")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        answer = html(
            405, "Not allowed", f"{request.method} is not answered: the viewer only reads."
        )
        answer.headers.update(getattr(exc, "headers", None) or {})  # Allow: GET, HEAD
        return answer

    return Starlette(
        routes=routes,
        middleware=[
            Middleware(_SecurityHeaders),
            Middleware(_KnownHosts, names=list(hosts)),
        ],
        exception_handlers={404: not_found, 405: not_allowed},
    )


def _quote(text: str) -> str:
    return quote(text, safe="")
