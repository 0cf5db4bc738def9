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

The package, by job: `names` (which environment variables and dict keys name a secret, and
`REDACTED`), `rules` (the fixed key shapes and credential contexts), `regex` (the one combined
regular expression they are compiled into), `redactor` (`Redactor`, applied to text, JSON-like
data and pydantic models), `keys` (secret-named keys masked while data is still data, before it
is written as text) and `urls` (a URL without its credentials).
"""

from agenteval.redaction.keys import mask_secret_keys, masked_json
from agenteval.redaction.names import REDACTED, is_secret_env_name, is_secret_key
from agenteval.redaction.redactor import NULL_REDACTOR, Redactor
from agenteval.redaction.urls import public_url

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
