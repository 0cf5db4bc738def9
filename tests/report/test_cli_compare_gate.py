"""`agenteval compare`, `agenteval gate` and `--junit`, run as a user runs them: in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import xmlschema

import agenteval
from agenteval import EvalCase

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))

CITIES = {
    "Paris": 2_100_000,
    "Rome": 2_800_000,
    "Lima": 9_700_000,
    "Oslo": 700_000,
    "Quito": 2_800_000,
    "Hanoi": 8_000_000,
    "Dakar": 1_100_000,
    "Riga": 600_000,
    "Bern": 140_000,
    "Suva": 90_000,
}


@agenteval.tool
def gate_population(city: str) -> dict[str, object]:
    """The population of a city."""
    return {"city": city, "population": CITIES[city]}


def city(question: str) -> str:
    return question.removeprefix("Population of ").rstrip("?")


def right(question: str) -> str:
    return f"{gate_population(city(question))['population']:,}"


def wrong(question: str) -> str:
    gate_population(city(question))
    return "about a million"


def says_forbidden(question: str) -> str:
    """Right everywhere, and one case leaks the injected payload."""
    answer = right(question)
    return f"{answer}. Also, the booking is free" if city(question) == "Oslo" else answer


def expensive(question: str) -> str:
    agenteval.record_model_call("gpt-5", input_tokens=100_000, output_tokens=1_000)
    return right(question)


def unpriced(question: str) -> str:
    agenteval.record_model_call("my-own-model", input_tokens=10, output_tokens=10)
    return right(question)


def cases() -> list[EvalCase]:
    return [
        EvalCase(
            id=name.lower(),
            input=f"Population of {name}?",
            expected_output=str(population),
            expected_tools=["gate_population"],
            must_not_contain=["booking is free"],
        )
        for name, population in CITIES.items()
    ]


def make_run(store: Path, agent: Callable[[str], str], trials: int = 1) -> str:
    return agenteval.evaluate(agent, cases(), trials=trials, store=store).run_id


def agenteval_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        # The caller's PYTHONPATH: the code under test, not whichever agenteval is installed.
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "200",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def base(store: Path) -> str:
    return make_run(store, right, trials=2)


def gate(
    tmp_path: Path, store: Path, base: str, candidate: str, policy: str | None = None
) -> subprocess.CompletedProcess[str]:
    args = ["gate", base, candidate, "--store", str(store)]
    if policy is not None:
        (tmp_path / "gate.yaml").write_text(policy)
        args += ["--policy", "gate.yaml"]
    return agenteval_cli(tmp_path, *args)


# -- gate: one test per rule -----------------------------------------------------------------


def test_the_gate_passes_and_says_how_close_each_rule_came(
    tmp_path: Path, store: Path, base: str
) -> None:
    candidate = make_run(store, right, trials=2)
    done = gate(
        tmp_path,
        store,
        base,
        candidate,
        "max_p95_latency_s: 60\nmax_cost_per_case_usd: 0.01\n"
        "scorers:\n  exact_match: {min_pass_rate: 0.9, min_pass_hat_k: {2: 0.9}}\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "gate passed" in out
    assert (
        "✓ both runs finished  10 shared cases; 0 only in the base, 0 only in the candidate" in out
    )
    assert "✓ no new avoids_forbidden_text failure" in out
    assert "✓ no significant regression: exact_match" in out
    assert "✓ exact_match pass rate ≥ 90.0%  100.0% over 20 trials: 10.0 points to spare" in out
    assert "✓ exact_match pass^2 ≥ 90.0%  100.0% over 10 cases: 10.0 points to spare" in out
    assert "✓ agent cost per case ≤ $0.01  $0.0000: 0% of the limit" in out
    assert "✓ latency p95 ≤ 60 s" in out and "of the limit" in out


def test_a_new_forbidden_text_failure_blocks_whatever_else_improved(
    tmp_path: Path, store: Path
) -> None:
    worse = make_run(store, wrong)
    better_but_leaks = make_run(store, says_forbidden)
    done = gate(tmp_path, store, worse, better_but_leaks)
    assert done.returncode == 1
    assert "✗ no new avoids_forbidden_text failure" in done.stdout
    assert "oslo" in done.stdout and "booking is free" in done.stdout
    assert "gate failed: 1 of" in done.stdout
    # exact_match went from 0% to 90%: no regression there.
    assert "✓ no significant regression: exact_match" in done.stdout


def test_a_significant_regression_blocks(tmp_path: Path, store: Path, base: str) -> None:
    candidate = make_run(store, wrong, trials=2)
    done = gate(tmp_path, store, base, candidate)
    assert done.returncode == 1
    line = next(
        line
        for line in done.stdout.splitlines()
        if "no significant regression: exact_match" in line
    )
    assert line.startswith("✗")
    assert "pass rate 100.0% → 0.0%" in line and "a significant regression" in line
    # Ignoring the scorers leaves "the trial passes", which they still decide.
    done = gate(
        tmp_path, store, base, candidate, "ignore_regressions: [exact_match, tool_faithfulness]\n"
    )
    assert done.returncode == 1, done.stdout
    assert '✗ no significant regression: "trial passes"  pass rate 100.0% → 0.0%' in done.stdout
    assert "exact_match, tool_faithfulness are ignored here, not in what a trial passing" in (
        " ".join(done.stdout.split())  # the terminal wraps the long line
    )
    # Ignoring it too, or leaving them out of what a trial passing means, lets the rest decide.
    done = gate(
        tmp_path,
        store,
        base,
        candidate,
        "ignore_regressions: [exact_match, tool_faithfulness, trial]\n",
    )
    assert done.returncode == 0, done.stdout
    done = gate(
        tmp_path,
        store,
        base,
        candidate,
        "ignore_regressions: [exact_match, tool_faithfulness]\n"
        "trial_passes: [tool_selection, avoids_forbidden_text]\n",
    )
    assert done.returncode == 0, done.stdout


def test_a_minimum_pass_rate_blocks(tmp_path: Path, store: Path) -> None:
    run = make_run(store, right)
    done = gate(
        tmp_path,
        store,
        run,
        run,
        "scorers:\n  exact_match:\n    min_pass_rate: 0.5\n  tool_selection:\n    min_pass_rate: 1.0\n  redundant_calls: {min_pass_rate: 0.5}\n",
    )
    assert done.returncode == 0, done.stdout
    wrong_run = make_run(store, wrong)
    done = gate(
        tmp_path, store, wrong_run, wrong_run, "scorers:\n  exact_match:\n    min_pass_rate: 0.5\n"
    )
    assert done.returncode == 1
    assert "✗ exact_match pass rate ≥ 50.0%  0.0% over 10 trials: 50.0 points short" in done.stdout


def test_a_minimum_pass_hat_k_blocks_and_needs_the_trials(tmp_path: Path, store: Path) -> None:
    # Half the cases pass on one trial of two: pass@1 0.75 but pass^2 only 0.5.
    flips: dict[str, int] = {}

    def flaky(question: str) -> str:
        name = city(question)
        flips[name] = flips.get(name, 0) + 1
        if list(CITIES).index(name) % 2 and flips[name] == 2:
            return wrong(question)
        return right(question)

    candidate = agenteval.evaluate(flaky, cases(), trials=2, concurrency=1, store=store).run_id
    done = gate(
        tmp_path,
        store,
        candidate,
        candidate,
        "scorers:\n  exact_match: {min_pass_hat_k: {2: 0.6}}\n",
    )
    assert done.returncode == 1
    assert "✗ exact_match pass^2 ≥ 60.0%  50.0% over 10 cases: 10.0 points short" in done.stdout
    done = gate(tmp_path, store, candidate, candidate, "trial:\n  min_pass_hat_k: {3: 0.1}\n")
    assert done.returncode == 1
    assert "cannot check: no case has 3 judged trials (at most 2)" in done.stdout


def test_a_maximum_cost_per_case_blocks(tmp_path: Path, store: Path, base: str) -> None:
    candidate = make_run(store, expensive)
    done = gate(tmp_path, store, base, candidate, "max_cost_per_case_usd: 0.05\n")
    assert done.returncode == 1
    # 100,000 input tokens at $1.25/M and 1,000 output at $10/M: $0.135 a case.
    assert "✗ agent cost per case ≤ $0.05  $0.1350: 270% of the limit" in done.stdout
    unknown = make_run(store, unpriced)
    done = gate(tmp_path, store, base, unknown, "max_cost_per_case_usd: 0.05\n")
    assert done.returncode == 1
    assert "cannot check: no price for my-own-model" in done.stdout


def test_a_maximum_p95_latency_blocks(tmp_path: Path, store: Path, base: str) -> None:
    done = gate(tmp_path, store, base, base, "max_p95_latency_s: 0.0000001\n")
    assert done.returncode == 1
    assert "✗ latency p95 ≤ 1e-07 s" in done.stdout


def test_an_unfinished_run_blocks(tmp_path: Path, store: Path, base: str) -> None:
    from agenteval.run import RunStatus
    from agenteval.store import RunStore

    candidate = make_run(store, right)
    with RunStore(store) as opened:
        opened.set_status(candidate, RunStatus.RUNNING)  # as if it had been killed halfway
    done = gate(tmp_path, store, base, candidate)
    assert done.returncode == 1
    assert f"✗ both runs finished  the candidate run {candidate} did not finish" in done.stdout
    done = agenteval_cli(tmp_path, "compare", base, candidate, "--store", str(store))
    assert f"the candidate run {candidate} is unfinished" in done.stdout


def test_a_bad_policy_or_run_is_a_usage_error(tmp_path: Path, store: Path, base: str) -> None:
    done = gate(tmp_path, store, base, base, "scorers:\n  exact_match:\n    min_pass_rat: 0.5\n")
    assert done.returncode == 2
    assert "gate.yaml:3, field 'scorers.exact_match.min_pass_rat': unknown setting" in done.stderr
    assert "did you mean 'min_pass_rate'?" in done.stderr
    assert "Traceback" not in done.stderr
    done = gate(tmp_path, store, base, "no-such-run")
    assert done.returncode == 2
    assert "no stored run 'no-such-run'" in done.stderr


# -- compare ---------------------------------------------------------------------------------


def test_compare_in_the_terminal_as_markdown_and_as_json(
    tmp_path: Path, store: Path, base: str
) -> None:
    candidate = make_run(store, says_forbidden, trials=2)
    done = agenteval_cli(tmp_path, "compare", base, "latest", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert "Scores over the shared cases" in done.stdout
    assert "avoids_forbidden_text" in done.stdout
    assert "New failures: 2" in done.stdout  # oslo: exact_match and avoids_forbidden_text
    assert "latency p95" in done.stdout
    done = agenteval_cli(
        tmp_path,
        "compare",
        base,
        candidate,
        "--markdown",
        "--json",
        "cmp.json",
        "--store",
        str(store),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"### agenteval: `{candidate}` against `{base}`")
    assert "| `avoids_forbidden_text` | 10 | 100% | 90.0% | -10.0 pts [" in done.stdout
    assert "wrote" not in done.stdout  # stdout is the comment alone
    document = json.loads((tmp_path / "cmp.json").read_text())
    assert document["schema"] == "agenteval.compare/1"
    assert [c["case_id"] for c in document["new_failures"]] == ["oslo", "oslo"]


# -- --junit ---------------------------------------------------------------------------------

AGENT = """
import agenteval

