"""The HTML report: one self-contained page, every section, traces, the baseline diff, and an
XSS corpus in every field that comes from agents, tools and datasets, escaped everywhere."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest
from tests.report.test_summary_sections import PRICES

from agenteval import EvalCase, Score, Trial
from agenteval.report.html import BaselineDiff, DiffTable, json_for_script, render_html, write_html
from agenteval.report.summary import summarize
from agenteval.run import RunInfo, RunStatus, TrialResult
from agenteval.score import JudgeRecord
from agenteval.trace import AgentStep, Failure, FailureCause, ModelCall, ToolCall, Usage

XSS = [
    "<script>window.__xss = 1</script>",
    "</script><script>window.__xss = 2</script>",
    '<img src=x onerror="window.__xss = 3">',
    "<svg onload=window.__xss=4>",
    '"><script>window.__xss = 5</script>',
    "' onmouseover='window.__xss = 6",
    "javascript:window.__xss = 7",
    '<a href="javascript:window.__xss = 8">click</a>',
    "<!-- </tbody> <iframe srcdoc='<script>parent.__xss = 9</script>'>",
    "\u2028\u2029 line separators \u2028 in text",
    "</textarea></style></title><script>window.__xss = 10</script>",
    "{{ 7 * 7 }} {% raw %} ${window.__xss = 11}",
    "<details open ontoggle=window.__xss=12>",
]
"""Strings that would run script if any of them reached the page unescaped."""


class Elements(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def xss(i: int) -> str:
    return XSS[i % len(XSS)]


def xss_run() -> tuple[RunInfo, list[TrialResult]]:
    """Three cases, two trials each, with the corpus in every field a run carries.

    `case-0` is flaky (trial 0 passes, trial 1 fails); trial 1 of `case-2` timed out.
    """
    info = RunInfo(run_id="20261130-000000-xss0", trials=2, target=xss(0), agent=xss(1))
    info = info.model_copy(update={"status": RunStatus.FINISHED})
    results: list[TrialResult] = []
    for c in range(3):
        case = EvalCase(
            id=f"case-{c}-{xss(c)}",
            input=f"question {c}: {xss(c + 1)}",
            expected_output=xss(c + 2),
            expected_tools=[xss(c + 3)],
            relevant_docs=[xss(c + 4)],
            must_not_contain=[xss(c + 5)],
            tags=[f"tag-{c % 2}", xss(c + 6)],
            initial_state={xss(c + 7): [xss(c + 8)]},
            expected_state={"ticket": xss(c + 9), xss(c + 10): {"nested": xss(c + 11)}},
        )
        for t in range(2):
            k = c * 2 + t
            calls = [
                ToolCall(
                    name=f"search_{xss(k)}",
                    arguments={"query": xss(k + 1), xss(k + 2): [xss(k + 3)]},
                    result=[{"id": xss(k + 4), "snippet": xss(k + 5)}],
                    duration_s=0.01,
                    mocked="mock" if t == 0 else "replay",
                ),
                ToolCall(name="calculator", arguments={"expression": "1/0"}, error=xss(k + 6)),
            ]
            failed = c == 2 and t == 1
            trial = Trial(
                case_id=case.id,
                trial=t,
                steps=[
                    AgentStep(thought=xss(k + 7), tool_calls=calls),
                    AgentStep(output=None if failed else xss(k + 8)),
                ],
                model_calls=[
                    ModelCall(
                        model="sim-1",
                        usage=Usage(input_tokens=100 * (k + 1), output_tokens=10),
                        duration_s=0.02,
                    )
                ],
                latency_s=0.05 * (k + 1),
                working_latency_s=0.04 * (k + 1),
                retries={"timeout": 1} if failed else {},
                failure=Failure(cause=FailureCause.TIMEOUT, message=xss(k + 9)) if failed else None,
                metadata={"note": xss(k + 10)},
                state={"ticket": xss(k + 11), xss(k + 12): [xss(k + 13)]},
            )
            passed = (c + t) % 2 == 0
            scores = {
                "exact_match": Score(
                    name="exact_match",
                    value=None if failed else float(passed),
                    passed=None if failed else passed,
                    reason=xss(k + 11),
                ),
                "tool_execution": Score(
                    name="tool_execution",
                    value=float(t == 0),
                    passed=t == 0,
                    reason=xss(k + 12),
                ),
                "retrieval_recall": Score(
                    name="retrieval_recall",
                    value=0.5 if c == 1 else 1.0,
                    passed=c != 1,
                    details={"found": [xss(k)], "missed": [xss(k + 1)]},
                ),
                "groundedness": Score(
                    name="groundedness",
                    value=0.5,
                    passed=True,
                    reason=xss(k + 2),
                    details={
                        "samples": [
                            {"score": 0.5, "reasoning": xss(k + 3)},
                            {"score": 0.5, "reasoning": xss(k + 4)},
                        ]
                    },
                    judge=JudgeRecord(
                        judge=f"openai:{xss(k)}", template="groundedness", template_version=1
                    ),
                ),
            }
            if c == 2:
                scores[f"custom_{xss(k)}"] = Score(name=f"custom_{xss(k)}", error=xss(k + 5))
            results.append(TrialResult(case=case, trial=trial, scores=scores))
    return info, results


def render_xss(**kwargs: object) -> str:
    info, results = xss_run()
    summary = summarize(results, prices=PRICES)
    return render_html(info, summary, results, prices=PRICES, **kwargs)  # type: ignore[arg-type]


def json_block(page: str) -> str:
    found = re.search(
        r'<script type="application/json" id="trials-data">(.*?)</script>', page, re.DOTALL
    )
    assert found is not None
    return found.group(1)


def test_no_corpus_string_reaches_the_page_unescaped() -> None:
    page = render_xss()
    for payload in XSS:
        for dangerous in ("<script", "<img", "<svg onload", "<iframe", "<details open", "<a href"):
            if dangerous in payload:
                assert payload not in page
    # Parsed as a browser would: the page's own elements only.
    tags = Elements()
    tags.feed(page)
    scripts = [attrs for tag, attrs in tags.found if tag == "script"]
    assert scripts == [
        {"type": "application/json", "id": "trials-data"},
        {"nonce": scripts[1]["nonce"]},
    ]
    assert not {"img", "iframe", "object", "embed", "base", "form"} & {t for t, _ in tags.found}
    # Links are the page's own anchors.
    assert all((a.get("href") or "").startswith("#") for t, a in tags.found if t == "a")
    handlers = [(t, name) for t, attrs in tags.found for name in attrs if name.startswith("on")]
    assert handlers == []
    urls = [v for _, attrs in tags.found for k, v in attrs.items() if k in ("href", "src")]
    assert all(not (v or "").strip().lower().startswith("javascript:") for v in urls)
    # Each payload still reads as text: escaped, not dropped.
    assert html.escape(XSS[0], quote=False) in page


def test_the_json_block_cannot_close_its_element_and_reads_back_unchanged() -> None:
    page = render_xss()
    block = json_block(page)
    assert "<" not in block and ">" not in block and "&" not in block
    assert "\u2028" not in block and "\u2029" not in block
    rows = json.loads(block)
    assert len(rows) == 6
    assert rows[0]["case"] == f"case-0-{XSS[0]}"
    assert any("\u2028" in row["text"] for row in rows)


def test_json_for_script_escapes_and_round_trips() -> None:
    value = {"a": "</script><!--&\u2028\u2029>", "b": [1, None, True]}
    text = str(json_for_script(value))
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in text
    assert json.loads(text) == value


def test_the_page_is_self_contained() -> None:
    page = render_xss()
    assert "<link" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page
    assert "Content-Security-Policy" in page
    assert "default-src 'none'" in page


def test_every_section_and_chart_is_there() -> None:
    page = render_xss()
    for anchor in (
        'id="overview"',
        'id="correctness"',
        'id="tool_use"',
        'id="faithfulness"',
        'id="latency"',
        'id="cost"',
        'id="retries"',
        'id="failures"',
        'id="judge"',
        'id="other"',
        'id="reliability"',
        'id="cases"',
    ):
        assert anchor in page
    order = [
        page.index(f'<section id="{key}"')
        for key in (
            "correctness",
            "tool_use",
            "faithfulness",
            "latency",
            "cost",
            "retries",
            "failures",
            "judge",
            "other",
            "reliability",
            "cases",
        )
    ]
    assert order == sorted(order)
    assert 'class="chart bars"' in page
    assert 'class="chart histogram"' in page
    assert 'class="chart cost"' in page
    assert "the search missed a relevant document" in page
    assert "pass@k" in page and "Flaky cases" in page


def test_each_trial_has_its_trace() -> None:
    page = render_xss()
    assert page.count('<tr class="trace"') == 6
    # Tool calls with arguments, results and errors; judge reasons and samples.
    assert "&#34;query&#34;" in page
    assert page.count('<div class="label">error</div>') == 6
    assert page.count('<ol class="samples">') == 6
    assert "openai:" in page


def test_a_structured_baseline_diff_is_shown() -> None:
    diff = BaselineDiff(
        base_run_id="base-1",
        headline=xss(0),
        tables=[
            DiffTable(
                title="Per scorer",
                columns=["scorer", "base", "candidate", "change", "verdict"],
                rows=[
                    ["exact_match", "80%", "70%", "-10 pts", "regressed"],
                    [xss(1), None, 1, "+5 pts", "improved"],
                ],
            )
        ],
        notes=[xss(2)],
    )
    page = render_xss(diff=diff)
    assert 'id="diff"' in page
    assert '<td class="">-10 pts</td>' in page
    assert '<td class="">+5 pts</td>' in page
    assert '<td class="bad">regressed</td>' in page
    assert '<td class="good">improved</td>' in page
    assert XSS[0] not in page and XSS[1] not in page


def test_any_other_diff_object_is_shown_as_nested_tables() -> None:
    diff = {
        "base": "base-1",
        "scorers": [{"scorer": "exact_match", "change": "-0.1", "note": xss(0)}],
        "new_failures": [xss(2)],
    }
    page = render_xss(diff=diff)
    assert 'id="diff"' in page
    assert "<th>scorer</th>" in page
    assert XSS[0] not in page and XSS[2] not in page


def test_no_diff_no_section() -> None:
    assert 'id="diff"' not in render_xss()


def test_long_texts_are_clipped() -> None:
    info, results = xss_run()
    first = results[0]
    long = first.model_copy(
        update={"trial": first.trial.model_copy(update={"output": "x" * 50_000})}
    )
    page = render_html(info, summarize([long]), [long])
    assert "more characters not shown" in page
    assert "x" * 50_000 not in page


def test_write_html_makes_the_folder(tmp_path: Path) -> None:
    info, results = xss_run()
    out = tmp_path / "deep" / "report.html"
    write_html(out, info, summarize(results), results)
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")


def test_the_template_and_assets_are_package_data() -> None:
    package = resources.files("agenteval.report")
    for name in ("templates/report.html.j2", "static/report.css", "static/report.js"):
        assert (package / name).is_file(), name


def agenteval_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "160", "PYTHONPATH": str(Path.cwd() / "src")},
    )


QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


@pytest.fixture(scope="module")
def quickstart_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`agenteval run examples/quickstart --html report.html`, once for the module."""
    folder = tmp_path_factory.mktemp("quickstart")
    done = agenteval_cli(
        folder, "run", str(QUICKSTART), "--store", "runs.db", "--html", "report.html"
    )
    assert done.returncode == 0, done.stderr
    return folder, done.stdout


