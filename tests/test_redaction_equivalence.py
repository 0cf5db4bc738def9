"""The combined redaction regex finds exactly what the one it replaced found.

The old regex was a trie of literal heads with each rule's whole continuation (boundary and
body) written after every head: 107 copies of the credential body, about 100 ms to compile.
The new one writes a shared body once after the trie and checks a shared boundary once where
its heads part. Here the old regex is rebuilt from the same `_RULES`, as the old code built it,
and both must find the same spans and give the same redacted text on a corpus of positives,
negatives, near misses, escapes, JSON, glued secrets and secrets that collide with rule heads.

Every key below is made up here and assembled at run time (a prefix plus filler).
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval import redaction
from agenteval.redaction import REDACTED, Redactor
from agenteval.redaction.rules import RULES

# --- the old construction, kept here only as the reference ------------------------------------


@dataclass
class _OldNode:
    children: dict[str, _OldNode] = field(default_factory=dict)
    continuations: list[str] = field(default_factory=list)


def _old_trie_regex(entries: Iterable[tuple[str, str]]) -> str:
    root = _OldNode()
    for head, continuation in entries:
        node = root
        for char in head:
            node = node.children.setdefault(char, _OldNode())
        if continuation not in node.continuations:
            node.continuations.append(continuation)
    return _old_node_regex(root)


def _old_node_regex(node: _OldNode) -> str:
    branches = []
    for char, child in node.children.items():
        label, end = char, child
        while len(end.children) == 1 and not end.continuations:
            (next_char, end), *_ = end.children.items()
            label += next_char
        branches.append(re.escape(label) + _old_node_regex(end))
    branches.extend(f"(?:{c})" for c in node.continuations if c)
    if "" in node.continuations:
        branches.append("")
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


@functools.cache
def _old_pattern(literal_heads: tuple[str, ...]) -> re.Pattern[str]:
    """The old combined regex: every head followed by its own boundary and its rule's body."""
    entries = [(head, "") for head in literal_heads]
    for rule in RULES:
        entries.extend((head, boundary.after(head) + rule.body) for head, boundary in rule.heads)
    return re.compile(_old_trie_regex(entries))


@functools.cache
def _old_grouped_rules() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple(
        (head, rule.grouped(head, boundary)) for rule in RULES for head, boundary in rule.heads
    )


class OldRedactor(Redactor):
    """A redactor as it was: the old regex, and every rule's grouped regex compiled up front."""

    @functools.cached_property
    def _pattern(self) -> re.Pattern[str]:
        return _old_pattern(tuple(self._literal_heads))

    def _replace(self, match: re.Match[str]) -> str:
        found = match.group()
        if found in self._secrets:
            return REDACTED
        start, end = match.span()
        for head, grouped in _old_grouped_rules():
            if not found.startswith(head):
                continue
            parts = grouped.fullmatch(match.string, start, end)
            if parts is None:
                continue
            kept = match.string[start : parts.start("secret")]
            tail = parts.group("tail")
            if self._literals is not None:
                kept = self._literals.sub(REDACTED, kept)
                tail = self._literals.sub(REDACTED, tail)
            return kept + REDACTED + tail
        return REDACTED


# --- secrets and corpus -----------------------------------------------------------------------


