"""Every table agenteval prints fits the terminal: at 80 columns (a real terminal, and any piped
output, where rich assumes 80) and at 120, no number, interval or id is cut short. Long text
wraps, or a description column is left out; a number never loses a character."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from tests.cli_process import cli_env
from tests.report.test_summary_sections import PRICES, judge_score, result, score

from agenteval.report.summary import Summary, summarize
from agenteval.report.terminal import format_interval, print_summary
from agenteval.run import RunInfo
from agenteval.trace import FailureCause

LONG_SCORER = "tool_call_accuracy[require_order,penalize_unexpected]"
SCORERS = [
    "exact_match",
    "tool_selection",
    "tool_arguments_valid",
    "tool_execution",
    LONG_SCORER,
    "answer_mentions_the_refund_policy_and_the_order_number",
]
WIDTHS = [80, 120]


def long_run(trials: int = 3) -> list:
    """Thirteen cases with long ids, `trials` trials each, pass rates spread over 0..100%."""
    results = []
    for c in range(13):
        case_id = f"refund-request-for-a-damaged-parcel-delivered-late-{c:03d}"
        for t in range(trials):
            scores = [
                score(name, 1.0 if (c * (j + 1) + t) % (j + 2) else 0.0)
                for j, name in enumerate(SCORERS)
            ]
            scores.append(judge_score("groundedness", 1.0 if (c + t) % 3 else 0.0, 0.001))
            results.append(
                result(
                    case_id,
                    trial=t,
                    scores=scores,
                    retries={"rate_limited": 1} if c % 4 == 0 else None,
                    tokens=(1000, 40),
                    latency=0.5 + c * 1.7 + t,
                )
            )
    results.append(result("timed-out-case", failure=FailureCause.TIMEOUT))
    return results


def render(summary: Summary, width: int) -> str:
    console = Console(record=True, width=width, color_system=None)
    print_summary(summary, RunInfo(run_id="20261201-170324-a1b2c3"), console)
    return console.export_text()


def numbers_of(summary: Summary) -> list[str]:
    """Every number and interval the summary's scorer tables show."""
    shown = []
    for stats in summary.scorers.values():
        if stats.interval is not None:
            shown.append(format_interval(stats.interval))
        if stats.mean is not None:
            shown.append(f"{stats.mean:.2f}")
        if stats.pass_rate is not None:
            shown.append(f"{stats.pass_rate:.0%}")
    for rate in summary.failure_rates.values():
        shown.append(format_interval(rate.interval))
    return shown


def whole(name: str, text: str) -> bool:
    """Whether `name` is in `text` with no character lost: on one line, or wrapped inside its
    table cell (its pieces each starting a line, after the cell's left edge)."""
    wrapped = r"(?:[^\n]*\n *)?".join(re.escape(char) for char in name)
    return re.search(wrapped, text) is not None


def assert_fits(text: str, width: int) -> None:
    too_wide = [line for line in text.splitlines() if cell_len(line) > width]
    assert too_wide == [], f"lines wider than {width}:\n" + "\n".join(too_wide)
    assert "…" not in text, text


@pytest.mark.parametrize("width", WIDTHS)
def test_the_run_summary_fits_and_shows_every_number_whole(width: int) -> None:
    summary = summarize(long_run(), prices=PRICES)
    text = render(summary, width)
    assert_fits(text, width)
    for number in numbers_of(summary):
        assert number in text, f"{number} missing at {width} columns:\n{text}"
    # Scorer names are ids: each is whole, on one line where it fits, else wrapped in its cell.
    for name in [*SCORERS, "groundedness"]:
        assert whole(name, text), f"{name} cut at {width} columns:\n{text}"
    assert "1. tool_selection" in text and "2. tool_arguments_valid" in text
    if width >= 120:
        assert LONG_SCORER in text


@pytest.mark.parametrize("width", WIDTHS)
def test_reliability_over_many_trials_fits(width: int) -> None:
    summary = summarize(long_run(trials=10), prices=PRICES)
    text = render(summary, width)
    assert_fits(text, width)
    assert summary.reliability is not None
    trial_row = next(line for line in text.splitlines() if line.startswith("a trial passes"))
    assert re.search(r"\d+% / \d+%", trial_row), trial_row
    # The first and the last k are always shown; any left out are named.
    assert "k=1 " in text and "k=10" in text
    shown = {int(k) for k in re.findall(r"\bk=(\d+)\b(?!,)", text.split("not shown")[0])}
    assert shown < set(range(1, 11))
    left_out = re.search(r"not shown at this width: k=([\d, ]+)", text)
    assert left_out is not None, text
    named = {int(k) for k in left_out.group(1).split(",")}
    assert shown | named == set(range(1, 11)) and not shown & named
    for name in [*SCORERS, "a trial passes"]:
        assert whole(name, text)