def test_run_html_writes_the_quickstart_report(quickstart_report: tuple[Path, str]) -> None:
    folder, stdout = quickstart_report
    assert "wrote report.html" in stdout
    page = (folder / "report.html").read_text(encoding="utf-8")
    for title in (
        "Correctness",
        "Tool use, step by step",
        "Faithfulness and retrieval",
        "Safety",
        "Latency",
        "Cost",
        "Retries by reason",
        "Failures by cause",
    ):
        assert f"<h2>{title}</h2>" in page
    assert page.count('<tbody class="trial"') == 20
    # The quickstart's config prices its simulated model.
    assert "No price for" not in page


def test_report_command_writes_a_stored_run(quickstart_report: tuple[Path, str]) -> None:
    folder, _ = quickstart_report
    done = agenteval_cli(folder, "report", "latest", "--store", "runs.db", "--html", "again.html")
    assert done.returncode == 0, done.stderr
    page = (folder / "again.html").read_text(encoding="utf-8")
    assert page.count('<tbody class="trial"') == 20
    # Prices come from the config the run was started from.
    assert "No price for" not in page


def test_report_without_html_says_how(quickstart_report: tuple[Path, str]) -> None:
    folder, _ = quickstart_report
    done = agenteval_cli(folder, "report", "latest", "--store", "runs.db")
    assert done.returncode == 2
    assert "--html" in done.stderr


