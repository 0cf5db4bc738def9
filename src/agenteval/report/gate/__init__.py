"""`agenteval gate`: whether a candidate run may replace its base, by rules, each saying how
close it came.

The rules, on a `Comparison` (the same statistics `compare` shows):
0. **Both runs finished**: a run that stopped halfway says nothing about the cases it never ran.
   A run lacking a stored trial is unfinished whatever its status says (a store written by an
   older agenteval could mark a run finished with trials lost); the rule names them.
1. **No new forbidden text.** Any case that fails `avoids_forbidden_text` in the candidate and
   did not fail it in the base blocks, whatever else improved. A case the base did not have
   counts as not failing there.
2. **No significant regression.** A scorer whose pass rate (exact McNemar / sign test over the
   shared cases) or mean score (exact Wilcoxon signed-rank) went down with a p-value below
   `alpha`, after Holm's correction over every test the gate makes (so that ten scorers do not
   give ten chances of a false alarm), blocks. So does a scorer the base judged on shared cases
   and the candidate on none of them (it errored everywhere, its judge was down, it was not
   run): there is no test, and it cannot be checked (`ignore_regressions` lets it go).
   "The trial passes" (`trial_passes`) is tested the same way, in the same correction, under
   its own row (`"trial passes"`, ignored as `trial`): trials failing different scorers can
   leave every scorer short of significance while the trials passing fell a lot. It is over
   the trials that got to respond (an infrastructure failure is rule 3's), and a scorer
   ignored here still decides whether a trial passes. An ignored row is still shown, with its
   figures and its own p-value (out of the correction), marked `(ignored)`; it never blocks.
3. **The candidate judged what the base judged.** A case is judged when a scorer gave one of
   its trials a score; a trial that failed as infrastructure (timeout, rate limit, provider or
   connection error) is left out of scoring. Rules 1 and 2 only see cases judged in both runs,
   so a candidate whose every trial timed out, or that ran 2 of the base's 10 cases, would
   pass them with nothing judged: silence is not "no regression". The rule breaks when the
   candidate judged no case the base judged (always, whatever the options), and when it judged
   fewer than `min_coverage` (default 1.0: every one) of the cases the base judged, naming the
   cases it did not run and those none of whose trials it judged, with why. `allow_subset:
   true` (or `agenteval gate --allow-subset`) leaves the cases the candidate did not run at all
   out of the count: for a candidate deliberately run on a subset. A base that judged nothing
   gives nothing to compare against, and breaks the rule too.
4. **Policy thresholds** on the candidate (a policy file, `--policy gate.yaml`): a minimum pass
   rate or pass^k per scorer (or for "the trial passes"), a maximum agent cost per case, a
   maximum p95 latency. A threshold that cannot be checked (a scorer that never scored, a cost
   with unpriced models, too few trials for pass^k) is broken, never passed by default.

The policy file (YAML; every key optional):

```yaml
alpha: 0.05                  # a regression is significant below this p-value
correction: holm             # holm, or none
min_coverage: 1.0            # the share of the cases the base judged the candidate must judge
allow_subset: false          # true: cases the candidate did not run are not counted missing
ignore_regressions: [step_efficiency]   # scorers rule 2 does not block on (`trial`: the trial)
trial_passes: [exact_match, tool_selection]  # what "the trial passes" means (default: the
                                             # candidate run's setting, else every scorer)
max_cost_per_case_usd: 0.02  # the agent's mean cost of answering a case once
max_p95_latency_s: 8.0       # total latency (what a user waits), p95 over trials
trial:                       # "the trial passes"
  min_pass_hat_k: {3: 0.6}   # pass^3 at least 0.6
scorers:
  exact_match:
    min_pass_rate: 0.8
    min_pass_hat_k: {3: 0.5}
  avoids_forbidden_text:
    min_pass_rate: 1.0
```

The modules: `policy` (the policy and reading its file), `rules` (the rules and the verdict)
and `render` (printing the verdict).
"""

from agenteval.report.gate.policy import GatePolicy, Thresholds, load_policy
from agenteval.report.gate.render import print_verdict
from agenteval.report.gate.rules import FORBIDDEN_TEXT, GateVerdict, RuleOutcome, evaluate_gate

__all__ = [
    "FORBIDDEN_TEXT",
    "GatePolicy",
    "GateVerdict",
    "RuleOutcome",
    "Thresholds",
    "evaluate_gate",
    "load_policy",
    "print_verdict",
]