def test_reliability_that_fits_names_nothing_left_out() -> None:
    text = render(summarize(long_run(trials=3), prices=PRICES), 80)
    assert_fits(text, 80)
    assert "k=1" in text and "k=3" in text
    assert "not shown" not in text


def test_a_wide_terminal_explains_each_scorer_beside_it() -> None:
    text = render(summarize(long_run(), prices=PRICES), 200)
    assert_fits(text, 200)
    assert "what it measures" in text
    assert LONG_SCORER in text


CASES = "\n".join(
    f"- id: a-long-case-identifier-for-the-refund-flow-number-{i:03d}\n"
    f"  input: question {i}\n"
    f"  expected_output: {'yes' if i % 3 else 'no'}\n"
    for i in range(12)
)

AGENTS = """
def good(question: str) -> str:
    return "yes"

def worse(question: str) -> str:
    return "no" if question.endswith(("1", "2", "4")) else "yes"
"""

SCORERS_FILE = f'''
class _Named:
    def __init__(self, name, every):
        self.name = name
        self.every = every

    def __call__(self, case, trial):
        number = int(case.id.rsplit("-", 1)[1])
        return number % self.every != 0, "checked the order number"


long_one = _Named("{LONG_SCORER}", 3)
long_two = _Named("answer_mentions_the_refund_policy_and_the_order_number", 4)
'''


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`agenteval ARGS` with its output piped and COLUMNS=80, as in CI or `| less`."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=cli_env(COLUMNS="80"),
        timeout=120,
    )


def test_every_command_fits_80_columns_when_piped(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(CASES)
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "long_scorers.py").write_text(SCORERS_FILE)
    scorers = ["--scorer", "long_scorers:long_one", "--scorer", "long_scorers:long_two"]
    outputs = []
    runs = []
    for agent in ("good", "worse"):
        done = cli(
            tmp_path,
            "run",
            "cases.yaml",
            "--agent",
            f"agents:{agent}",
            "--trials",
            "3",
            "--store",
            "runs.db",
            *scorers,
        )
        assert done.returncode in (0, 1), done.stderr
        outputs.append(done.stdout)
        found = re.search(r"run (\d{8}-\d{6}-\w+)", done.stdout)
        assert found is not None, done.stdout
        runs.append(found.group(1))
    base, candidate = runs
    for args in (
        ["runs", "--store", "runs.db"],
        ["show", candidate, "--store", "runs.db", "--verbose"],
        ["rescore", candidate, "--store", "runs.db", *scorers],
        ["compare", base, candidate, "--store", "runs.db"],
        ["gate", base, candidate, "--store", "runs.db"],
    ):
        done = cli(tmp_path, *args)
        assert done.returncode in (0, 1), done.stderr
        outputs.append(done.stdout)
    for output in outputs:
        assert_fits(output, 80)
    everything = "\n".join(outputs)
    for run_id in runs:
        assert run_id in everything
    # The summary's intervals, compare's changes with theirs, and the scorers' names, whole.
    assert re.search(r"\[\d+%–\d+%\]", outputs[0])
    compared = outputs[5]
    assert re.search(r"[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\]", compared), compared
    for output in (outputs[0], outputs[3], outputs[4], compared, outputs[6]):
        assert whole(LONG_SCORER, output), output


def test_runs_prints_a_target_as_written(tmp_path: Path) -> None:
    """A path is not markup: `cases[v2].yaml` keeps its brackets in `agenteval runs`."""
    (tmp_path / "cases[v2].yaml").write_text(CASES)
    (tmp_path / "agents.py").write_text(AGENTS)
    done = cli(tmp_path, "run", "cases[v2].yaml", "--agent", "agents:good", "--store", "runs.db")
    assert done.returncode == 0, done.stderr
    listed = cli(tmp_path, "runs", "--store", "runs.db")
    assert listed.returncode == 0, listed.stderr
    assert_fits(listed.stdout, 80)
    # One run: its target column's pieces, line by line, joined.
    target = "".join(
        line.split("│")[5].strip() for line in listed.stdout.splitlines() if line.count("│") == 6
    )
    assert target == str(tmp_path / "cases[v2].yaml"), listed.stdout
