"""A URL fit to store or print."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def public_url(url: str | None) -> str | None:
    """The URL without any user or password in it, fit to store or print (a judge's base URL,
    an HTTP agent's address)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