def fake(prefix: str, length: int, alphabet: str = "Fake0123456789xyzXYZ") -> str:
    return prefix + (alphabet * (length // len(alphabet) + 1))[:length]


OPENAI_KEY = fake("sk-proj-", 48)
ANTHROPIC_KEY = fake("sk-ant-api03-", 93)
LEGACY_OPENAI_KEY = fake("sk-", 48)
GOOGLE_KEY = fake("AIza", 35)
GITHUB_TOKEN = fake("ghp_", 36)
GITHUB_PAT = fake("github_pat_", 82, "Fake0123456789_abc")
AWS_KEY_ID = fake("AKIA", 16, "FAKE0123456789")
SLACK_TOKEN = fake("xoxb-", 40, "0123456789-Fake")
JWT = ".".join([fake("eyJ", 20), fake("eyJ", 30), fake("", 43, "Fake0123456789-_")])
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0fake\n-----END RSA PRIVATE KEY-----"
KEYS = [
    OPENAI_KEY,
    ANTHROPIC_KEY,
    LEGACY_OPENAI_KEY,
    GOOGLE_KEY,
    GITHUB_TOKEN,
    GITHUB_PAT,
    AWS_KEY_ID,
    SLACK_TOKEN,
    JWT,
    PEM,
]

ENV = {
    "OPENAI_API_KEY": OPENAI_KEY,
    "MY_SERVICE_TOKEN": "Tok3n-for-my-service",
    "DB_PASSWORD": "hunter2hunter2",
    "SMTP_PASS": "p4ss-w0rd-smtp",
    "WEBHOOK_SECRET": ' quoted"secret\\value ',
    "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
    "SHORT_TOKEN": "abc123",
}
# Literal secrets that collide with rule heads: equal to one, a prefix of one, extending one,
# shorter than one, or glued to a value; a literal and a rule then compete at one position.
COLLIDING = [
    "Bearer",
    "pass",
    "gh",
    "sk-proj-",
    "api_key=abc123def456",
    "secret_key_value_1",
    "Token",
    "-----BEGIN ",
    "://user",
    "auth",
    "xoxb-12345",
    "passwordpassword9",
    "AuthorizationX1",
    "_token",
    "a",
]

REDACTORS = {
    "no secrets": (),
    "environment": tuple(v for v in ENV.values()),
    "colliding": tuple(COLLIDING),
    "environment and colliding": (*ENV.values(), *COLLIDING),
}

POSITIVES = [
    f"key {LEGACY_OPENAI_KEY}",
    f"key {OPENAI_KEY}.",
    f"anthropic={ANTHROPIC_KEY}",
    f"?key={GOOGLE_KEY}&q=1",
    f"push with {GITHUB_TOKEN}",
    f"token: {GITHUB_PAT}",
    f"aws {AWS_KEY_ID} us-east-1",
    f"slack {SLACK_TOKEN}",
    f"jwt {JWT} end",
    PEM,
    "Authorization: Bearer abcDEF0123456789xyz",
    "authorization: Basic dXNlcjpwYXNzd29yZA==",
    "{'Authorization': 'token 0123abcd4567efgh'}",
    "sent header Bearer abcDEF0123456789xyz.",
    "postgres://app:s3cr3t-pw@db.example.com:5432/evals",
    "https://:only-password@host/",
    "https://hunter2hunter2:pw-1@db.internal/app",
    "retrying with api_key=abc123def456",
    '{"password": "correct-horse-42"}',
    '{\\"client_secret\\": \\"cs-0123456789\\"}',
    "GITHUB_TOKEN=gho0123456789abcdef",
    "X-Auth-Token: 0123456789abcdef",
    "accessToken: 'a1b2c3d4e5f6'",
    "repr: 'line one\\nsk-0123456789abcdefghijKLMN'",
    f"Incorrect API key provided: {OPENAI_KEY}. You can find your key at ...",
    "token=Tok3n-for-my-service; pw hunter2hunter2 and p4ss-w0rd-smtp (again hunter2hunter2)",
    json.dumps({"error": 'bad signature quoted"secret\\value'}),
    f"hunter2hunter2{ANTHROPIC_KEY}",
    "the pin is pin-42.",
]
NEGATIVES = [
    "client = OpenAI(api_key=os.getenv('OPENAI_API_KEY'))",
    "export OPENAI_API_KEY=sk-your-key-here-xxxxxxxxxxxx",
    "curl -H 'Authorization: Bearer YOUR_API_TOKEN' https://api.example.com",
    "Authorization: Bearer <token>",
    "api_key=OPENAI_API_KEY",
    "password: ${DB_PASSWORD}",
    "headers = {'Authorization': f'Bearer {token}'}",
    'headers = {"X-aws-ec2-metadata-token": imdsv2_session_token}',
    'MARKERS = ("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----")',
    "postgres://user:pass@localhost:5432/db or socks5h://<user>:<password>@proxy-host",
    "redis://:${REDIS_PASSWORD}@cache:6379/0",
    'continuation_token="dG9rX2hvcF8x", nextPageToken: abc123def456',
    "token_url: https://auth.example.com/oauth2/v1/token",
    "the bearer of good news; authorization: pending",
    "ask-questions-politely-and-wait, risk-free, task-12345678901234567890",
    "The capital of France is Paris. Tokens used: 120 (prompt 100, completion 20).",
    "The monkey sat on the keyboard; the key is under the mat, and that's no secret.",
    "See https://docs.example.com/v2/api/tokens?page=2#limits and http://localhost:8080/health",
    "Call search(query='weather in Paris', limit=5) then summarize. max_tokens=4096",
    "Authentication failed: invalid token. Rotate the secret key and retry.",
    "abc123 true false 4096000000 Alice Example anonymous /home/alice/.Xauthority",
    "日本語の回答です。naïve café — 21°C, 50% humidity.",
]
BEFORE = ["", " ", "x", "X", "1", "_", "-", ".", '"', "'", "\\n", "\\t", "\\x", "\n", "my", "db"]
BEFORE_CURSORS = ["page", "Page", "PAGE", "next", "Next", "max", "MAX", "continuation", "sync"]
ASSIGNS = ["=", ": ", ' = "', '": "', '\\": \\"', " => ", "='", ":", " ", "=\n"]
VALUES = [
    "abc123def456",
    "correct-horse-42",
    "Bearer abcDEF0123456789xyz",
    "Basic dXNlcjpwYXNzd29yZA==",
    "token 0123abcd4567efgh",
    "0123456789abcdef.",
    "short1",
    "no-digits-here-at-all",
    "os.getenv('X1234567')",
    "self.session_token1",
    "https://example.com/a1b2c3d4",
    "[REDACTED]",
    "${DB_PASSWORD}",
    "a1b2c3d4e5f6,next",
    OPENAI_KEY,
]


def _case_variants(head: str) -> set[str]:
    return {head, head.lower(), head.upper(), head.swapcase(), head.title(), head.capitalize()}


def _near_misses(head: str) -> Iterator[str]:
    yield head[:-1]
    yield head[1:]
    yield head + "s"
    yield head + head[-1]
    if len(head) > 2:
        middle = len(head) // 2
        yield head[:middle] + "_" + head[middle:]
        yield head[:middle] + head[middle + 1 :]


def _rule_heads() -> list[str]:
    return list(dict.fromkeys(head for rule in RULES for head, _ in rule.heads))


def corpus() -> list[str]:
    """Hundreds of strings, deterministic: every rule head in every context that matters."""
    texts: list[str] = [*POSITIVES, *NEGATIVES, *KEYS]
    heads = _rule_heads()
    for head in heads:
        for variant in sorted(_case_variants(head) | set(_near_misses(head))):
            texts.append(f"{variant}=abc123def456")
            texts.append(f'{{"{variant}": "correct-horse-42"}}')
        for before in BEFORE + BEFORE_CURSORS:
            texts.append(
                f"{before}{head}=abc123def456 and {before}{head}: Bearer 0123456789abcdefgh"
            )
        for assign, value in zip(ASSIGNS * 2, VALUES, strict=False):
            texts.append(f"{head}{assign}{value}")
    for key in KEYS:
        for before in BEFORE:
            texts.append(f"{before}{key}")  # glued to a word, after an escape
        texts.append(f"{key}{key}")
        texts.append(f"hunter2hunter2{key}")
        texts.append(key[:-3])
        texts.append(key.lower())
    # Secrets and heads glued together, in random order (seeded, so the corpus is stable).
    rng = random.Random(20261130)
    pieces = [*heads, *KEYS, *COLLIDING, *ENV.values(), *ASSIGNS, *VALUES, *BEFORE, "@", "://"]
    for _ in range(400):
        texts.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))))
    # And all of it as it appears in JSON: escaped, and inside a stored record.
    escaped = [json.dumps(text)[1:-1] for text in texts]
    records = [json.dumps({"output": text, "usage": {"input_tokens": 3}}) for text in texts[::7]]
    return list(dict.fromkeys(itertools.chain(texts, escaped, records)))


