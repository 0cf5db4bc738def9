"""`--version`'s callback prints and exits only for a real True. With typer before 0.16 beside
click 8.2+, the callback was handed click's "unset" sentinel (truthy) on every command, so
every command, `agenteval gate` included, printed the version and exited 0."""

from __future__ import annotations

import pytest
import typer

from agenteval.cli.app import _print_version


def test_a_truthy_value_that_is_not_true_does_not_exit() -> None:
    _print_version(object())  # type: ignore[arg-type]  # click's unset sentinel, say


def test_true_prints_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit):
        _print_version(True)
    assert "agenteval " in capsys.readouterr().out
