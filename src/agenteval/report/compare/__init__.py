"""`agenteval compare`: what changed from a base run to a candidate run, and whether it is real.

For each scorer: the pass rate (and, for scorers whose values are not just 0 or 1, the mean
score) of both runs over the cases they share, the change with its 95% interval, and a paired
significance test; the cases that newly fail or newly pass; cost and latency.

**The unit is the case, not the (case, trial) pair.** A case's trials share its input and its
difficulty, so they are not independent evidence; and trial 2 of the base has nothing to do
with trial 2 of the candidate, so pairing by trial index would be arbitrary. Each shared case
gives one pair of values: its pass rate over its judged trials in each run (0 or 1 with one
trial) and its mean score. The tests:
- pass rate: the exact McNemar test when every shared case has one judged trial in each run;
  with more trials, the same exact binomial test on the cases whose pass rate went down
  against those whose went up (the sign test, which McNemar is on pass/fail pairs);
- mean score: the exact Wilcoxon signed-rank test on the per-case differences (see
  `statistics.wilcoxon_signed_rank` for why);
- the interval of each change: Bonett and Price's adjusted interval for paired data
  (`statistics.paired_difference`).

`gate` reads the same `Comparison`.

The modules: `model` (the `Comparison` and its parts), `matching` (each run tallied case by
case; new failures and fixes; coverage), `paired` (the paired changes and tests per scorer),
`build` (`compare_results`, `compare_runs`, the JSON file) and `render` (the terminal view and
the Markdown).
"""

from agenteval.report.compare.build import compare_results, compare_runs, write_comparison_json
from agenteval.report.compare.model import (
    SCHEMA,
    CaseChange,
    Change,
    Comparison,
    Coverage,
    MetricChange,
    RunSide,
    ScorerComparison,
    UnjudgedCase,
)
from agenteval.report.compare.render import comparison_markdown, print_comparison

__all__ = [
    "SCHEMA",
    "CaseChange",
    "Change",
    "Comparison",
    "Coverage",
    "MetricChange",
    "RunSide",
    "ScorerComparison",
    "UnjudgedCase",
    "compare_results",
    "compare_runs",
    "comparison_markdown",
    "print_comparison",
    "write_comparison_json",
]
