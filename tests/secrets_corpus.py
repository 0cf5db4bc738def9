"""A corpus of secret shapes that every output path of agenteval is checked against.

Each `SecretShape` is one kind of secret a user's agent may hold: a provider key, a token, a
private key, a password in a URL, a value known only from the environment, or a value under a
secret-named key in a tool's arguments or result. `value` is the secret itself, which must
appear in no output; `planted` is how an agent would write it, the text planted in answers, tool
calls, model names, retry reasons, metadata and failures: a key with a well-known shape is
planted bare in a sentence (its shape alone must give it away), a credential known by its
context with that context (a header, a URL, an assignment).

Shapes with `env` are secrets of no recognisable shape: the test sets that environment
variable, and agenteval knows the value from there. Shapes with `key` are plain words that
only the key they sit under reveals (`{"password": "velvet morning lantern"}`): they are
planted as that key's value in tool arguments and results, the only place a key names them.

All values are made up for these tests and are no one's credentials.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CORPUS", "SecretShape", "environment", "found_in", "keyed", "texts"]

"""Why the secret-named-key shapes are still expected to leak on this branch: masking values
under secret-named keys in tool records is being fixed on another branch (`data`)."""


@dataclass(frozen=True)
class SecretShape:
    """One secret shape: the secret, how it is written where it is planted, and where it comes
    from (a variable of the environment, a secret-named key) when its shape alone does not tell.
    """

    name: str
    value: str
    planted: str
    env: str | None = None
    """The environment variable holding the secret, for secrets of no recognisable shape."""
    key: str | None = None
    """The secret-named key it sits under, for plain words that only the key reveals."""


_PEM_BODY = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"
)
_PEM_CUT_BODY = "MIIEpAIBAAKCAQEAx9Q2v8fZ3kLmN4pRtS6uVwXyZ1aB2cD3eF4gH5iJ6kL7mN8o"

CORPUS: tuple[SecretShape, ...] = (
    SecretShape(
        "openai-project-key",
        "sk-proj-Q7vX2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0HxVbT",
        "called with sk-proj-Q7vX2mLp9RtY4kWz8NcB3dFh6JsA1gUe5iOq0HxVbT today",
    ),
    SecretShape(
        "openai-legacy-key",
        "sk-4fG7hJ2kL9mN3pQ8rS1tU6vW0xY5zA2bC7dE4fG9hJ1kL3mN",
        "legacy sk-4fG7hJ2kL9mN3pQ8rS1tU6vW0xY5zA2bC7dE4fG9hJ1kL3mN works",
    ),
    SecretShape(
        "anthropic-key",
        "sk-ant-api03-Xy9Zw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-9Q8w7E6r5T4y3U2i1O0p",
        "claude via sk-ant-api03-Xy9Zw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-9Q8w7E6r5T4y3U2i1O0p",
    ),
    SecretShape(
        "google-api-key",
        "AIzaSyD4k8Jm2Pq7Rs1Tv6Wx9Yz3Ab5Cd8Ef0Gh",
        "https://generativelanguage.googleapis.com/v1/models?key=AIzaSyD4k8Jm2Pq7Rs1Tv6Wx9Yz3Ab5Cd8Ef0Gh",
    ),
    SecretShape("aws-access-key-id", "AKIAZ7QW3ERT5YUI8OPL", "the id AKIAZ7QW3ERT5YUI8OPL"),
    SecretShape(
        "aws-secret-access-key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
        "the AWS secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
        env="AWS_SECRET_ACCESS_KEY",
    ),
    SecretShape(
        "github-classic-token",
        "ghp_8Jk2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4",
        "git clone https://ghp_8Jk2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4@github.com/acme/app",
    ),
    SecretShape(
        "github-fine-grained-token",
        "github_pat_11ABCDEFG0aBcDeFgHiJkLm_NoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ0123",
        "pushed with github_pat_11ABCDEFG0aBcDeFgHiJkLm_NoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ0123",
    ),
    SecretShape(
        "slack-bot-token",
        "xoxb-2048163593-5120736195-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
        "slack token xoxb-2048163593-5120736195-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
    ),
    SecretShape(
        "stripe-secret-key",
        "sk_live_51Hq2RsT3uV4wX5yZ6aB7cD8eF9gH0iJ1kL2mN3oP4qR5sT6u",
        "charged with sk_live_51Hq2RsT3uV4wX5yZ6aB7cD8eF9gH0iJ1kL2mN3oP4qR5sT6u",
    ),
    SecretShape(
        "json-web-token",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6IkFkYSJ9.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1Ng",
        "signed in as eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6IkFkYSJ9.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1Ng",
    ),
    SecretShape(
        "bearer-token",
        "tok9Ab8Cd7Ef6Gh5Ij4Kl3Mn2Op1Qr",
        "Authorization: Bearer tok9Ab8Cd7Ef6Gh5Ij4Kl3Mn2Op1Qr",
    ),
    SecretShape(
        "pem-private-key",
        _PEM_BODY,
        f"-----BEGIN PRIVATE KEY-----\n{_PEM_BODY}\n-----END PRIVATE KEY-----",
    ),
    SecretShape(
        # cut short, as a scorer's reason quotes a long answer: no END line
        "pem-private-key-cut",
        _PEM_CUT_BODY,
        f"-----BEGIN PRIVATE KEY-----\n{_PEM_CUT_BODY}…",
    ),
    SecretShape(
        "url-password",
        "Pgs9xK2mQ7vL4",
        "postgres://app:Pgs9xK2mQ7vL4@db.internal.example:5432/orders",
    ),
    SecretShape(
        "password-assignment",
        "Winter2026!Fjord",
        'config: {"db_password": "Winter2026!Fjord"}',
    ),
    SecretShape(
        "environment-secret-of-no-shape",
        "purple-Elephant-dances-at-noon",
        "the service answered to purple-Elephant-dances-at-noon",
        env="ACME_SERVICE_TOKEN",
    ),
    SecretShape(
        "environment-passphrase",
        "Kestrel over Tanager",
        "signed with Kestrel over Tanager",
        env="SIGNING_PASSPHRASE",
    ),
    SecretShape("password-key", "velvet morning lantern", "", key="password"),
    SecretShape("client-secret-key", "quiet harbour compass", "", key="client_secret"),
    SecretShape("session-cookie-key", "amber orchard whistle", "", key="session_cookie"),
    SecretShape("api-key-key", "silver meadow anchor", "", key="api_key"),
)
"""Every shape, each with a value found nowhere else in the corpus."""


def environment() -> dict[str, str]:
    """The environment variables the shapes with `env` need."""
    return {shape.env: shape.value for shape in CORPUS if shape.env}


def texts() -> list[SecretShape]:
    """The shapes planted as text (every one but those a secret-named key reveals)."""
    return [shape for shape in CORPUS if shape.key is None]


def keyed() -> dict[str, str]:
    """The secret-named-key shapes as a mapping of key to value, to plant in tool records."""
    return {shape.key: shape.value for shape in CORPUS if shape.key is not None}


def found_in(text: str, shapes: Iterable[SecretShape] = CORPUS) -> list[str]:
    """The names of the shapes whose secret appears in `text`: the value, or any of its lines
    (a PEM body may be written with its line breaks escaped, as JSON or XML do)."""
    found = []
    for shape in shapes:
        forms = {shape.value, *shape.value.splitlines()}
        if any(form in text for form in forms):
            found.append(shape.name)
    return found
