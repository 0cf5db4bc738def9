"""Which environment variables and dict keys name a secret, judged by the name alone, and what a
secret is replaced by (`REDACTED`)."""

from __future__ import annotations

import functools
import re
from typing import Final

REDACTED: Final = "[REDACTED]"
"""What a secret is replaced by."""

_ENV_MARKERS = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH")
_ENV_FALSE_MARKERS = re.compile(r"AUTHOR|KEYBOARD|KEYMAP|KEYRING|MONKEY|TOKENIZER")
_ENV_NOT_SECRET_LAST_WORDS: Final = frozenset(
    {
        # identifiers: a key id names a key, it does not unlock anything
        "ID",
        "IDS",
        # places
        "FILE",
        "PATH",
        "DIR",
        "SOCK",
        "SOCKET",
        "URL",
        "URI",
        "ENDPOINT",
        "HOST",
        "PORT",
        "REGION",
        # who and what
        "USER",
        "USERNAME",
        "NAME",
        # choices
        "TYPE",
        "MODE",
        "METHOD",
        "SCHEME",
        "STRATEGY",
        "PROVIDER",
        "BACKEND",
    }
)
_ENV_WORD_SPLIT = re.compile(r"[^A-Z0-9]+")
_NOT_SECRET_VALUES: Final = frozenset(
    {"true", "false", "yes", "no", "on", "off", "none", "null", "nil", "undefined"}
    | {"enabled", "disabled", "enable", "disable"}
)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

_SECRET_KEY_SUFFIXES: Final = (
    "apikey",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "token",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "cookie",
    "privatekey",
    "secretkey",
    "accesskey",
)
CURSOR_WORDS: Final = ("page", "next", "continuation", "sync", "cursor", "max")
"""`<word>_token` names a pagination cursor (or a count), not a credential."""
_NOT_SECRET_KEY_SUFFIXES: Final = tuple(word + "token" for word in CURSOR_WORDS)
_KEY_SEPARATORS = re.compile(r"[-_.\s]+")


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret, judged by the name alone.

    >>> [is_secret_env_name(n) for n in ("OPENAI_API_KEY", "PGPASSWORD", "GIT_AUTHOR_NAME")]
    [True, True, False]
    >>> is_secret_env_name("AWS_ACCESS_KEY_ID")  # an id; its AKIA... shape is caught anyway
    False
    """
    upper = name.upper()
    words = [word for word in _ENV_WORD_SPLIT.split(upper) if word]
    if not words or words[-1] in _ENV_NOT_SECRET_LAST_WORDS:
        return False
    if "PASS" in words:
        return True
    return _ENV_MARKERS.search(_ENV_FALSE_MARKERS.sub(" ", upper)) is not None


@functools.lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """Whether a dict key names a secret: case, `-`, `_`, `.` and spaces do not matter.

    The name must end with a credential word: `api_key`, `apiKey`, `X-Api-Key`, `password`,
    `client_secret`, `access_token`, `Authorization`, `cookie`, `aws_credentials`, ...
    Counts, flags and cursors are not secrets: `max_tokens`, `tokens`, `key`, `page_token`.

    >>> [is_secret_key(k) for k in ("apiKey", "x-api-key", "access_token", "max_tokens", "key")]
    [True, True, True, False, False]
    """
    normal = _KEY_SEPARATORS.sub("", name).lower()
    return normal.endswith(_SECRET_KEY_SUFFIXES) and not normal.endswith(_NOT_SECRET_KEY_SUFFIXES)


def environment_secret(value: str, min_length: int) -> str | None:
    """The secret an environment value holds, or None when it is too short or plainly not one."""
    value = value.strip()
    if len(value) < min_length or value.lower() in _NOT_SECRET_VALUES:
        return None
    if _NUMBER.fullmatch(value):
        return None
    return value