CORPUS = corpus()


# --- the comparison ---------------------------------------------------------------------------


def _differences(values: tuple[str, ...], texts: Iterable[str]) -> list[tuple[str, str, str]]:
    new, old = Redactor(values), OldRedactor(values)
    found = []
    for text in texts:
        new_spans = [m.span() for m in new._pattern.finditer(text)]
        old_spans = [m.span() for m in old._pattern.finditer(text)]
        if new_spans != old_spans:
            found.append((text, f"spans {new_spans}", f"spans {old_spans}"))
            continue
        new_text, old_text = new.redact_text(text), old.redact_text(text)
        if new_text != old_text:
            found.append((text, new_text, old_text))
    return found


def test_the_corpus_is_large_and_finds_both_secrets_and_none() -> None:
    redactor = Redactor(REDACTORS["environment"])
    changed = sum(redactor.redact_text(text) != text for text in CORPUS)
    assert len(CORPUS) > 3000
    assert 500 < changed < len(CORPUS) - 500


@pytest.mark.parametrize("values", REDACTORS.values(), ids=REDACTORS.keys())
def test_the_new_regex_finds_what_the_old_one_found(values: tuple[str, ...]) -> None:
    differences = _differences(values, CORPUS)
    assert differences == [], differences[:5]


FRAGMENTS = [*_rule_heads(), *KEYS, *COLLIDING, *ASSIGNS, *VALUES, *BEFORE, "@", "[REDACTED]"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(list(REDACTORS.values())),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=12).map("".join),
)
def test_the_new_regex_finds_what_the_old_one_found_in_any_mix(
    values: tuple[str, ...], text: str
) -> None:
    assert _differences(values, [text]) == []


