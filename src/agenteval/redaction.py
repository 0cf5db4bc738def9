"""Keep secrets (API keys, tokens, passwords) out of the store, the reports and the logs.

A `Redactor` is built once per run, usually with `Redactor.from_environment()`, and applied to
everything agenteval keeps: `redact_text` for a message, `redact_value` for JSON-like data (tool
arguments and results), `redact_model` for a record such as a `Trial` or a `Score`. A secret is
replaced by `[REDACTED]`.

What counts as a secret:

- **Values of secret-looking environment variables.** A variable is secret-looking when its
  name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or AUTH, or the
  word PASS (case-insensitive; see `is_secret_env_name`). Names of things that are not secrets
  are left out: words that merely contain a marker (AUTHOR, XAUTHORITY, KEYBOARD, KEYMAP,
  KEYRING, MONKEY, TOKENIZERS) and names whose last word says the value is an identifier, a
  place, a name or a choice (`*_KEY_ID`, `*_FILE`, `*_PATH`, `*_DIR`, `*_SOCK`, `*_URL`,
  `*_HOST`, `*_USER`, `*_NAME`, `*_TYPE`, `*_MODE`, ...). An AWS access key id is still caught by
  its shape. Values are stripped; values shorter than 8 characters, numbers and flag words
  (`true`, `false`, `enabled`, ...) are ignored, because masking them would change ordinary
  answers. Secrets passed as `extra` are taken as they are (only stripped).
- **Well-known key shapes, whatever the environment**: OpenAI `sk-…`/`sk-proj-…`, Anthropic
  `sk-ant-…`, Google `AIza…`, GitHub `ghp_…`/`gho_…`/`ghu_…`/`ghs_…`/`ghr_…`/`github_pat_…`,
  AWS access key ids `AKIA…`/`ASIA…`, Slack `xoxa-`/`xoxb-`/`xoxp-`/`xoxr-`/`xoxs-`, JSON Web
  Tokens, PEM private key blocks.
- **Credentials by context**: `Bearer <token>`, the value of an `Authorization:` header, the
  password in `scheme://user:password@host`, and values assigned to credential names in text
  (`api_key=…`, `"password": "…"`, `GITHUB_TOKEN=…`, `clientSecret: …`).
- **Dict keys that name a secret** (`redact_value`): the value of `api_key`, `apiKey`,
  `x-api-key`, `authorization`, `password`, `secret`, `token`, `access_token`, `client_secret`,
  `cookie`, ... is replaced whatever it is (see `is_secret_key`).

Decisions, made to keep false positives away (a masked answer could change an eval score):

- For a key shape or a context, the recognisable, non-secret prefix is kept so a reader can
  tell what was there: `sk-proj-[REDACTED]`, `ghp_[REDACTED]`, `Bearer [REDACTED]`,
  `Authorization: Basic [REDACTED]`, `https://user:[REDACTED]@host`, `api_key=[REDACTED]`.
  An environment value becomes plain `[REDACTED]`.
- A token found by context (`Bearer`, `Authorization` without `Basic`, `api_key=`, ...), an
  `sk-` key and a Slack token must contain a digit; a context value must not be a URL, code
  (`api_key=os.getenv(...)`) or a name (`token = self.session_token`). So placeholders and code
  in an answer are left alone: `sk-your-key-here`, `Bearer YOUR_TOKEN`, `api_key=OPENAI_API_KEY`,
  `postgres://user:pass@localhost`, `redis://:${REDIS_PASSWORD}@cache`. Real keys carry digits;
  a digit-less secret from the environment is still caught by its value.
- Bare words are never enough: "monkey", "keyboard", "tokens used: 120", "the key", "a secret"
  are untouched; `token` and `secret` count as credential names in text only as the last part of
  a compound name (`HF_TOKEN=`, `x-auth-token:`, `clientSecret:`). A PEM block is masked only
  when it holds key material, not when code merely names its armour lines.
- A secret-keyed value that is `None`, a boolean, `""` or already `[REDACTED]` is kept: it hides
  nothing, and "the key was empty" is worth seeing. Pagination cursors (`page_token`,
  `nextPageToken`, `continuation_token`, ...) are not credentials, as keys or in text.
- A token preceded by a JSON or repr escape (`\\n`, `\\t`) counts as starting a word, so secrets
  inside escaped text (a JSON body quoted in an error message) are found too. An environment
  value is also searched in its JSON-escaped form.

Not covered: a secret split across strings or encoded (base64, URL-encoded) other than by JSON;
a key glued to a preceding letter, digit or `_` (`abcsk-...`); a value that only its context
reveals and that has no digit or has spaces (`password: correct horse`) - the environment and
the dict-key rule still catch those when they know them.

Everything is compiled into one regular expression, a trie of literal heads (environment values,
key prefixes, header and credential names) each followed by what must come after it, compiled on
first use (some tens of milliseconds). Every branch starts with a literal character, so the regex
engine skips ahead to candidate positions: searching 200 characters of ordinary text takes about
3 microseconds, and `redact_text` then returns the very same string object. When something
matched, one substitution pass does the work; a second pass, normally finding nothing, makes sure
the result is stable (a mask can expose a word start that was glued to a secret).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from pydantic import BaseModel

__all__ = [
    "NULL_REDACTOR",
    "REDACTED",
    "Redactor",
    "is_secret_env_name",
    "is_secret_key",
]

REDACTED: Final = "[REDACTED]"
"""What a secret is replaced by."""

_MAX_PASSES: Final = 4
_MAX_REMEMBERED_KEYS: Final = 4096

ModelT = TypeVar("ModelT", bound=BaseModel)

# ---------------------------------------------------------------------------------------------
# Names: environment variables and dict keys
# ---------------------------------------------------------------------------------------------

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
_CURSOR_WORDS: Final = ("page", "next", "continuation", "sync", "cursor", "max")
"""`<word>_token` names a pagination cursor (or a count), not a credential."""
_NOT_SECRET_KEY_SUFFIXES: Final = tuple(word + "token" for word in _CURSOR_WORDS)
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


def _environment_secret(value: str, min_length: int) -> str | None:
    """The secret an environment value holds, or None when it is too short or plainly not one."""
    value = value.strip()
    if len(value) < min_length or value.lower() in _NOT_SECRET_VALUES:
        return None
    if _NUMBER.fullmatch(value):
        return None
    return value


# ---------------------------------------------------------------------------------------------
# Fixed rules: key shapes and credentials by context
# ---------------------------------------------------------------------------------------------


def _not_after(chars: str, head: str) -> str:
    """Zero-width check, placed right after `head`: the head is not preceded by one of `chars`,
    unless that character ends an escape such as `\\n` (so escaped text still has words)."""
    literal = re.escape(head)
    return f"(?:(?<!{chars}{literal})|(?<=\\\\[nrtbf]{literal}))"


def _after(chars: str, head: str) -> str:
    """Zero-width check, placed right after `head`: the head is preceded by one of `chars`."""
    return f"(?<={chars}{re.escape(head)})"


_WORD = r"\w"
_ALNUM = "[A-Za-z0-9]"


@dataclass(frozen=True)
class _Rule:
    """A fixed rule: literal heads (each with its boundary check), then what is kept, the secret
    itself and a kept tail. The replacement is `head + keep + [REDACTED] + tail`."""

    name: str
    heads: tuple[tuple[str, str], ...]
    keep: str
    secret: str
    tail: str = ""

    def continuation(self, boundary: str) -> str:
        """What follows one head in the combined regex (no capturing groups)."""
        return f"{boundary}(?:{self.keep})(?:{self.secret})(?:{self.tail})"

    def grouped(self, head: str, boundary: str) -> re.Pattern[str]:
        """The rule for one head, with `secret` and `tail` groups, to rebuild a replacement."""
        return re.compile(
            f"{re.escape(head)}{boundary}(?:{self.keep})"
            f"(?P<secret>{self.secret})(?P<tail>{self.tail})"
        )


def _word_heads(*heads: str) -> tuple[tuple[str, str], ...]:
    return tuple((head, _not_after(_WORD, head)) for head in heads)


def _name_heads(*heads: str) -> tuple[tuple[str, str], ...]:
    return tuple((head, _not_after(_ALNUM, head)) for head in heads)


def _free_heads(*heads: str) -> tuple[tuple[str, str], ...]:
    return tuple((head, "") for head in heads)


def _case_forms(word: str) -> tuple[str, str, str]:
    return word.lower(), word.upper(), word.capitalize()


def _not_cursor(cursors: Iterable[str], sep: str, head: str, case: Callable[[str], str]) -> str:
    """Zero-width checks, placed right after `head`: it does not end a cursor's name."""
    return "".join(f"(?<!{re.escape(case(cursor) + sep + head)})" for cursor in cursors)


