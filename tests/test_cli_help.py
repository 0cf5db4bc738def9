"""`agenteval --help` and every command's help, as click and typer write it: `-h` works as
`--help`; a flag shows no value placeholder (`--verbose`, not `--verbose <bool>`); an option that
takes a value names it; defaults are written one way, `(default: X)` in the help text. And the
README's command table lists every command and option the CLI really has."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperGroup, TyperOption

from agenteval.cli import app, main

README = Path(__file__).parents[1] / "README.md"


def commands() -> dict[str, Any]:
    """The root (`""`) and every command, by name."""
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    return {"": root, **root.commands}


def options(command: Any) -> list[TyperOption]:
    return [p for p in command.params if isinstance(p, TyperOption)]


def help_text(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*args])
        raise SystemExit(0)  # main returns normally after printing help
    out = capsys.readouterr()
    assert stop.value.code in (0, None), out.err
    assert out.err == ""
    return out.out


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


@pytest.mark.parametrize("name", sorted(commands()))
def test_help_and_h_print_the_same_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = [name] if name else []
    long = help_text(capsys, *args, "--help")
    assert long.startswith("Usage: agenteval")
    assert help_text(capsys, *args, "-h") == long


@pytest.mark.parametrize("name", sorted(commands()))
def test_flags_show_no_value_and_options_name_theirs(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = help_text(capsys, *([name] if name else []), "--help")
    assert "<bool>" not in text and "bool" not in text.lower().split()
    lines = text.splitlines()
    for option in options(commands()[name]):
        long = max(option.opts, key=len)
        # The option's own line: `  -v, --verbose   Also list ...` / `  --trials N   ...`.
        row = next(line for line in lines if re.match(rf"\s+(-\w, )?{re.escape(long)}\b", line))
        after = row.split(long, 1)[1]
        if option.is_flag:
            assert re.match(r"\s{2,}\S", after), (long, row)
            assert not after.strip().startswith(("<", "[", "BOOL", "TEXT")), (long, row)
        else:
            assert re.match(r" \[?[A-Z][A-Z_:.]*\b", after), (long, row)


@pytest.mark.parametrize("name", sorted(commands()))
def test_defaults_are_written_one_way(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(help_text(capsys, *([name] if name else []), "--help").split())
    text = text.replace("- ", "-")  # a word wrapped at its hyphen
    assert "[default" not in text
    mentions = re.findall(r"\bdefault\b.{0,2}", text)
    assert all(m.startswith("default:") for m in mentions), mentions
    assert len(re.findall(r"\(default: [^()]+(\([^()]*\)[^()]*)*\)", text)) == len(mentions)


def readme_commands() -> dict[str, set[str]]:
    """The README's command table (the rows starting with "| `agenteval" between the
    "## Commands" heading and the next "## " heading): the command named in a row's first cell
    (`""` for `agenteval` alone) and every option (`--name`, `-x`) its first two cells name.
    `-h`/`--help` are left out: every command has them."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, set[str]] = {}
    for line in section.splitlines():
        if not line.startswith("| `agenteval"):
            continue
        cells = line.split("|")[1:3]
        words = cells[0].strip().strip("`").split()
        name = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
        flags = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", " ".join(cells)))
        found.setdefault(name, set()).update(flags - {"-h", "--help"})
    return found


def test_the_readme_command_table_lists_every_command_and_option() -> None:
    real = {
        name: {opt for option in options(command) for opt in option.opts} - {"-h", "--help"}
        for name, command in commands().items()
    }
    assert readme_commands() == real