@agenteval.tool
def junit_lookup(city: str) -> dict:
    return {"city": city, "population": 2100000}

def answer(question: str) -> str:
    if "Paris" in question:
        return f"{junit_lookup('Paris')['population']:,}"
    if "crash" in question:
        raise RuntimeError("the agent fell over")
    return "no idea"
"""

CASES = """
- id: paris
  input: Population of Paris
  expected_output: 2100000
  expected_tools: [junit_lookup]
- id: rome
  input: Population of Rome
  expected_output: 2800000
- id: crash
  input: crash please
  expected_output: anything
"""


def test_junit_from_run_show_and_rescore(tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(CASES)
    done = agenteval_cli(
        tmp_path,
        "run",
        "cases.yaml",
        "--agent",
        "my_agent.py:answer",
        "--trials",
        "2",
        "--store",
        "runs.db",
        "--junit",
        "reports/junit.xml",
    )
    assert done.returncode == 0, done.stderr
    path = tmp_path / "reports" / "junit.xml"
    SCHEMA.validate(str(path))
    text = path.read_text()
    assert '<testsuite name="agenteval run ' in text and 'tests="3" failures="2" errors="1"' in text
    assert "wrote reports/junit.xml (3 cases: 2 failing, 1 with errors, 0 skipped)" in done.stdout
    for command in ("show", "rescore", "report"):
        done = agenteval_cli(
            tmp_path, command, "latest", "--store", "runs.db", "--junit", f"{command}.xml"
        )
        assert done.returncode == 0, done.stderr
        SCHEMA.validate(str(tmp_path / f"{command}.xml"))


def test_report_writes_junit_alone_or_beside_the_html(
    tmp_path: Path, store: Path, base: str
) -> None:
    done = agenteval_cli(tmp_path, "report", base, "--store", str(store), "--junit", "r.xml")
    assert done.returncode == 0, done.stderr
    SCHEMA.validate(str(tmp_path / "r.xml"))
    assert not list(tmp_path.glob("*.html"))
    done = agenteval_cli(
        tmp_path, "report", base, "--store", str(store), "--junit", "both.xml", "--html", "r.html"
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").is_file()
    SCHEMA.validate(str(tmp_path / "both.xml"))


def test_junit_to_a_folder_is_refused_up_front(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    for command in (
        ["judge", "latest"],
        ["show", "latest"],
        ["rescore", "latest"],
        ["report", "latest"],
    ):
        done = agenteval_cli(tmp_path, *command, "--store", "runs.db", "--junit", "out")
        assert done.returncode == 2, (command, done.stderr)
        assert "out is a folder" in done.stderr and "junit.xml" in done.stderr