def _credential_name_heads() -> tuple[tuple[str, str], ...]:
    """Heads for credential names in text, in the spellings code and configs use."""
    compounds = [
        ("api", "key"),
        ("secret", "key"),
        ("access", "key"),
        ("access", "token"),
        ("refresh", "token"),
        ("auth", "token"),
        ("api", "token"),
        ("client", "secret"),
        ("password",),
        ("passwd",),
        ("passphrase",),
    ]
    heads: dict[str, str] = {}
    for words in compounds:
        lower = [w.lower() for w in words]
        separators = ("_", "-", "") if len(words) > 1 else ("",)
        for sep in separators:
            heads[sep.join(lower)] = _not_after(_ALNUM, sep.join(lower))
            heads[sep.join(lower).upper()] = _not_after(_ALNUM, sep.join(lower).upper())
            title = sep.join(w.capitalize() for w in lower)  # Api-Key, ApiKey, Password
            heads[title] = _not_after("[A-Z]", title)  # camelCase joins: dbPassword
        if len(words) > 1:
            camel = lower[0] + "".join(w.capitalize() for w in lower[1:])  # apiKey
            heads[camel] = _not_after(_ALNUM, camel)
            if lower[0] == "api":
                for sep in ("_", "-", ""):
                    acronym = "API" + sep + sep.join(w.capitalize() for w in lower[1:])
                    heads[acronym] = _not_after(_ALNUM, acronym)  # X-API-Key, API_Key
    # `token` and `secret` alone are ordinary words; as the last part of a name they are not:
    # HF_TOKEN=, x-auth-token:, webhook_secret=, accessToken:, clientSecret:. Pagination
    # cursors (page_token=, nextPageToken:) are not credentials.
    for word in ("token", "secret"):
        small, capital, title = _case_forms(word)
        cursors = _CURSOR_WORDS if word == "token" else ()
        for sep in ("_", "-"):
            heads[sep + small] = _not_cursor(cursors, sep, small, str.lower)
            heads[sep + capital] = _not_cursor(cursors, sep, capital, str.upper)
        heads["-" + title] = _not_cursor(cursors, "-", title, str.capitalize)  # X-Auth-Token
        heads[title] = _after("[a-z0-9]", title) + (  # accessToken
            _not_cursor(cursors, "", title, str.lower) + _not_cursor(cursors, "", title, str.title)
        )
    return tuple(heads.items())


