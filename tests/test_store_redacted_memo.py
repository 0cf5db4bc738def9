"""The store's redaction of a batch (`store.encoding.redacted`) remembers the texts it found
clean and does not search them again (issue 21, bench W1): what it writes must stay exactly
what searching every text on its own gives, whatever was seen before, and a text holding a
secret must never be taken for clean.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.secrets_corpus import environment, texts

from agenteval.redaction import Redactor
from agenteval.store.encoding import redacted


def _pool() -> list[str]:
    """JSON texts as the store writes them: clean ones, and one per secret of the corpus."""
    clean = [
        json.dumps({"name": "exact_match", "value": 1.0, "details": {"answer": word}})
        for word in ("Paris", "London", "a key to the door", "token ring", "sk-", "Bearer")
    ]
    secret = [json.dumps({"output": f"here: {shape.value} (done)"}) for shape in texts()]
    return clean + secret


_POOL = _pool()


def _redactor() -> Redactor:
    return Redactor.from_environment(environment())


def _one_by_one(redactor: Redactor, batch: list[str]) -> list[str]:
    return [redactor.redact_text(text) for text in batch]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(range(len(_POOL))), max_size=8), max_size=6))
def test_a_batch_is_redacted_as_each_text_alone_whatever_came_before(
    batches: list[list[int]],
) -> None:
    remembering, reference = _redactor(), _redactor()
    for picks in batches:
        batch = [_POOL[i] for i in picks]
        assert redacted(remembering, batch) == _one_by_one(reference, batch)


def test_a_text_found_clean_is_not_searched_again_and_a_secret_always_is() -> None:
    redactor = _redactor()
    clean, secret = _POOL[0], _POOL[-1]
    assert redacted(redactor, [clean]) == [clean]
    assert redactor.unknown_texts([clean, secret]) == [secret]
    assert redacted(redactor, [clean, secret]) == _one_by_one(_redactor(), [clean, secret])
    assert redacted(redactor, [secret]) != [secret]  # never remembered as clean
    assert redactor.unknown_texts([secret]) == [secret]


def test_the_memory_holds_no_text_with_a_secret() -> None:
    redactor = _redactor()
    for start in range(len(_POOL)):
        redacted(redactor, _POOL[start:] + _POOL[:start])
        redacted(redactor, [_POOL[start]])
    reference = _redactor()
    remembered = [text for text in _POOL if text not in redactor.unknown_texts([text])]
    assert remembered
    assert all(reference.redact_text(text) is text for text in remembered)
