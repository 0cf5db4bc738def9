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
  AWS access key ids `AKIA…`/`ASIA…`, Slack `xoxa-`/`xoxb-`/`xoxp-`/`xoxr-`/`xoxs-`, Stripe
  `sk_live_…`/`sk_test_…`/`rk_live_…`/`rk_test_…`/`whsec_…` (with a digit, as an `sk-` key),
  JSON Web Tokens, PEM private key blocks.
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

Everything is compiled into one regular expression: a trie of literal heads (environment values,
key prefixes, header and credential names), then what must come after the head that matched,
written once for all the heads that share it (see `_combined_regex`), compiled on first use (about
10 milliseconds). Every top-level branch starts with a literal character, so the regex engine
skips ahead to candidate positions: searching 200 characters of ordinary text takes about 3
microseconds, and `redact_text` then returns the very same string object. When something
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
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel

from agenteval.jsonsafe import Hide, plain_copy

__all__ = [
    "NULL_REDACTOR",
    "REDACTED",
    "Redactor",
    "is_secret_env_name",
    "is_secret_key",
    "mask_secret_keys",
    "masked_json",
    "public_url",
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


@dataclass(frozen=True)
class _Boundary:
    """What must precede a head for it to count: every clause holds, and a clause holds when
    one of its lookbehinds does. A lookbehind is `(must match, fixed-width pattern)`.

    Kept as data rather than regex text so the combined regex can check it once for many heads,
    after the first characters they share (`after`), instead of once at the end of every head.
    """

    clauses: tuple[tuple[tuple[bool, str], ...], ...] = ()

    def __add__(self, other: _Boundary) -> _Boundary:
        return _Boundary(self.clauses + other.clauses)

    def after(self, consumed: str) -> str:
        """The zero-width checks, placed right after `consumed`, the first characters of the head
        (each lookbehind reaches past them to what precedes the head)."""
        literal = re.escape(consumed)
        checks = []
        for clause in self.clauses:
            looks = [f"(?{'<=' if must else '<!'}{pattern}{literal})" for must, pattern in clause]
            checks.append(looks[0] if len(looks) == 1 else "(?:" + "|".join(looks) + ")")
        return "".join(checks)


_NO_BOUNDARY: Final = _Boundary()


def _not_after(chars: str) -> _Boundary:
    """The head is not preceded by one of `chars`, unless that character ends an escape such
    as `\\n` (so escaped text still has words)."""
    return _Boundary((((False, chars), (True, r"\\[nrtbf]")),))


def _after(chars: str) -> _Boundary:
    """The head is preceded by one of `chars`."""
    return _Boundary((((True, chars),),))


_WORD = r"\w"
_ALNUM = "[A-Za-z0-9]"


@dataclass(frozen=True)
class _Rule:
    """A fixed rule: literal heads (each with its boundary check), then what is kept, the secret
    itself and a kept tail. The replacement is `head + keep + [REDACTED] + tail`."""

    name: str
    heads: tuple[tuple[str, _Boundary], ...]
    keep: str
    secret: str
    tail: str = ""

    @property
    def body(self) -> str:
        """What follows a head and its boundary in the combined regex (no capturing groups)."""
        return f"(?:{self.keep})(?:{self.secret})(?:{self.tail})"

    def grouped(self, head: str, boundary: _Boundary) -> re.Pattern[str]:
        """The rule for one head, with `secret` and `tail` groups, to rebuild a replacement."""
        return re.compile(
            f"{re.escape(head)}{boundary.after(head)}(?:{self.keep})"
            f"(?P<secret>{self.secret})(?P<tail>{self.tail})"
        )


def _word_heads(*heads: str) -> tuple[tuple[str, _Boundary], ...]:
    return tuple((head, _not_after(_WORD)) for head in heads)


def _name_heads(*heads: str) -> tuple[tuple[str, _Boundary], ...]:
    return tuple((head, _not_after(_ALNUM)) for head in heads)


def _free_heads(*heads: str) -> tuple[tuple[str, _Boundary], ...]:
    return tuple((head, _NO_BOUNDARY) for head in heads)


def _case_forms(word: str) -> tuple[str, str, str]:
    return word.lower(), word.upper(), word.capitalize()


def _not_cursor(cursors: Iterable[str], case: Callable[[str], str]) -> _Boundary:
    """The head does not end a cursor's name: it does not come right after a cursor word."""
    return _Boundary(tuple(((False, re.escape(case(cursor))),) for cursor in cursors))


def _credential_name_heads() -> tuple[tuple[str, _Boundary], ...]:
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
    heads: dict[str, _Boundary] = {}
    for words in compounds:
        lower = [w.lower() for w in words]
        separators = ("_", "-", "") if len(words) > 1 else ("",)
        for sep in separators:
            heads[sep.join(lower)] = _not_after(_ALNUM)
            heads[sep.join(lower).upper()] = _not_after(_ALNUM)
            title = sep.join(w.capitalize() for w in lower)  # Api-Key, ApiKey, Password
            heads[title] = _not_after("[A-Z]")  # camelCase joins: dbPassword
        if len(words) > 1:
            camel = lower[0] + "".join(w.capitalize() for w in lower[1:])  # apiKey
            heads[camel] = _not_after(_ALNUM)
            if lower[0] == "api":
                for sep in ("_", "-", ""):
                    acronym = "API" + sep + sep.join(w.capitalize() for w in lower[1:])
                    heads[acronym] = _not_after(_ALNUM)  # X-API-Key, API_Key
    # `token` and `secret` alone are ordinary words; as the last part of a name they are not:
    # HF_TOKEN=, x-auth-token:, webhook_secret=, accessToken:, clientSecret:. Pagination
    # cursors (page_token=, nextPageToken:) are not credentials.
    for word in ("token", "secret"):
        small, capital, title = _case_forms(word)
        cursors = _CURSOR_WORDS if word == "token" else ()
        for sep in ("_", "-"):
            heads[sep + small] = _not_cursor(cursors, str.lower)
            heads[sep + capital] = _not_cursor(cursors, str.upper)
        heads["-" + title] = _not_cursor(cursors, str.capitalize)  # X-Auth-Token
        heads[title] = (  # accessToken
            _after("[a-z0-9]") + _not_cursor(cursors, str.lower) + _not_cursor(cursors, str.title)
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
        "stripe-key",
        _word_heads("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
        keep="",
        secret=r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{16,}+",
    ),
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


_RULE_HEADS: Final = tuple(
    (head, rule_index, head_index)
    for rule_index, rule in enumerate(_RULES)
    for head_index, (head, _) in enumerate(rule.heads)
)
"""Every (head, rule) pair, in the order the rules are tried to rebuild a replacement."""


@functools.cache
def _grouped(rule_index: int, head_index: int) -> re.Pattern[str]:
    """One head's rule as a regex with groups. Compiled the first time a match needs it:
    compiling all of them up front would cost as much as the old combined regex did."""
    rule = _RULES[rule_index]
    head, boundary = rule.heads[head_index]
    return rule.grouped(head, boundary)


# ---------------------------------------------------------------------------------------------
# The combined regex: a trie of literal heads, then the body of the rule whose head matched
# ---------------------------------------------------------------------------------------------


@dataclass
class _Node:
    """A node of the trie of heads: the heads through it continue with one of its children."""

    children: dict[str, _Node] = field(default_factory=dict)
    entries: list[tuple[_Boundary, str]] = field(default_factory=list)
    """`(boundary, body)` of the heads ending here, in the order given."""
    boundaries: set[_Boundary] = field(default_factory=set)
    bodies: set[str] = field(default_factory=set)
    """The boundaries and bodies of every head through this node."""


def _combined_regex(entries: Iterable[tuple[str, _Boundary, str]]) -> str:
    """One regex for many `(literal head, boundary, body)` entries: at any position it matches
    what the alternation of `head + boundary + body`, longest head first, would match there.

    The heads form a trie, so the engine follows at most one path of literals, and every
    top-level branch starts with a literal character, so the engine skips straight to candidate
    positions. Longer heads are tried before shorter ones (a longer secret wins), and at one
    head the entries in the order given, a plain literal (empty body) last.

    A body shared by several heads is written once, after the trie, rather than after each of
    them (107 credential names share one; copied 107 times it took ~70 ms to compile): each
    subtree whose heads all lead to it is a named group, and after the trie comes the body of
    the group that took part in the match. When that body fails, the engine backtracks into
    the trie and tries the next head, exactly as with the body written after every head. A
    body that follows one head stays right after it, where a failing match costs least (`://`
    comes with every URL). Likewise a boundary shared by a subtree is checked once where its
    heads have a few characters in common, looking back past them. (A body or a boundary
    before a trie of heads would cost the literal first characters that make searching fast.)
    """
    root = _Node()
    heads_of: dict[str, set[str]] = {}
    for head, boundary, body in entries:
        node = root
        for char in head:
            node = node.children.setdefault(char, _Node())
            node.boundaries.add(boundary)
            node.bodies.add(body)
        if (boundary, body) not in node.entries:
            node.entries.append((boundary, body))
        heads_of.setdefault(body, set()).add(head)
    shared = frozenset(body for body, heads in heads_of.items() if body and len(heads) > 1)
    writer = _TrieWriter(shared)
    trie = writer.node(root, "", checked=False, grouped=False)
    return f"(?:{trie}){writer.tail()}"


_CHECK_DEPTH: Final = 3
"""How many characters of a head are read before a boundary shared by several is checked:
fewer, and the lookbehinds run at every common letter of ordinary text."""


class _TrieWriter:
    """Writes a trie of `_Node`s as a regex, with a named group for each subtree whose heads
    all lead to one shared body, and that body after the trie."""

    def __init__(self, shared: frozenset[str]) -> None:
        self._shared = shared
        self._groups: dict[str, list[str]] = {}
        self._count = 0

    def node(self, node: _Node, path: str, *, checked: bool, grouped: bool) -> str:
        """The regex for the subtree of `node`, reached by reading `path`. `checked`: every
        boundary below has been checked; `grouped`: an enclosing group names every body below."""
        check = ""
        if not checked and len(path) >= _CHECK_DEPTH and len(node.boundaries) == 1:
            (boundary,) = node.boundaries
            check, checked = boundary.after(path), True
        branches = []
        for char, child in node.children.items():
            label, end = char, child
            while len(end.children) == 1 and not end.entries:  # a chain of single letters
                (next_char, end), *_ = end.children.items()
                label += next_char
            (body, *others) = end.bodies
            if grouped or others or body not in self._shared:
                rest = self.node(end, path + label, checked=checked, grouped=grouped)
            else:  # every head below leads to one shared body: name it once, here
                inner = self.node(end, path + label, checked=checked, grouped=True)
                rest = self._group(body, inner)
            branches.append(re.escape(label) + rest)
        for boundary, body in sorted(node.entries, key=lambda entry: entry[1] == ""):
            own = "" if checked else boundary.after(path)
            if not grouped:
                own = self._group(body, own) if body in self._shared else own + body
            branches.append(own)
        if len(branches) == 1:
            return check + branches[0]
        return check + "(?:" + "|".join(branches) + ")"

    def _group(self, body: str, regex: str) -> str:
        name = f"b{self._count}"
        self._count += 1
        self._groups.setdefault(body, []).append(name)
        return f"(?P<{name}>{regex})"

    def tail(self) -> str:
        """What follows the trie: the body of the group that took part in the match, if any.

        An atomic group first notes which body that is (each of its alternatives checks the
        groups leading to one body, a chain of conditionals), then conditionals pick the body.
        So when the body fails, as it does after almost every head found in ordinary text,
        nothing here is tried again: the engine goes straight back into the trie.
        """
        if not self._groups:
            return ""
        # Most heads lead to the credential names' body: check its groups first.
        bodies = sorted(self._groups, key=lambda body: -len(self._groups[body]))
        picks = []
        for index, body in enumerate(bodies):
            took_part = "(?!)"
            for name in self._groups[body]:
                took_part = f"(?({name})|{took_part})"
            picks.append(f"{took_part}(?P<t{index}>)")
        chosen = ""
        for index in reversed(range(len(bodies))):
            chosen = f"(?(t{index}){bodies[index]}|{chosen})"
        return f"(?>{'|'.join(picks)}|){chosen}"


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
    """The regex for these secrets and every rule. Compiling it takes some milliseconds, so
    redactors over the same secrets (each store opened in a process) share it."""
    entries: list[tuple[str, _Boundary, str]] = [(head, _NO_BOUNDARY, "") for head in literal_heads]
    for rule in _RULES:
        entries.extend((head, boundary, rule.body) for head, boundary in rule.heads)
    return re.compile(_combined_regex(entries))


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
        for head, rule_index, head_index in _RULE_HEADS:
            if not found.startswith(head):
                continue
            parts = _grouped(rule_index, head_index).fullmatch(match.string, start, end)
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


# ---------------------------------------------------------------------------------------------
# Data written out as text
# ---------------------------------------------------------------------------------------------

_SECRET_KEYS: Final = Hide(secret=is_secret_key, fields=frozenset(), mask=REDACTED)


def mask_secret_keys(value: Any) -> Any:
    """`value` as plain JSON data with the values under secret-named keys (`is_secret_key`)
    masked at any depth, cut past `jsonsafe.MAX_DEPTH` levels and where it contains itself;
    never fails, and `value` is not changed.

    For what agenteval writes as text out of what an agent did (a judge prompt showing tool
    calls, a score's reason quoting an argument): once written, `"password": "correct horse"`
    no longer looks like a secret to `Redactor.redact_text`, so the key has to be seen while it
    is still data. Text shapes and environment secrets are left to `Redactor.redact_text`.
    """
    return plain_copy(value, _SECRET_KEYS)[0]


def masked_json(value: Any, *, sort_keys: bool = False) -> str:
    """`mask_secret_keys(value)` as JSON text (non-ASCII kept); never fails."""
    return json.dumps(mask_secret_keys(value), ensure_ascii=False, sort_keys=sort_keys)


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