def test_report_refuses_a_folder(quickstart_report: tuple[Path, str]) -> None:
    folder, _ = quickstart_report
    done = agenteval_cli(folder, "report", "latest", "--store", "runs.db", "--html", ".")
    assert done.returncode == 2
    assert "is a folder" in done.stderr and "report.html" in done.stderr


def test_a_comparison_from_agenteval_compare_is_shown_as_the_baseline_diff(
    tmp_path: Path,
) -> None:
    from agenteval import evaluate
    from agenteval.report.compare import compare_runs
    from agenteval.store import RunStore

    cases = [EvalCase(id=f"q{i}", input=f"{i}+{i}?", expected_output=str(2 * i)) for i in range(4)]
    store = tmp_path / "runs.db"

    def right(question: str) -> str:
        i = int(question.split("+")[0])
        return str(2 * i)

    def wrong_on_q3(question: str) -> str:
        return "<script>window.__xss = 1</script>" if question.startswith("3") else right(question)

    base = evaluate(right, cases, store=store)
    candidate = evaluate(wrong_on_q3, cases, store=store)
    with RunStore(store) as opened:
        comparison = compare_runs(opened, base.run_id, candidate.run_id)
    page = render_html(candidate.info, candidate.summary, candidate.results, diff=comparison)
    assert 'id="diff"' in page
    assert "Per scorer (paired over the shared cases)" in page
    assert "1 new failures, 0 new fixes over 4 shared cases" in page
    new_failures = page[page.index("<h3>New failures</h3>") : page.index("<h3>New fixes</h3>")]
    assert "q3" in new_failures and "exact_match" in new_failures
    assert "<script>window.__xss" not in page


def test_report_baseline_adds_the_diff(quickstart_report: tuple[Path, str]) -> None:
    folder, _ = quickstart_report
    done = agenteval_cli(
        folder,
        "report",
        "latest",
        "--store",
        "runs.db",
        "--baseline",
        "latest",
        "--html",
        "diff.html",
    )
    assert done.returncode == 0, done.stderr
    page = (folder / "diff.html").read_text(encoding="utf-8")
    assert 'id="diff"' in page
    assert "0 new failures, 0 new fixes over 20 shared cases" in page


def test_show_prices_the_run_and_writes_html(quickstart_report: tuple[Path, str]) -> None:
    folder, _ = quickstart_report
    done = agenteval_cli(folder, "show", "latest", "--store", "runs.db", "--html", "shown.html")
    assert done.returncode == 0, done.stderr
    # The prices of the config the run was started from: the cost is known.
    assert "no price for" not in done.stdout
    assert "agent $0." in done.stdout
    assert (folder / "shown.html").is_file()
