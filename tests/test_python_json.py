"""The premise of the tests of JSON too deep to read (`tests/python_json.py`): this Python's
`json.loads` refuses `UNREADABLE` levels, so those tests check the path they name."""

from __future__ import annotations

import json

import pytest
from tests.python_json import UNREADABLE, needs_unreadable


@needs_unreadable
@pytest.mark.parametrize("opening", ["[", '{"x": '])
def test_pythons_json_reader_refuses_unreadable_nesting(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    text = opening * UNREADABLE + "1" + closing * UNREADABLE
    with pytest.raises(RecursionError):
        json.loads(text)
