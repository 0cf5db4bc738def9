"""A private key's mask never crosses a JSON string: the PEM rule's key material stopped at the
first `-----END ... PRIVATE KEY-----` wherever it was, so a record with a cut PEM block in one
string (exact_match's reason quotes the answer cut short) and a whole key in a later one was
stored as invalid JSON, and the run could no longer be read (`StoreError: ... Invalid JSON`);
`rescore` and `show` failed on it. Found by issue 21's third review."""

from __future__ import annotations

import json
from pathlib import Path

import agenteval
from agenteval.case import EvalCase
from agenteval.redaction import Redactor
from agenteval.score import Score
from agenteval.store import RunStore
from agenteval.store.encoding import to_json

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAabcdefghij\n-----END RSA PRIVATE KEY-----"


def test_a_redacted_record_is_still_json() -> None:
    score = Score(name="s", value=1.0, passed=True, reason="cut " + PEM[:40], details={"a": PEM})
    redacted = Redactor().redact_text(to_json(score))
    assert "MIIEowIBAAKCAQEAabcdefghij" not in redacted
    json.loads(redacted)  # was: "Extra data" (`"details":{` masked with the key)


def test_a_run_whose_answer_is_a_private_key_can_be_read_back(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run = agenteval.evaluate(
        lambda prompt: PEM,
        [EvalCase(id="c", input="q", expected_output=PEM)],
        concurrency=1,
        store=store,
    )
    with RunStore(store) as runs:
        results = list(runs.iter_results(run.run_id))  # was: StoreError, invalid JSON
    assert len(results) == 1