# The comparison above builds the old regex from the same rules, so it cannot notice a boundary
# that now means something else. These do: each kind of boundary, as the old code decided it.
BOUNDARIES = [
    ("page_token=abc123def456", "page_token=abc123def456"),  # a cursor
    ("my_token=abc123def456", "my_token=[REDACTED]"),
    ("PAGE-TOKEN: abc123def456", "PAGE-TOKEN: abc123def456"),
    ("X-AUTH-TOKEN: abc123def456", "X-AUTH-TOKEN: [REDACTED]"),
    ("Page-Token: abc123def456", "Page-Token: abc123def456"),
    ("X-Auth-Token: abc123def456", "X-Auth-Token: [REDACTED]"),
    ("nextPageToken: abc123def456", "nextPageToken: abc123def456"),
    ("NextToken: abc123def456", "NextToken: abc123def456"),
    ("accessToken: abc123def456", "accessToken: [REDACTED]"),
    ("maxToken=abc123def456", "maxToken=abc123def456"),
    ("Token=abc123def456", "Token=abc123def456"),  # `Token` only ends a camelCase name
    ("webhook_secret=abc123def456", "webhook_secret=[REDACTED]"),
    ("xapi_key=abc123def456", "xapi_key=abc123def456"),  # glued to a letter
    ("\\napi_key=abc123def456", "\\napi_key=[REDACTED]"),  # after an escape
    ("(api_key=abc123def456", "(api_key=[REDACTED]"),
    ("dbPassword: abc123def456", "dbPassword: [REDACTED]"),
    ("DBPassword: abc123def456", "DBPassword: abc123def456"),
    ("DB_PASSWORD=abc123def456", "DB_PASSWORD=[REDACTED]"),
    ("xsk-0123456789abcdefghijKLMN", "xsk-0123456789abcdefghijKLMN"),
    ("\\tsk-0123456789abcdefghijKLMN", "\\tsk-[REDACTED]"),
    ("_ghp_0123456789abcdefghij0123456789ab", "_ghp_0123456789abcdefghij0123456789ab"),
    ("xBearer abcDEF0123456789xyz", "xBearer abcDEF0123456789xyz"),
    ("1Authorization: Bearer abcDEF0123456789xyz", "1Authorization: Bearer [REDACTED]"),
]


@pytest.mark.parametrize(("text", "expected"), BOUNDARIES)
def test_each_kind_of_boundary_means_what_it_meant(text: str, expected: str) -> None:
    assert redaction.NULL_REDACTOR.redact_text(text) == expected


# --- what the new regex is made of ------------------------------------------------------------


def test_each_shared_body_is_written_once() -> None:
    source = Redactor(REDACTORS["environment"])._pattern.pattern
    credential = next(r for r in RULES if r.name == "credential-assignment")
    assert len(credential.heads) > 100
    assert source.count(credential.body) == 1
    assert len(source) < len(_old_pattern(()).pattern) // 5


def test_the_regex_still_starts_with_literal_characters() -> None:
    """The engine skips to candidate positions only when every top-level branch starts with a
    literal character (`INFO` with a charset, in CPython's compiled code); without that, a
    search takes 20-40 times as long."""
    compiler = pytest.importorskip("re._compiler")
    parser = pytest.importorskip("re._parser")
    constants = pytest.importorskip("re._constants")
    source = Redactor(REDACTORS["environment and colliding"])._pattern.pattern
    try:
        code = compiler._code(parser.parse(source), 0)
    except (AttributeError, TypeError):  # pragma: no cover - another Python's internals
        pytest.skip("this Python compiles regular expressions differently")
    assert code[0] == constants.INFO
    assert code[2] & constants.SRE_INFO_CHARSET
