"""Secret-named keys masked while what an agent did is still data, before agenteval writes it as
text (a judge prompt, a score's reason)."""

from __future__ import annotations

import json
from typing import Any, Final

from agenteval.jsonsafe import Hide, plain_copy
from agenteval.redaction.names import REDACTED, is_secret_key

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
