"""A private key cut short (no `-----END ... PRIVATE KEY-----` line) is masked too: exact_match's
reason and details quote a long answer cut at a few hundred characters, so an agent that
answered a private key had the first lines of its material stored in the score, though the
answer itself was masked (the rule masked whole blocks only). Left open by issue 21's third
round; fixed with this test."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import agenteval
from agenteval.case import EvalCase
from agenteval.redaction import Redactor

_LINE = "MIIEowIBAAKCAQEA1234567890abcdefghijABCDEFGHIJ+/xyzXYZ0987654321qwertyQWERTY"
KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join([_LINE] * 8) + "\n-----END RSA PRIVATE KEY-----"
)
ENCRYPTED = (
    "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
    "DEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n" + "\n".join([_LINE] * 4)
)
MATERIAL = "1234567890abcdefghij"  # in every line of the key


@pytest.mark.parametrize("cut", [60, 120, 300])
@pytest.mark.parametrize("ending", ["", "…", "...", "'", "' and more words"])
def test_a_cut_block_is_masked_in_text(cut: int, ending: str) -> None:
    text = "the key: " + KEY[:cut] + ending
    redacted = Redactor().redact_text(text)
    assert MATERIAL[:16] not in redacted
    assert redacted.startswith("the key: -----BEGIN RSA PRIVATE KEY-----[REDACTED]")


@pytest.mark.parametrize("cut", [60, 120, 300])
def test_a_cut_block_is_masked_in_json_and_the_json_stays_valid(cut: int) -> None:
    record = {"reason": "got '" + KEY[:cut] + "…'", "answer": KEY, "after": "kept"}
    redacted = Redactor().redact_text(json.dumps(record))
    assert MATERIAL[:16] not in redacted
    back = json.loads(redacted)
    assert back["after"] == "kept"
    assert (
        back["answer"] == "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----"
    )


def test_a_cut_encrypted_block_is_masked() -> None:
    for cut in (90, 130, 200):
        redacted = Redactor().redact_text(json.dumps({"a": ENCRYPTED[:cut] + "…"}))
        assert "0123456789ABCDEF" not in redacted
        assert MATERIAL[:16] not in redacted
        json.loads(redacted)


def test_a_whole_block_keeps_its_end_line() -> None:
    assert Redactor().redact_text("k " + KEY + " done") == (
        "k -----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY----- done"
    )


def test_a_header_alone_is_not_a_secret() -> None:
    for text in (
        "-----BEGIN RSA PRIVATE KEY-----",
        "paste it after -----BEGIN RSA PRIVATE KEY----- here",
        "-----BEGIN PRIVATE KEY-----\nabc",
    ):
        assert Redactor().redact_text(text) == text


def test_no_key_material_reaches_the_store_when_an_answer_is_a_key(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    agenteval.evaluate(
        lambda prompt: "Here is the key you asked for: " + KEY,
        [EvalCase(id="c", input="q", expected_output="no")],
        concurrency=1,
        store=store,
    )
    with sqlite3.connect(store) as conn:
        stored = [
            data
            for table in ("trials", "scores")
            for (data,) in conn.execute(f"SELECT data FROM {table}")
        ]
    assert stored
    assert not [data for data in stored if MATERIAL[:16] in data]
