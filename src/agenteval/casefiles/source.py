"""A case file's text: which formats a file name says, reading the text (with one clear error
for a missing, unreadable or wrongly encoded file), and writing it."""

from __future__ import annotations

import difflib
from pathlib import Path

from agenteval.errors import DatasetError
from agenteval.textfiles import decode_text, encoding_name

__all__ = ["READ_FORMATS", "WRITE_FORMATS", "format_of", "read_text", "write_text"]

READ_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonl": "jsonl", ".csv": "csv"}
WRITE_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonl": "jsonl"}


def format_of(path: Path, file: str, formats: dict[str, str], verb: str) -> str:
    """The format `formats` gives the file's extension; raises `DatasetError` for another."""
    suffix = path.suffix.lower()
    if suffix in formats:
        return formats[suffix]
    names = list(formats)
    supported = ", ".join(names[:-1]) + " or " + names[-1]
    message = (
        f"cannot {verb} '{path.suffix}' files"
        if path.suffix
        else "cannot tell the file's format: it has no extension"
    )
    raise DatasetError(message, file=file, hint=f"use a case file ending in {supported}")


def read_text(path: Path, file: str) -> str:
    """The file's text: UTF-8 (a BOM allowed) or UTF-16 with its BOM; raises `DatasetError`."""
    if path.is_dir():
        raise DatasetError(
            "this is a folder, not a case file", file=file, hint="give the path of a case file"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise DatasetError("file not found", file=file, hint=_missing_file_hint(path)) from exc
    except PermissionError as exc:
        raise DatasetError(
            "cannot read the file: permission denied",
            file=file,
            hint="make the file readable (e.g. `chmod u+r`) or run as a user who may read it",
        ) from exc
    except OSError as exc:
        raise DatasetError(
            f"cannot read the file: {exc.strerror or exc}",
            file=file,
            hint="check that the path names a readable file",
        ) from exc
    try:
        return decode_text(data)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        encoding = encoding_name(data)
        raise DatasetError(
            f"not {encoding} text: byte 0x{data[exc.start]:02x} at column {column} is not valid "
            + encoding,
            file=file,
            line=line,
            hint="save the file with UTF-8 encoding",
        ) from exc


def _missing_file_hint(path: Path) -> str:
    folder = path.parent
    if not folder.is_dir():
        return f"the folder '{folder}' does not exist either; relative paths start at {Path.cwd()}"
    try:
        nearby = [child.name for child in folder.iterdir() if child.suffix.lower() in READ_FORMATS]
    except OSError:
        nearby = []
    close = difflib.get_close_matches(path.name, nearby, n=1, cutoff=0.8)
    if close:
        return f"did you mean '{folder / close[0]}'?"
    return f"check the path; relative paths start at {Path.cwd()}"


def write_text(target: Path, text: str, file: str) -> Path:
    """Write `text` to `target` as UTF-8, creating its folder as needed, and return `target`."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DatasetError(
            f"cannot write the file: {exc.strerror or exc}",
            file=file,
            hint="check that the folder exists and is writable",
        ) from exc
    return target
