"""Redaction: secrets never reach the store, a report or a log, and ordinary answers are untouched.

Every key below is made up here and assembled at run time (a prefix plus filler), so this file
holds no real secret and nothing a secret scanner would flag.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from agenteval.redaction import (
    NULL_REDACTOR,
    REDACTED,
    Redactor,
    is_secret_env_name,
    is_secret_key,
)
from agenteval.score import Score
from agenteval.trace import AgentStep, Failure, FailureCause, ToolCall, Trial


def fake(prefix: str, length: int, alphabet: str = "Fake0123456789xyzXYZ") -> str:
    """A made-up key: `prefix` followed by `length` characters of filler."""
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

# What an agent's environment may look like: secrets, and things that are not.
ENV = {
    "OPENAI_API_KEY": OPENAI_KEY,
    "MY_SERVICE_TOKEN": "Tok3n-for-my-service",
    "DB_PASSWORD": "hunter2hunter2",
    "SMTP_PASS": "p4ss-w0rd-smtp",
    "WEBHOOK_SECRET": ' quoted"secret\\value ',
    "TOKENIZERS_PARALLELISM": "false",
    "GIT_AUTHOR_NAME": "Alice Example",
    "XAUTHORITY": "/home/alice/.Xauthority",
    "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
    "GOOGLE_APPLICATION_CREDENTIALS_FILE": "/etc/gcloud/creds.json",
    "AUTH_MODE": "anonymous",
    "SHORT_TOKEN": "abc123",
    "FEATURE_SECRET_ENABLED": "true",
    "MAX_TOKENS_KEY": "4096000000",
    "HOME": "/home/alice",
    "PATH": "/usr/bin:/bin",
}


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor.from_environment(ENV)


# --- environment secrets --------------------------------------------------------------------


def test_an_api_key_in_an_error_message_is_masked(redactor: Redactor) -> None:
    message = f"Incorrect API key provided: {OPENAI_KEY}. You can find your key at ..."
    assert redactor.redact_text(message) == (
        "Incorrect API key provided: [REDACTED]. You can find your key at ..."
    )


def test_every_environment_secret_is_masked_wherever_it_appears(redactor: Redactor) -> None:
    text = "token=Tok3n-for-my-service; pw hunter2hunter2 and p4ss-w0rd-smtp (again hunter2hunter2)"
    assert redactor.redact_text(text) == (
        "token=[REDACTED]; pw [REDACTED] and [REDACTED] (again [REDACTED])"
    )


def test_an_environment_secret_is_found_in_json_escaped_text_too(redactor: Redactor) -> None:
    secret = 'quoted"secret\\value'  # stripped of its surrounding spaces
    body = json.dumps({"error": f"bad signature {secret}"})
    assert secret not in body  # JSON escaped it
    assert redactor.redact_text(body) == '{"error": "bad signature [REDACTED]"}'
    assert redactor.redact_text(f"raw {secret}") == "raw [REDACTED]"


def test_secrets_are_masked_in_nested_data(redactor: Redactor) -> None:
    result = {
        "status": 401,
        "headers": [("x-request-id", "req-42"), ("www-authenticate", "Bearer")],
        "body": {"errors": [{"message": f"invalid credentials hunter2hunter2 for {OPENAI_KEY}"}]},
    }
    assert redactor.redact_value(result) == {
        "status": 401,
        "headers": [("x-request-id", "req-42"), ("www-authenticate", "Bearer")],
        "body": {"errors": [{"message": "invalid credentials [REDACTED] for [REDACTED]"}]},
    }
    assert result["body"]["errors"][0]["message"].endswith(OPENAI_KEY)  # the input is not changed


def test_a_value_under_a_secret_named_key_is_masked_whatever_it_is() -> None:
    arguments = {
        "city": "Paris",
        "api_key": "short",
        "apiKey": 12345,
        "X-Api-Key": ["a", "b"],
        "headers": {"Authorization": "whatever", "Accept": "application/json"},
        "auth": {"user": "alice", "password": "pw"},
        "client_secret": "abc",
        "access_token": "t",
        "max_tokens": 512,
        "page_token": "CAUQAA",
        "key": "cache-entry-7",
    }
    assert NULL_REDACTOR.redact_value(arguments) == {
        "city": "Paris",
        "api_key": REDACTED,
        "apiKey": REDACTED,
        "X-Api-Key": REDACTED,
        "headers": {"Authorization": REDACTED, "Accept": "application/json"},
        "auth": REDACTED,
        "client_secret": REDACTED,
        "access_token": REDACTED,
        "max_tokens": 512,  # a count, not a credential
        "page_token": "CAUQAA",  # a pagination cursor
        "key": "cache-entry-7",  # "key" alone names nothing secret
    }


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("apiKey", True),
        ("API-KEY", True),
        ("x-api-key", True),
        ("Authorization", True),
        ("proxy_authorization", True),
        ("password", True),
        ("db.password", True),
        ("secret", True),
        ("client_secret", True),
        ("token", True),
        ("access_token", True),
        ("refreshToken", True),
        ("aws_secret_access_key", True),
        ("Cookie", True),
        ("credentials", True),
        ("key", False),
        ("cache_key", False),
        ("tokens", False),
        ("max_tokens", False),
        ("input_tokens", False),
        ("nextPageToken", False),
        ("author", False),
        ("monkey", False),
        ("aws_access_key_id", False),
    ],
)
def test_which_dict_keys_name_a_secret(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


def test_an_empty_or_absent_secret_is_kept_as_it_is() -> None:
    data = {"api_key": None, "password": "", "token": REDACTED, "has_secret": True}
    assert NULL_REDACTOR.redact_value(data) is data


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "HF_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PASSWD",
        "SMTP_PASS",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "BASIC_AUTH",
        "SECRET_KEY_BASE",
        "openai_api_key",
    ],
)
def test_environment_names_that_hold_secrets(name: str) -> None:
    assert is_secret_env_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "HOME",
        "PATH",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "XAUTHORITY",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "AWS_ACCESS_KEY_ID",
        "SSH_AUTH_SOCK",
        "GPG_KEY_FILE",
        "OAUTH_TOKEN_URL",
        "KEY_VAULT_NAME",
        "AUTH_MODE",
        "BYPASS_PROXY",
    ],
)
def test_environment_names_that_do_not(name: str) -> None:
    assert not is_secret_env_name(name)


def test_short_numeric_and_flag_environment_values_are_ignored(redactor: Redactor) -> None:
    text = "abc123 true false 4096000000 Alice Example anonymous /home/alice/.Xauthority"
    assert redactor.redact_text(text) is text


def test_a_secret_inside_the_text_a_rule_keeps_is_masked_too(redactor: Redactor) -> None:
    # the URL rule keeps the user name, but this one is a secret from the environment
    text = "https://hunter2hunter2:pw-1@db.internal/app"
    assert redactor.redact_text(text) == "https://[REDACTED]:[REDACTED]@db.internal/app"


def test_a_key_glued_to_a_secret_is_masked_as_well(redactor: Redactor) -> None:
    once = redactor.redact_text(f"hunter2hunter2{ANTHROPIC_KEY}")
    assert once == "[REDACTED]sk-ant-api03-[REDACTED]"
    assert redactor.redact_text(once) is once


def test_an_aws_key_id_is_caught_by_its_shape_not_its_name(redactor: Redactor) -> None:
    assert redactor.redact_text(f"id {AWS_KEY_ID}") == "id AKIA[REDACTED]"


def test_extra_secrets_are_taken_as_given() -> None:
    redactor = Redactor.from_environment({}, extra=["  pin-42 ", "", "   "])
    assert redactor.redact_text("the pin is pin-42.") == "the pin is [REDACTED]."


def test_the_null_redactor_knows_no_environment_secret() -> None:
    assert NULL_REDACTOR.secret_count == 0
    assert NULL_REDACTOR.redact_text("hunter2hunter2") == "hunter2hunter2"
    assert NULL_REDACTOR.redact_text(OPENAI_KEY) == "sk-proj-[REDACTED]"


def test_a_redactor_never_shows_its_secrets(redactor: Redactor) -> None:
    assert "hunter2" not in repr(redactor)
    assert repr(redactor).startswith("Redactor(")


# --- well-known key shapes and credentials by context -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {LEGACY_OPENAI_KEY}", "key sk-[REDACTED]"),
        (f"key {OPENAI_KEY}.", "key sk-proj-[REDACTED]."),
        (f"anthropic={ANTHROPIC_KEY}", "anthropic=sk-ant-api03-[REDACTED]"),
        (f"?key={GOOGLE_KEY}&q=1", "?key=AIza[REDACTED]&q=1"),
        (f"push with {GITHUB_TOKEN}", "push with ghp_[REDACTED]"),
        (f"token: {GITHUB_PAT}", "token: github_pat_[REDACTED]"),
        (f"aws {AWS_KEY_ID} us-east-1", "aws AKIA[REDACTED] us-east-1"),
        (f"slack {SLACK_TOKEN}", "slack xoxb-[REDACTED]"),
        (f"jwt {JWT} end", "jwt eyJ[REDACTED] end"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0fake\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----",
        ),
        ("Authorization: Bearer abcDEF0123456789xyz", "Authorization: Bearer [REDACTED]"),
        ("authorization: Basic dXNlcjpwYXNzd29yZA==", "authorization: Basic [REDACTED]"),
        ("{'Authorization': 'token 0123abcd4567efgh'}", "{'Authorization': 'token [REDACTED]'}"),
        ("sent header Bearer abcDEF0123456789xyz.", "sent header Bearer [REDACTED]."),
        (
            "postgres://app:s3cr3t-pw@db.example.com:5432/evals",
            "postgres://app:[REDACTED]@db.example.com:5432/evals",
        ),
        ("https://:only-password@host/", "https://:[REDACTED]@host/"),
        ("retrying with api_key=abc123def456", "retrying with api_key=[REDACTED]"),
        ('{"password": "correct-horse-42"}', '{"password": "[REDACTED]"}'),
        ('{\\"client_secret\\": \\"cs-0123456789\\"}', '{\\"client_secret\\": \\"[REDACTED]\\"}'),
        ("GITHUB_TOKEN=gho0123456789abcdef", "GITHUB_TOKEN=[REDACTED]"),
        ("X-Auth-Token: 0123456789abcdef", "X-Auth-Token: [REDACTED]"),
        ("accessToken: 'a1b2c3d4e5f6'", "accessToken: '[REDACTED]'"),
        ("repr: 'line one\\nsk-0123456789abcdefghijKLMN'", "repr: 'line one\\nsk-[REDACTED]'"),
    ],
)
def test_each_well_known_secret_is_caught(text: str, expected: str) -> None:
    assert NULL_REDACTOR.redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # placeholders and code in an answer about how to call an API
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
        # pagination cursors and endpoints are not credentials
        'continuation_token="dG9rX2hvcF8x", nextPageToken: abc123def456',
        "token_url: https://auth.example.com/oauth2/v1/token",
        # ordinary words that contain credential words
        "the bearer of good news; authorization: pending",
        "ask-questions-politely-and-wait, risk-free, task-12345678901234567890",
    ],
)
def test_placeholders_and_code_are_left_alone(text: str) -> None:
    assert NULL_REDACTOR.redact_text(text) is text


ORDINARY_ANSWERS = [
    "The capital of France is Paris. Tokens used: 120 (prompt 100, completion 20).",
    "The monkey sat on the keyboard; the key is under the mat, and that's no secret.",
    "Total: $1,234.56 for 3 items, order id 8f14e45f-ceea-467f-a0b6-1a2b3c4d5e6f.",
    "See https://docs.example.com/v2/api/tokens?page=2#limits and http://localhost:8080/health",
    "Call search(query='weather in Paris', limit=5) then summarize. max_tokens=4096",
    "Run 20261130-073915-a1b2, case case-001, trial 3: passed (score 0.875).",
    "Email alice@example.com or call +33 1 23 45 67 89; the author is Bob.",
    "Authentication failed: invalid token. Rotate the secret key and retry.",
    "日本語の回答です。naïve café — 21°C, 50% humidity.",
]


@pytest.mark.parametrize("answer", ORDINARY_ANSWERS)
def test_an_ordinary_answer_is_untouched(redactor: Redactor, answer: str) -> None:
    assert redactor.redact_text(answer) is answer


# --- the same object when nothing changes -----------------------------------------------------


def test_nothing_to_redact_returns_the_very_same_objects(redactor: Redactor) -> None:
    text = ORDINARY_ANSWERS[0]
    data: dict[str, Any] = {
        "answer": text,
        "calls": [{"name": "search", "arguments": {"query": "weather", "limit": 5}}],
        "pair": ("a", 1.5, None, True),
    }
    assert redactor.redact_text(text) is text
    assert redactor.redact_value(data) is data
    trial = Trial(case_id="c1", output=text, tool_calls=[ToolCall(name="search", args={"q": "x"})])
    assert redactor.redact_model(trial) is trial


def test_only_the_changed_branch_is_copied(redactor: Redactor) -> None:
    clean = {"query": "weather"}
    data = {"clean": clean, "dirty": ["ok", "hunter2hunter2"]}
    redacted = redactor.redact_value(data)
    assert redacted == {"clean": {"query": "weather"}, "dirty": ["ok", REDACTED]}
    assert redacted["clean"] is clean


def test_a_named_tuple_keeps_its_type() -> None:
    class Pair(NamedTuple):
        name: str
        value: str

    redacted = NULL_REDACTOR.redact_value(Pair("key", f"use {OPENAI_KEY}"))
    assert redacted == Pair("key", "use sk-proj-[REDACTED]")
    assert isinstance(redacted, Pair)


def test_objects_that_are_not_json_like_are_left_alone() -> None:
    error = RuntimeError(f"Incorrect API key provided: {OPENAI_KEY}")
    assert NULL_REDACTOR.redact_value(error) is error


# --- pydantic models ------------------------------------------------------------------------


def test_a_trial_with_secrets_becomes_a_valid_redacted_copy(redactor: Redactor) -> None:
    call = ToolCall(
        name="fetch",
        arguments={"url": "https://api.example.com/v1/items", "api_key": OPENAI_KEY},
        result={"pages": [["ok", f"echo: Bearer {OPENAI_KEY}"], ["fine"]]},
        error=None,
    )
    trial = Trial(
        case_id="case-007",
        output="Found 2 items.",
        steps=[AgentStep(thought="fetch the items", tool_calls=[call])],
        failure=Failure(
            cause=FailureCause.AGENT_ERROR,
            message=f"RuntimeError: Incorrect API key provided: {OPENAI_KEY}",
        ),
        metadata={"env": {"DB_PASSWORD": "hunter2hunter2"}},
    )

    redacted = redactor.redact_model(trial)

    assert isinstance(redacted, Trial) and redacted is not trial
    assert OPENAI_KEY not in redacted.model_dump_json()
    assert "hunter2hunter2" not in redacted.model_dump_json()
    assert redacted.tool_calls[0].arguments == {
        "url": "https://api.example.com/v1/items",
        "api_key": REDACTED,
    }
    assert redacted.tool_calls[0].result == {"pages": [["ok", "echo: Bearer [REDACTED]"], ["fine"]]}
    assert redacted.failure is not None
    assert redacted.failure.message == "RuntimeError: Incorrect API key provided: [REDACTED]"
    assert redacted.metadata == {"env": {"DB_PASSWORD": REDACTED}}
    # everything else is as it was
    assert redacted.output == trial.output and redacted.case_id == trial.case_id
    assert redacted.steps[0].thought == "fetch the items"
    assert redacted.failure.cause is FailureCause.AGENT_ERROR
    # and the original is untouched
    assert trial.tool_calls[0].arguments["api_key"] == OPENAI_KEY


def test_a_score_keeps_its_numbers(redactor: Redactor) -> None:
    score = Score(
        name="judge",
        value=0.75,
        passed=True,
        reason=f"the agent leaked {OPENAI_KEY}",
        details={"token": "t0k", "tokens": 120},
    )
    redacted = redactor.redact_model(score)
    assert redacted.reason == "the agent leaked [REDACTED]"
    assert redacted.details == {"token": REDACTED, "tokens": 120}
    assert (redacted.value, redacted.passed) == (0.75, True)


class Opaque:
    def __repr__(self) -> str:
        return f"Opaque(key={OPENAI_KEY})"


def test_an_object_pydantic_cannot_serialise_is_kept_or_redacted_as_its_repr() -> None:
    clean = Trial(tool_calls=[ToolCall(name="t", result=object())])
    assert NULL_REDACTOR.redact_model(clean) is clean  # nothing to redact: kept as it is
    leaky = Trial(tool_calls=[ToolCall(name="t", result=Opaque())])
    redacted = NULL_REDACTOR.redact_model(leaky)
    assert redacted.tool_calls[0].result == "Opaque(key=sk-proj-[REDACTED])"


class Notes(BaseModel):
    title: str
    items: list[list[str]] = Field(default_factory=list)


def test_redact_model_returns_the_model_s_own_type() -> None:
    notes = Notes(title="t", items=[["a"], ["b", f"key {GITHUB_TOKEN}"]])
    redacted = NULL_REDACTOR.redact_model(notes)
    assert type(redacted) is Notes
    assert redacted.items == [["a"], ["b", "key ghp_[REDACTED]"]]


# --- properties -----------------------------------------------------------------------------

WORDS = [
    "The", "answer", "is", "Paris", "monkey", "keyboard", "Tokens", "tokens", "used:", "token",
    "key", "keys", "secret", "secrets", "author", "sky", "ask", "risk-free", "task-1", "bypass",
    "passage", "API", "id", "case-001", "run_42", "(see", "below).", "—", "naïve", "日本",
    "alice@example.com", "https://example.com/a/b?q=1&page=2", "http://localhost:8080/health",
    "8f14e45f-ceea-467f-a0b6-1a2b3c4d5e6f", "v2.1.0", "$42.50", "21°C", "50%", ",", ":", "=",
    "\n",
]  # fmt: skip
ordinary_text = st.lists(
    st.one_of(st.sampled_from(WORDS), st.integers().map(str)), max_size=40
).map(" ".join)

FRAGMENTS = [
    "sk-", "sk-proj-", "sk-ant-api03-", "AIza", "ghp_", "github_pat_", "AKIA", "xoxb-", "eyJ",
    ".eyJ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "Bearer ",
    "Authorization: ", "Basic ", "://", "user:", "@", "api_key=", '"password": "', "_TOKEN=",
    "accessToken: ", "[REDACTED]", "\\n", "\n", " ", "'", '"', "0123456789", "abcdefghijKLMNOP",
    "hunter2hunter2", "Tok3n-for-my-service", OPENAI_KEY,
]  # fmt: skip
risky_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=20).map(
    "".join
)

json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), risky_text),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(["api_key", "token", "name", "args"]), risky_text),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


@given(ordinary_text)
def test_text_without_secrets_is_returned_unchanged(text: str) -> None:
    redactor = Redactor.from_environment(ENV)
    assert redactor.redact_text(text) is text
    assert NULL_REDACTOR.redact_text(text) is text


@settings(max_examples=300)
@given(risky_text)
def test_redacting_twice_is_redacting_once(text: str) -> None:
    redactor = Redactor.from_environment(ENV)
    once = redactor.redact_text(text)
    assert redactor.redact_text(once) is once
    for secret in ("hunter2hunter2", "Tok3n-for-my-service", OPENAI_KEY):
        assert secret not in once


@given(json_like)
def test_redacting_data_twice_is_redacting_once(value: Any) -> None:
    redactor = Redactor.from_environment(ENV)
    once = redactor.redact_value(value)
    assert redactor.redact_value(once) is once
    assert "hunter2hunter2" not in json.dumps(once)
