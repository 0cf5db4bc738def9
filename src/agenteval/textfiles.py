"""Text files as agenteval reads them: UTF-8, with or without a byte order mark, or UTF-16 with
one (what spreadsheet programs save as "Unicode text")."""

from __future__ import annotations

import codecs

__all__ = ["decode_text", "encoding_name"]


def encoding_name(data: bytes) -> str:
    """The encoding a file's bytes are read in, as an error names it: `UTF-16` when they start
    with its byte order mark, else `UTF-8`."""
    return "UTF-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "UTF-8"


def decode_text(data: bytes) -> str:
    """The text of a file's bytes; raises `UnicodeDecodeError` when they are not UTF-8 (nor
    UTF-16 with a byte order mark)."""
    if encoding_name(data) == "UTF-16":
        return data.decode("utf-16")
    return data.decode("utf-8-sig")
