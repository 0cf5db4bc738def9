"""A file that starts with a UTF-16 byte order mark but does not decode is named as broken
UTF-16, not as "not UTF-8": the fix (save as UTF-8) stays, the diagnosis is the file's own."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from agenteval.datasets import load_cases
from agenteval.errors import DatasetError
from agenteval.otel.reading import read_recorded

# A UTF-16 byte order mark, one good character, then half a character: it cannot decode.
BROKEN_UTF16 = codecs.BOM_UTF16_LE + "[".encode("utf-16-le") + b"\x00"


def test_a_case_file_of_broken_utf16_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_bytes(BROKEN_UTF16)
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    assert "not UTF-16 text" in str(caught.value)
    assert "UTF-8" not in str(caught.value).split("hint")[0]


def test_a_trace_file_of_broken_utf16_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_bytes(BROKEN_UTF16)
    with pytest.raises(DatasetError) as caught:
        read_recorded(path)
    assert "not UTF-16 text" in str(caught.value)


def test_a_case_file_of_broken_utf8_is_still_named_utf8(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_bytes(b'[{"input": "caf\xe9"}]')
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    assert "not UTF-8 text: byte 0xe9" in str(caught.value)