# A credential value: no spaces, quotes, separators or brackets, at least 8 characters, a digit;
# not a URL (`token_url: https://...`; a URL's password has its own rule), not code (the run is
# not followed by an opening bracket, as in `api_key=os.getenv("KEY")`, and is not itself named
# like a credential, as in `token = self.session_token`), and a full stop after it ends the
# sentence, not the value.
_VALUE_CHARS = r"""[^\s"'`\\,;&<>()\[\]{}]"""
_VALUE_CHARS_NO_DIGIT = r"""[^\s"'`\\,;&<>()\[\]{}0-9]"""
_VALUE_LAST = r"""[^\s"'`\\,;&<>()\[\]{}.]"""
_NAMED_LIKE_A_CREDENTIAL = "|".join(
    f"(?<={form})" for word in ("token", "secret", "key", "password") for form in _case_forms(word)
)
_VALUE = (
    rf"(?!\[REDACTED\])(?![A-Za-z][A-Za-z0-9+.-]*://)"
    rf"(?!{_VALUE_CHARS}*+(?:[(\[{{]|{_NAMED_LIKE_A_CREDENTIAL}))"
    rf"(?={_VALUE_CHARS_NO_DIGIT}*[0-9])"
    rf"(?={_VALUE_CHARS}{{8}}){_VALUE_CHARS}*{_VALUE_LAST}"
)
# A token68 (RFC 7235) of at least 16 characters with a digit, not ending with a full stop.
_TOKEN68 = (
    r"(?!\[REDACTED\])(?=[A-Za-z._~+/-]*[0-9])(?=[A-Za-z0-9._~+/-]{16})"
    r"[A-Za-z0-9._~+/-]*[A-Za-z0-9_~+/-]=*"
)
# `name: value`, `name=value`, `"name": "value"`, `\"name\": \"value\"`, `name => value`.
_ASSIGN = r"""(?:\\?["'])? *(?:[:=]>?) *(?:\\?["'])?"""
# What documentation writes for a password: `<password>`, `${DB_PASSWORD}`, `****`, `pass`.
_PLACEHOLDER = r"<[^<>@\s]*>|\$\{?\w+\}?|\{\w*\}|\*+|x+|X+|pass|password|passwd|PASSWORD|secret"
_AUTH_SCHEMES = "Bearer|bearer|BEARER|Token|token|TOKEN|Digest|digest|Bot|bot|ApiKey|Key|key"

