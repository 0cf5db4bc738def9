"""Text files as agenteval reads them: UTF-8, with or without a byte order mark, or UTF-16 with
one (what spreadsheet programs save as "Unicode text")."""

from __future__ import annotations

import codecs

__all__ = ["decode_text"]


def decode_text(data: bytes) -> str:
    """The text of a file's bytes; raises `UnicodeDecodeError` when they are not UTF-8 (nor
    UTF-16 with a byte order mark)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    return data.decode("utf-8-sig")
