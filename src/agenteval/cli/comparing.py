"""Comparing two stored runs: `agenteval compare` (what changed, with intervals and paired
tests) and `agenteval gate` (exit 1 when the candidate may not replace the base)."""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agenteval.cli.common import FAILURE_EXIT, console, errors
from agenteval.cli.options import BaseRunArgument, CandidateRunArgument, Flags, names, with_options
from agenteval.cli.settings import global_settings, run_prices
from agenteval.errors import ConfigError
from agenteval.report.compare import (
    Comparison,
    compare_runs,
    comparison_markdown,
    print_comparison,
    write_comparison_json,
)
from agenteval.report.gate import GatePolicy, evaluate_gate, load_policy, print_verdict
from agenteval.store import RunStore

__all__ = ["compare_command", "gate_command"]


def _compared(
    store: Path | None,
    base_run: str,
    candidate_run: str,
    passing: Collection[str] | None,
    passing_field: str = "--passing",
) -> Comparison:
    """The two stored runs compared, with the candidate's prices (`run_prices`)."""
    settings = global_settings(store)
    with RunStore(settings.store, create=False) as run_store:
        candidate = run_store.get_info(run_store.resolve_run_id(candidate_run))
        return compare_runs(
            run_store,
            base_run,
            candidate.run_id,
            passing=passing,
            prices=run_prices(candidate, settings.prices),
            passing_field=passing_field,
        )


@with_options("markdown json_path trial_passes store")
def compare_command(
    base_run: BaseRunArgument,
    candidate_run: CandidateRunArgument,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a Markdown table for a pull-request comment.")
    ] = False,
    json_path: Annotated[
        Path | None,
        typer.Option("--json", metavar="FILE", help="Write the comparison as JSON to FILE."),
    ] = None,
    trial_passes: Annotated[
        list[str] | None,
        typer.Option(
            "--passing",
            metavar="NAME",
            help="The scorers that decide whether a trial passes (repeatable or "
            "comma-separated) (default: the candidate's setting, else every scorer that "
            "applied).",
        ),
    ] = None,
    *,
    flags: Flags,
) -> None:
    """Compare a candidate run with a base run: per scorer the change with its 95% interval and
    a paired test over the shared cases, new failures and fixes case by case, cost and latency."""
    if json_path is not None and json_path.is_dir():
        raise ConfigError(
            f"{json_path} is a folder", field="--json", hint="give a file name, e.g. compare.json"
        )
    comparison = _compared(flags.store, base_run, candidate_run, names(trial_passes))
    if markdown:
        sys.stdout.write(comparison_markdown(comparison))
    else:
        print_comparison(comparison, console)
    if json_path is not None:
        write_comparison_json(json_path, comparison)
        # With --markdown, stdout is the comment itself: say it elsewhere.
        (errors if markdown else console).print(f"[dim]wrote[/] {escape(str(json_path))}")


@with_options("store")
def gate_command(
    base_run: BaseRunArgument,
    candidate_run: CandidateRunArgument,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            metavar="FILE",
            help="A gate policy (YAML): thresholds per scorer, cost, latency, significance.",
        ),
    ] = None,
    allow_subset: Annotated[
        bool,
        typer.Option(
            "--allow-subset",
            help="The candidate was run on a subset of the base's cases on purpose: cases it "
            "did not run are not counted as unjudged (it must still judge the ones it ran).",
        ),
    ] = False,
    *,
    flags: Flags,
) -> None:
    """Exit 1, saying why, when the candidate run may not replace the base: a case newly fails
    avoids_forbidden_text, a scorer regressed significantly, the candidate judged fewer cases
    than the base (its trials timed out, or it left cases out), or a policy threshold is
    broken. Exit 0 otherwise, saying how close each rule came."""
    rules = load_policy(policy) if policy is not None else GatePolicy()
    if allow_subset:
        rules = rules.model_copy(update={"allow_subset": True})
    comparison = _compared(
        flags.store, base_run, candidate_run, rules.trial_passes, passing_field="trial_passes"
    )
    if comparison.base.run_id == comparison.candidate.run_id and base_run != candidate_run:
        # Two names for one run: every rule holds of a run against itself, a pass with
        # nothing checked. `latest` is the base itself when the candidate's run stored nothing
        # (it did not start). One name given twice is deliberate: the policy's thresholds
        # alone, for one run.
        raise ConfigError(
            f"the base and the candidate are the same run, {comparison.base.run_id}: a run "
            "gated against itself passes with nothing checked",
            hint="name the candidate's run (`agenteval runs` lists them); `latest` is the "
            "newest run stored, the base itself when the candidate's run did not start",
        )
    verdict = evaluate_gate(comparison, rules, source=policy)
    print_verdict(verdict, console)
    if not verdict.passed:
        raise typer.Exit(FAILURE_EXIT)