_RULES: Final[tuple[_Rule, ...]] = (
    _Rule(
        "openai-anthropic-key",
        _word_heads("sk-"),
        keep=r"(?:ant-(?:[a-z]+[0-9]{2}-)?|proj-|svcacct-|admin-)?+",
        secret=r"(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}+",
    ),
    _Rule("google-api-key", _word_heads("AIza"), keep="", secret=r"[A-Za-z0-9_-]{30,}+"),
    _Rule(
        "github-token",
        _word_heads("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        keep="",
        secret=r"[A-Za-z0-9]{30,}+",
    ),
    _Rule("github-pat", _word_heads("github_pat_"), keep="", secret=r"[A-Za-z0-9_]{30,}+"),
    _Rule(
        "aws-access-key-id",
        _word_heads("AKIA", "ASIA"),
        keep="",
        secret=r"[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _Rule(
        "slack-token",
        _word_heads("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
        keep="",
        secret=r"(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}+",
    ),
    _Rule(
        "json-web-token",
        _word_heads("eyJ"),
        keep="",
        secret=r"[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+",
    ),
    _Rule(
        "pem-private-key",
        _free_heads("-----BEGIN "),
        keep=r"[A-Z0-9 ]*PRIVATE KEY-----(?!\[REDACTED\])",
        secret=r"(?:(?!-----END )[\s\S])*?[A-Za-z0-9+/]{16}[\s\S]*?",  # key material
        tail=r"-----END [A-Z0-9 ]*PRIVATE KEY-----",
    ),
    _Rule(
        "authorization-basic",
        _name_heads("Authorization", "authorization", "AUTHORIZATION"),
        keep=_ASSIGN + "(?:Basic|basic|BASIC) +",
        secret=r"[A-Za-z0-9+/]{8,}+={0,2}",
    ),
    _Rule(
        "authorization",
        _name_heads("Authorization", "authorization", "AUTHORIZATION"),
        keep=_ASSIGN + f"(?:(?:{_AUTH_SCHEMES}) +)?+",
        secret=_VALUE,
    ),
    _Rule(
        "bearer-token",
        _name_heads("Bearer", "bearer", "BEARER"),
        keep=" +",
        secret=_TOKEN68,
    ),
    _Rule(
        "url-password",
        _free_heads("://"),
        keep=r"""[^\s/@:"'\\]*:""",
        secret=rf"""(?!(?:\[REDACTED\]|{_PLACEHOLDER})@)[^\s/@"'\\]+""",
        tail="@",
    ),
    _Rule("credential-assignment", _credential_name_heads(), keep=_ASSIGN, secret=_VALUE),
)


@functools.cache
def _grouped_rules() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Every (head, rule) pair as its own regex with groups, compiled when first needed."""
    return tuple(
        (head, rule.grouped(head, boundary)) for rule in _RULES for head, boundary in rule.heads
    )


# ---------------------------------------------------------------------------------------------
# The combined regex: a trie of literal heads
# ---------------------------------------------------------------------------------------------


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    continuations: list[str] = field(default_factory=list)


def _trie_regex(entries: Iterable[tuple[str, str]]) -> str:
    """One regex for many `(literal head, continuation)` entries.

    Entries sharing a prefix share a branch, so at any position the engine follows at most one
    path of literals. Longer heads are tried before shorter ones (a longer secret wins), and at
    one head the continuations are tried in the order given, an empty one (a plain literal) last.
    """
    root = _Node()
    for head, continuation in entries:
        node = root
        for char in head:
            node = node.children.setdefault(char, _Node())
        if continuation not in node.continuations:
            node.continuations.append(continuation)
    return _node_regex(root)


def _node_regex(node: _Node) -> str:
    branches = []
    for char, child in node.children.items():
        label, end = char, child
        while len(end.children) == 1 and not end.continuations:  # a chain of single letters
            (next_char, end), *_ = end.children.items()
            label += next_char
        branches.append(re.escape(label) + _node_regex(end))
    branches.extend(f"(?:{c})" for c in node.continuations if c)
    if "" in node.continuations:
        branches.append("")
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


def _value_forms(value: str) -> Iterator[str]:
    """A secret as it may appear in text: itself and JSON-escaped."""
    yield value
    yield json.dumps(value, ensure_ascii=False)[1:-1]
    yield json.dumps(value)[1:-1]


# ---------------------------------------------------------------------------------------------
# The redactor
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _combined_pattern(literal_heads: tuple[str, ...]) -> re.Pattern[str]:
    """The regex for these secrets and every rule. Compiling it takes some tens of
    milliseconds, so redactors over the same secrets (each store opened in a process) share it."""
    entries = [(head, "") for head in literal_heads]
    for rule in _RULES:
        entries.extend((head, rule.continuation(boundary)) for head, boundary in rule.heads)
    return re.compile(_trie_regex(entries))


class Redactor:
    """Replaces secrets by `[REDACTED]` in text, JSON-like data and pydantic models.

    `values` are literal secrets, matched exactly (take them from `from_environment`, which
    chooses them; a value that is or contains `[REDACTED]` is skipped); the fixed key shapes
    and credential contexts are always applied. Build one per run: the regex is compiled on
    first use. Its secrets never change, it is safe to share between threads (it only
    remembers the dict keys it has judged), and its `repr` never shows a secret.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        secrets: set[str] = set()
        for value in values:
            if not value or REDACTED in value or value in REDACTED:
                continue
            secrets.update(_value_forms(value))
        self._secrets: frozenset[str] = frozenset(secrets)
        self._literal_heads = sorted(self._secrets, key=lambda s: (-len(s), s))
        self._keys: dict[str, tuple[str | None, bool]] = {}

    @functools.cached_property
    def _pattern(self) -> re.Pattern[str]:
        """The combined regex, compiled on first use."""
        return _combined_pattern(tuple(self._literal_heads))

    @functools.cached_property
    def _literals(self) -> re.Pattern[str] | None:
        """The literal secrets alone, to clean the text a rule keeps (rarely needed)."""
        if not self._literal_heads:
            return None
        return re.compile("|".join(re.escape(s) for s in self._literal_heads))

    @classmethod
    def from_environment(
        cls,
        env: Mapping[str, str] | None = None,
        extra: Iterable[str] = (),
        *,
        min_length: int = 8,
    ) -> Redactor:
        """A redactor for the secrets in `env` (default: `os.environ`) plus `extra`.

        From `env`, the values of variables whose name looks secret (`is_secret_env_name`),
        stripped, at least `min_length` characters long, and not a number or a flag word
        (`true`, `off`, `disabled`, ...). `extra` values are secrets the caller knows of: they
        are only stripped, whatever their length.
        """
        environ = os.environ if env is None else env
        values: list[str] = []
        for name, raw in environ.items():
            if is_secret_env_name(name):
                secret = _environment_secret(raw, min_length)
                if secret is not None:
                    values.append(secret)
        values.extend(s for s in (value.strip() for value in extra) if s)
        return cls(values)

    @property
    def secret_count(self) -> int:
        """How many literal secrets (in all their written forms) this redactor looks for."""
        return len(self._secrets)

    def __repr__(self) -> str:
        return f"Redactor({self.secret_count} secret values + fixed patterns)"

    def redact_text(self, text: str) -> str:
        """`text` with every secret replaced; the same object when there is none."""
        pattern = self._pattern
        if pattern.search(text) is None:
            return text
        # One pass nearly always does it. A mask can expose a word start that was glued to a
        # secret (`<secret>sk-...`), so run again until nothing changes: the result is stable.
        redacted = text
        for _ in range(_MAX_PASSES):
            again = pattern.sub(self._replace, redacted)
            if again == redacted:
                break
            redacted = again
        return text if redacted == text else redacted

    def redact_value(self, value: Any) -> Any:
        """JSON-like data (dicts, lists, tuples, strings, numbers, None) with secrets replaced.

        Every string is redacted (dict keys too), and a dict key that names a secret
        (`is_secret_key`) has its value replaced by `[REDACTED]` whatever it is (except None,
        booleans and "", which hide nothing). Other objects are returned as they are. When
        nothing changed the very same object is returned, so callers can skip copying; when
        something did, changed containers are new (dicts come back as plain dicts).
        """
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, dict):
            return self._redact_dict(value)
        if isinstance(value, list):
            items = self._redact_items(value)
            return value if items is None else items
        if isinstance(value, tuple):
            items = self._redact_items(value)
            if items is None:
                return value
            make = getattr(value, "_make", None)  # a named tuple keeps its type
            return make(items) if callable(make) else tuple(items)
        return value

    def redact_model(self, model: ModelT) -> ModelT:
        """`model` with secrets replaced: the same instance when there is nothing to redact,
        else a validated copy of the same type.

        The model is dumped to JSON-like data (`mode="json"`; an object pydantic cannot
        serialise becomes its `repr`), redacted with `redact_value`, and validated back. That
        walk is also the check: it allocates nothing while nothing changes, and it costs a
        little more than one regex search over `model_dump_json()` (measured on a 5 KB trial:
        about 0.16 ms against 0.10 ms), but unlike a search over JSON text it cannot miss a
        secret-named key (`{"api_key": "x"}`) or a secret that JSON escaping changed. A copy
        that no longer validates (a constrained field whose value was masked) raises pydantic's
        `ValidationError` rather than let the secret through.
        """
        data = model.model_dump(mode="json", round_trip=True, fallback=repr)
        redacted = self.redact_value(data)
        if redacted is data:
            return model
        return type(model).model_validate(redacted)

    # -----------------------------------------------------------------------------------------

    # The walk below is the hot path of `redact_model`: it allocates nothing until something
    # changes, and handles a string in place (one regex search) rather than by a call.

    def _redact_item(self, item: Any) -> Any:
        if isinstance(item, str):
            return item if self._pattern.search(item) is None else self.redact_text(item)
        if isinstance(item, dict | list | tuple):
            return self.redact_value(item)
        return item

    def _redact_items(self, items: list[Any] | tuple[Any, ...]) -> list[Any] | None:
        """The items redacted, or None when none changed."""
        out: list[Any] | None = None
        for index, item in enumerate(items):
            new_item = self._redact_item(item)
            if out is None:
                if new_item is item:
                    continue
                out = list(items[:index])
            out.append(new_item)
        return out

    def _redact_dict(self, value: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] | None = None
        remembered = self._keys
        search = self._pattern.search
        for index, (key, item) in enumerate(value.items()):
            new_key = key
            new_item = item
            if isinstance(key, str):
                known = remembered.get(key)
                if known is None:
                    known = self._remember(key)
                if known[0] is not None:
                    new_key = known[0]
                if known[1] and not _hides_nothing(item):
                    new_item = REDACTED
                elif isinstance(item, str):
                    if search(item) is not None:
                        new_item = self.redact_text(item)
                elif isinstance(item, dict):
                    new_item = self._redact_dict(item)
                elif isinstance(item, list | tuple):
                    new_item = self.redact_value(item)
            else:
                new_item = self._redact_item(item)
            if out is None:
                if new_key is key and new_item is item:
                    continue
                out = dict(itertools.islice(value.items(), index))
            out[new_key] = new_item
        return value if out is None else out

    def _remember(self, key: str) -> tuple[str | None, bool]:
        """A dict key redacted (None when it has no secret) and whether it names a secret;
        remembered, as the same keys come again and again."""
        redacted = self.redact_text(key)
        known = (None if redacted is key else redacted, is_secret_key(key))
        if len(self._keys) < _MAX_REMEMBERED_KEYS:
            self._keys[key] = known
        return known

    def _replace(self, match: re.Match[str]) -> str:
        found = match.group()
        if found in self._secrets:
            return REDACTED
        start, end = match.span()
        for head, grouped in _grouped_rules():
            if not found.startswith(head):
                continue
            parts = grouped.fullmatch(match.string, start, end)
            if parts is None:
                continue
            kept = match.string[start : parts.start("secret")]
            tail = parts.group("tail")
            if self._literals is not None:  # a secret inside the kept text: a URL's user name
                kept = self._literals.sub(REDACTED, kept)
                tail = self._literals.sub(REDACTED, tail)
            return kept + REDACTED + tail
        return REDACTED  # not reached: every match comes from a literal or a rule


def _hides_nothing(value: Any) -> bool:
    """Whether a secret-keyed value can stay: None, a boolean, "" or already `[REDACTED]`."""
    if value is None or isinstance(value, bool):
        return True
    return isinstance(value, str) and value in ("", REDACTED)


NULL_REDACTOR: Final = Redactor()
"""A redactor with no environment secrets: only the fixed key shapes, contexts and key names."""
