"""The fixed rules, applied whatever the environment: well-known key shapes (`sk-...`, `ghp_...`,
`AKIA...`, JSON Web Tokens, PEM private keys) and credentials by context (`Bearer`, an
`Authorization` header, a URL's password, values assigned to credential names in text).

A rule is data: literal heads, each with the boundary that must precede it, then what is kept,
the secret and a kept tail. `agenteval.redaction.regex` compiles all of them into one regex.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from agenteval.redaction.names import CURSOR_WORDS


@dataclass(frozen=True)
class Boundary:
    """What must precede a head for it to count: every clause holds, and a clause holds when
    one of its lookbehinds does. A lookbehind is `(must match, fixed-width pattern)`.

    Kept as data rather than regex text so the combined regex can check it once for many heads,
    after the first characters they share (`after`), instead of once at the end of every head.
    """

    clauses: tuple[tuple[tuple[bool, str], ...], ...] = ()

    def __add__(self, other: Boundary) -> Boundary:
        return Boundary(self.clauses + other.clauses)

    def after(self, consumed: str) -> str:
        """The zero-width checks, placed right after `consumed`, the first characters of the head
        (each lookbehind reaches past them to what precedes the head)."""
        literal = re.escape(consumed)
        checks = []
        for clause in self.clauses:
            looks = [f"(?{'<=' if must else '<!'}{pattern}{literal})" for must, pattern in clause]
            checks.append(looks[0] if len(looks) == 1 else "(?:" + "|".join(looks) + ")")
        return "".join(checks)


NO_BOUNDARY: Final = Boundary()


def _not_after(chars: str) -> Boundary:
    """The head is not preceded by one of `chars`, unless that character ends an escape such
    as `\\n` (so escaped text still has words)."""
    return Boundary((((False, chars), (True, r"\\[nrtbf]")),))


def _after(chars: str) -> Boundary:
    """The head is preceded by one of `chars`."""
    return Boundary((((True, chars),),))


_WORD = r"\w"
_PEM_BODY = r"[A-Za-z0-9+/=:,\- \t\r\n]|\\+[nrt]"
"""A character of a PEM block's body (base64, an encrypted key's `Proc-Type`/`DEK-Info`
headers, line ends), or a line end escaped in JSON (once or more)."""
_ALNUM = "[A-Za-z0-9]"


@dataclass(frozen=True)
class Rule:
    """A fixed rule: literal heads (each with its boundary check), then what is kept, the secret
    itself and a kept tail. The replacement is `head + keep + [REDACTED] + tail`."""

    name: str
    heads: tuple[tuple[str, Boundary], ...]
    keep: str
    secret: str
    tail: str = ""

    @property
    def body(self) -> str:
        """What follows a head and its boundary in the combined regex (no capturing groups)."""
        return f"(?:{self.keep})(?:{self.secret})(?:{self.tail})"

    def grouped(self, head: str, boundary: Boundary) -> re.Pattern[str]:
        """The rule for one head, with `secret` and `tail` groups, to rebuild a replacement."""
        return re.compile(
            f"{re.escape(head)}{boundary.after(head)}(?:{self.keep})"
            f"(?P<secret>{self.secret})(?P<tail>{self.tail})"
        )


def _word_heads(*heads: str) -> tuple[tuple[str, Boundary], ...]:
    return tuple((head, _not_after(_WORD)) for head in heads)


def _name_heads(*heads: str) -> tuple[tuple[str, Boundary], ...]:
    return tuple((head, _not_after(_ALNUM)) for head in heads)


def _free_heads(*heads: str) -> tuple[tuple[str, Boundary], ...]:
    return tuple((head, NO_BOUNDARY) for head in heads)


def _case_forms(word: str) -> tuple[str, str, str]:
    return word.lower(), word.upper(), word.capitalize()


def _not_cursor(cursors: Iterable[str], case: Callable[[str], str]) -> Boundary:
    """The head does not end a cursor's name: it does not come right after a cursor word."""
    return Boundary(tuple(((False, re.escape(case(cursor))),) for cursor in cursors))


def _credential_name_heads() -> tuple[tuple[str, Boundary], ...]:
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
    heads: dict[str, Boundary] = {}
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
        cursors = CURSOR_WORDS if word == "token" else ()
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

RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "openai-anthropic-key",
        _word_heads("sk-"),
        keep=r"(?:ant-(?:[a-z]+[0-9]{2}-)?|proj-|svcacct-|admin-)?+",
        secret=r"(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}+",
    ),
    Rule("google-api-key", _word_heads("AIza"), keep="", secret=r"[A-Za-z0-9_-]{30,}+"),
    Rule(
        "github-token",
        _word_heads("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        keep="",
        secret=r"[A-Za-z0-9]{30,}+",
    ),
    Rule("github-pat", _word_heads("github_pat_"), keep="", secret=r"[A-Za-z0-9_]{30,}+"),
    Rule(
        "stripe-key",
        _word_heads("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
        keep="",
        secret=r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{16,}+",
    ),
    Rule(
        "aws-access-key-id",
        _word_heads("AKIA", "ASIA"),
        keep="",
        secret=r"[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    Rule(
        "slack-token",
        _word_heads("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
        keep="",
        secret=r"(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}+",
    ),
    Rule(
        "json-web-token",
        _word_heads("eyJ"),
        keep="",
        secret=r"[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+",
    ),
    Rule(
        "pem-private-key",
        _free_heads("-----BEGIN "),
        keep=r"[A-Z0-9 ]*PRIVATE KEY-----(?!\[REDACTED\])",
        # Key material, never across a `"`: a PEM block holds none, and in a stored record's
        # JSON one ends the string, so a cut block in one string (a reason quoting the answer
        # cut short) must not be masked through to a whole key's end in a later one, leaving
        # the record unreadable JSON (tests/test_redaction_pem_json.py).
        secret=r'(?:(?!-----END )[^"])*?[A-Za-z0-9+/]{16}[^"]*?',
        tail=r"-----END [A-Z0-9 ]*PRIVATE KEY-----",
    ),
    Rule(
        # A block cut short, with no END line in the same string: exact_match quotes a long
        # answer cut at a few hundred characters, which left a key's first lines in its score
        # (tests/test_redaction_pem_cut.py). Tried only where the whole block above fails (the
        # same head, after it); masks the run of key material, encrypted headers included,
        # up to the first character no PEM body holds (a quote, `…`, `.`).
        "pem-private-key-cut",
        _free_heads("-----BEGIN "),
        keep=r"[A-Z0-9 ]*PRIVATE KEY-----(?!\[REDACTED\])",
        secret=rf"(?=(?:{_PEM_BODY})*?[A-Za-z0-9+/]{{16}})(?:{_PEM_BODY})++",
    ),
    Rule(
        "authorization-basic",
        _name_heads("Authorization", "authorization", "AUTHORIZATION"),
        keep=_ASSIGN + "(?:Basic|basic|BASIC) +",
        secret=r"[A-Za-z0-9+/]{8,}+={0,2}",
    ),
    Rule(
        "authorization",
        _name_heads("Authorization", "authorization", "AUTHORIZATION"),
        keep=_ASSIGN + f"(?:(?:{_AUTH_SCHEMES}) +)?+",
        secret=_VALUE,
    ),
    Rule(
        "bearer-token",
        _name_heads("Bearer", "bearer", "BEARER"),
        keep=" +",
        secret=_TOKEN68,
    ),
    Rule(
        "url-password",
        _free_heads("://"),
        keep=r"""[^\s/@:"'\\]*:""",
        secret=rf"""(?!(?:\[REDACTED\]|{_PLACEHOLDER})@)[^\s/@"'\\]+""",
        tail="@",
    ),
    Rule("credential-assignment", _credential_name_heads(), keep=_ASSIGN, secret=_VALUE),
)


RULE_HEADS: Final = tuple(
    (head, rule_index, head_index)
    for rule_index, rule in enumerate(RULES)
    for head_index, (head, _) in enumerate(rule.heads)
)
"""Every (head, rule) pair, in the order the rules are tried to rebuild a replacement."""


@functools.cache
def grouped_rule(rule_index: int, head_index: int) -> re.Pattern[str]:
    """One head's rule as a regex with groups. Compiled the first time a match needs it:
    compiling all of them up front would cost as much as the old combined regex did."""
    rule = RULES[rule_index]
    head, boundary = rule.heads[head_index]
    return rule.grouped(head, boundary)
