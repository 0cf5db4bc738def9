"""Run the benchmark workloads on agenteval and its peers, side by side, and print the table.

    python bench/run.py                      # every workload, medians of 3, interleaved
    python bench/run.py --workloads W1,W2 --repeat 5
    python bench/run.py --quick              # one round, no slow peer runs: a smoke test
    python bench/run.py --slow               # also Inspect AI on W3 and the peers at 100k
    python bench/run.py --workloads W1,W2 --peers "" --executors process,ray   # issue 19

Each run is its own process, so imports, memory and one-time costs are counted alike for
every framework. The peers (Inspect AI, pydantic-evals, DeepEval) are installed at pinned
releases into their own virtual environments under `bench/.venvs/` on first use
(`bench/peers/setup.py`); agenteval runs from the interpreter running this script. Rounds are
interleaved (every framework once per round, in a rotating order) because this machine's
speed drifts between batches: compare within one run of this script, never across runs.

Every measurement is written to `bench/results/<timestamp>.json`; the table (Markdown) goes to
stdout, ready for the README.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from peers.setup import PEERS, WORKLOADS, peer_python  # noqa: E402

from executors import EXECUTOR_ARGS, executor_report  # noqa: E402

AGENTEVAL = "agenteval"
FLOOR = "floor"
"""The same agent in a bare asyncio pool, no framework (`floor_workload.py`): the machine's part."""
PEER_NAMES = {
    FLOOR: "asyncio alone",
    "pydantic-evals": "pydantic-evals",
    "deepeval": "DeepEval",
    "inspect-ai": "Inspect AI",
}
EXECUTOR_COLUMNS = {"process": "agenteval[process]", "ray": "agenteval[ray]"}
"""`--executors`: agenteval again, its trials on that executor, as a column of its own."""
RUN_TIMEOUT_S = 3600


@dataclass(frozen=True)
class Workload:
    """One workload: what each framework runs, and how its result is read."""

    key: str
    title: str
    cases: int = 0
    latency_ms: float = 0.0
    concurrency: int = 0
    peers: tuple[str, ...] = ()
    """The peers that run it by default; `slow_peers` only with --slow."""
    slow_peers: tuple[str, ...] = ()
    script: str | None = None
    """A workload script under bench/ (W4, W5) that agenteval runs instead of the protocol."""
    args: tuple[str, ...] = ()
    """Arguments to agenteval's `script`, or to its W1–W3 runner (never to the peers')."""
    floor: bool = True
    """Whether the bare asyncio floor runs it too (not for a variant of agenteval's own)."""
    peer_scripts: Mapping[str, str] = field(default_factory=dict)
    """For a script workload: peer -> its runner under bench/, run with the peer's python."""
    peer_requirements: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Packages a peer's runner needs beyond the peer's pin, installed into its venv on use."""
    stream: bool = False
    once: tuple[str, ...] = ()
    """Peers run in the first round only (their run takes minutes)."""
    executors: bool = False
    """Whether `--executors` adds agenteval on those executors (W1 and W2, issue 19)."""

    @property
    def ideal_s(self) -> float:
        """The wall time with zero overhead: full waves of `concurrency` trials."""
        waves = -(-self.cases // self.concurrency)
        return waves * self.latency_ms / 1000


ALL_PEERS = tuple(PEERS)
W4_PEER_REQUIREMENTS = {
    "pydantic-evals": ("pydantic-ai-slim[openai]==2.62.0", "openai==3.57.0"),
    "inspect-ai": ("openai==3.57.0",),
}
"""W4 calls an OpenAI-compatible server through each peer's OpenAI client, which the peers'
pins leave out; openai 3.57.0 is the release DeepEval 4.3.1's pin resolves to."""
_INSTALLED = (
    "import re, sys; from importlib.metadata import version; "
    "sys.exit(any(version(re.sub(r'\\[.*', '', n)) != v "
    "for n, v in (r.split('==') for r in sys.argv[1:])))"
)
IMPORTS = {
    # With the OpenTelemetry SDK it loads on a run's first span capture (when installed).
    AGENTEVAL: "agenteval, opentelemetry.sdk.trace",
    "pydantic-evals": "pydantic_evals",
    "deepeval": "deepeval",
    "inspect-ai": "inspect_ai",
}
"""The module each framework's users import: its import is timed apart from the workloads."""
_TIME_IMPORT = (
    "import json, time; t = time.perf_counter(); import {module}; "
    "print(json.dumps({{'seconds': time.perf_counter() - t}}))"
)
WORKLOADS_BY_KEY: dict[str, Workload] = {
    w.key: w
    for w in (
        Workload("import", "import time, which no workload counts", peers=ALL_PEERS),
        Workload(
            "W1",
            "overhead: 2,000 trials, 0 ms, concurrency 50",
            2000,
            0,
            50,
            ALL_PEERS,
            executors=True,
        ),
        Workload(
            "W1-mocks",
            "W1 with a run's tool mock on (the cases have none): its cost per trial",
            2000,
            0,
            50,
            args=("--tool-mocks",),
            floor=False,
        ),
        Workload(
            "W2",
            "concurrency: 1,000 trials, 100 ms, concurrency 50",
            1000,
            100,
            50,
            ALL_PEERS,
            executors=True,
        ),
        Workload(
            "W2-1000",
            "concurrency: 10,000 trials, 100 ms, concurrency 1,000",
            10000,
            100,
            1000,
            ALL_PEERS,
            once=("inspect-ai", "deepeval"),
        ),
        Workload(
            "W3-20k",
            "scale: 20,000 trials, 0 ms",
            20000,
            0,
            50,
            ALL_PEERS,
            stream=True,
            once=("inspect-ai",),
        ),
        Workload(
            "W3-100k",
            "scale: 100,000 trials, 0 ms",
            100000,
            0,
            50,
            (),
            ("pydantic-evals", "deepeval"),
            stream=True,
        ),
        Workload(
            "W4",
            "rate limit: a loopback server admitting R requests/s",
            script="w4_rate_limit.py",
            peer_scripts={
                "pydantic-evals": "peers/pydantic_evals_w4.py",
                "inspect-ai": "peers/inspect_w4.py",
            },
            peer_requirements=W4_PEER_REQUIREMENTS,
        ),
        Workload(
            "W4-R20",
            "rate limit: 300 trials at R = 20 requests/s, where retries decide",
            script="w4_rate_limit.py",
            args=("--rate", "20", "--trials", "300"),
            peer_scripts={
                "pydantic-evals": "peers/pydantic_evals_w4.py",
                "inspect-ai": "peers/inspect_w4.py",
            },
            peer_requirements=W4_PEER_REQUIREMENTS,
        ),
        Workload(
            "W4-plain",
            "rate limit, adaptive concurrency off (plain retries)",
            script="w4_rate_limit.py",
            args=("--no-adaptive",),
        ),
        Workload("W5", "rescore 100,000 stored trials; judge them twice", script="w5_rescore.py"),
    )
}


@dataclass
class Results:
    """Every measurement of one invocation, by workload and framework."""

    runs: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    def add(self, workload: str, framework: str, result: dict[str, Any]) -> None:
        self.runs.setdefault(workload, {}).setdefault(framework, []).append(result)

    def count(self, workload: str, framework: str) -> int:
        return len(self.runs.get(workload, {}).get(framework, []))

    def median(self, workload: str, framework: str, key: str) -> float | None:
        values = [r[key] for r in self.runs.get(workload, {}).get(framework, []) if key in r]
        return statistics.median(values) if values else None


def _last_json(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            result: dict[str, Any] = json.loads(line)
            return result
    raise ValueError("no JSON result line in the output")


def _run(command: Sequence[str], env: dict[str, str]) -> dict[str, Any]:
    load = os.getloadavg()[0]  # the machine is shared: how busy it was as each run began
    started = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env, check=False
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{tail}")
    result = _last_json(done.stdout)
    result["process_seconds"] = time.monotonic() - started
    result["load_1min"] = load
    return result


def run_one(workload: Workload, framework: str, workdir: Path) -> dict[str, Any]:
    """Run `workload` once on `framework` in a fresh process and return its result line."""
    env = dict(os.environ)
    env["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
    if workload.key == "import":
        python = sys.executable if framework == AGENTEVAL else str(peer_python(framework))
        code = _TIME_IMPORT.format(module=IMPORTS[framework])
        return _run([python, "-c", code], env)
    if workload.script is not None:
        if framework == AGENTEVAL:
            return _run([sys.executable, str(BENCH / workload.script), *workload.args], env)
        runner = BENCH / workload.peer_scripts[framework]
        needs = workload.peer_requirements.get(framework, ())
        return _run([str(peer_python_with(framework, needs)), str(runner), *workload.args], env)
    protocol = [
        "--cases",
        str(workload.cases),
        "--latency-ms",
        str(workload.latency_ms),
        "--concurrency",
        str(workload.concurrency),
        "--workdir",
        str(workdir),
    ]
    kind = next((k for k, column in EXECUTOR_COLUMNS.items() if column == framework), None)
    if framework == AGENTEVAL or kind is not None:
        command = [sys.executable, str(BENCH / "agenteval_workload.py"), *protocol, *workload.args]
        if workload.stream:
            command.append("--stream")
        if kind is not None:
            command += ["--executor", kind, *EXECUTOR_ARGS.get((kind, workload.key), ())]
    elif framework == FLOOR:
        command = [sys.executable, str(BENCH / "floor_workload.py"), *protocol]
    else:
        command = [str(peer_python(framework)), str(WORKLOADS[framework]), *protocol]
    result = _run(command, env)
    if result.get("passed") != workload.cases:
        raise RuntimeError(
            f"{framework} on {workload.key}: {result.get('passed')} of {workload.cases} passed; "
            "the workload did not do its work"
        )
    return result


def peer_python_with(peer: str, requirements: Sequence[str]) -> Path:
    """The python of `peer`'s venv, with `requirements` (each `name[extras]==version`) in it."""
    python = peer_python(peer)
    if requirements:
        check = subprocess.run(
            [str(python), "-c", _INSTALLED, *requirements], capture_output=True, check=False
        )
        if check.returncode != 0:
            print(f"[peers] installing {' '.join(requirements)} into {peer}", file=sys.stderr)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-qq", *requirements],
                check=True,
                stdout=sys.stderr,
            )
    return python


def frameworks_of(
    workload: Workload, peers: Sequence[str], slow: bool, executors: Sequence[str] = ()
) -> list[str]:
    """agenteval first (then on the chosen `executors`), then the chosen peers that run
    this workload."""
    if workload.script is not None:
        return [AGENTEVAL, *(p for p in workload.peer_scripts if p in peers)]
    wanted = [*workload.peers, *(workload.slow_peers if slow else ())]
    floor = [FLOOR] if workload.cases and workload.floor else []  # not for the import times
    on = [EXECUTOR_COLUMNS[k] for k in executors] if workload.executors else []
    return [AGENTEVAL, *on, *floor, *(p for p in wanted if p in peers)]


def measure(
    workloads: Sequence[Workload],
    peers: Sequence[str],
    repeat: int,
    slow: bool,
    log: Callable[[str], None],
    executors: Sequence[str] = (),
) -> Results:
    """Every workload on every framework, `repeat` rounds, interleaved."""
    results = Results()
    for round_no in range(repeat):
        for workload in workloads:
            order = frameworks_of(workload, peers, slow, executors)
            rotation = round_no % len(order)
            for framework in order[rotation:] + order[:rotation]:
                # A run of minutes (Inspect AI's W3 and W2 at concurrency 1,000) is made once:
                # that is enough to place it, and its median is that one run.
                if round_no and framework in workload.once:
                    continue
                with tempfile.TemporaryDirectory(prefix=f"bench-{workload.key}-") as workdir:
                    result = run_one(workload, framework, Path(workdir))
                results.add(workload.key, framework, result)
                log(f"round {round_no + 1}/{repeat} {workload.key} {framework}: {_brief(result)}")
    return results


def _brief(result: dict[str, Any]) -> str:
    keys = (
        "seconds",
        "peak_rss_mb",
        "goodput_share",
        "lost",
        "responses_429",
        "trials_per_second",
        "open_seconds",
        "startup_seconds",
    )
    return ", ".join(f"{k}={result[k]:.4g}" for k in keys if isinstance(result.get(k), int | float))


# -- the table --------------------------------------------------------------------------------


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "ms":
        return f"{value:.3f} ms"
    if unit == "x":
        return f"{value:.2f}×"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:.4g}"


def table(results: Results, workloads: Sequence[Workload], peers: Sequence[str]) -> str:
    """The Markdown table: medians per workload and framework, and agenteval / peer."""
    shown = [p for p in (FLOOR, *peers) if any(p in results.runs.get(w.key, {}) for w in workloads)]
    rounds = max(
        (results.count(w.key, AGENTEVAL) for w in workloads if w.key in results.runs), default=1
    )
    header = ["workload", "measure", "agenteval", *(PEER_NAMES[p] for p in shown)]
    header += [f"agenteval / {PEER_NAMES[p]}" for p in shown]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(workload: Workload, label: str, unit: str, of: Callable[[str], float | None]) -> None:
        mine = of(AGENTEVAL)
        theirs = [of(p) for p in shown]
        ratios = [f"{mine / other:.2f}" if mine is not None and other else "—" for other in theirs]
        once = [" (1 run)" if results.count(workload.key, p) == 1 < rounds else "" for p in shown]
        theirs_text = [_fmt(v, unit) + note for v, note in zip(theirs, once, strict=True)]
        cells = [workload.key, label, _fmt(mine, unit), *theirs_text, *ratios]
        lines.append("| " + " | ".join(cells) + " |")

    for w in workloads:
        if w.key not in results.runs:
            continue
        if w.key == "import":
            row(w, "import time", "s", lambda f, k=w.key: results.median(k, f, "seconds"))
        elif w.key.startswith("W1"):
            row(w, "time per trial", "ms", lambda f, w=w: _per_trial_ms(results, w, f))
        elif w.key.startswith("W2"):
            row(
                w,
                f"wall / ideal ({w.ideal_s:g} s)",
                "x",
                lambda f, w=w: _ratio_ideal(results, w, f),
            )
        elif w.key.startswith("W3"):
            row(w, "wall time", "s", lambda f, k=w.key: results.median(k, f, "seconds"))
            row(w, "peak RSS", "MB", lambda f, k=w.key: results.median(k, f, "peak_rss_mb"))
        elif w.key.startswith("W4"):
            row(w, "goodput / R", "", lambda f, k=w.key: results.median(k, f, "goodput_share"))
            row(w, "trials lost", "", lambda f, k=w.key: results.median(k, f, "lost"))
            row(w, "429 answers", "", lambda f, k=w.key: results.median(k, f, "responses_429"))
        elif w.key == "W5":
            row(
                w,
                "rescored trials / s",
                "",
                lambda f, k=w.key: results.median(k, f, "trials_per_second"),
            )
            row(
                w,
                "judge calls, 2nd pass",
                "",
                lambda f, k=w.key: results.median(k, f, "second_pass_calls"),
            )
    return "\n".join(lines)


def _per_trial_ms(results: Results, w: Workload, framework: str) -> float | None:
    seconds = results.median(w.key, framework, "seconds")
    return None if seconds is None else seconds / w.cases * 1000


def _ratio_ideal(results: Results, w: Workload, framework: str) -> float | None:
    seconds = results.median(w.key, framework, "seconds")
    return None if seconds is None else seconds / w.ideal_s


def targets(results: Results) -> list[str]:
    """Issue 8's targets, and issue 21's same-run ratios, each met or missed, from this run's
    medians."""
    out: list[str] = []

    def check(label: str, ok: bool | None, detail: str) -> None:
        mark = "—" if ok is None else ("met" if ok else "MISSED")
        out.append(f"- {label}: {mark} ({detail})")

    w1 = WORKLOADS_BY_KEY["W1"]
    mine = _per_trial_ms(results, w1, AGENTEVAL)
    pe = _per_trial_ms(results, w1, "pydantic-evals")
    ins = _per_trial_ms(results, w1, "inspect-ai")
    if mine is not None:
        versus = "no pydantic-evals run" if pe is None else f"{mine:.3f} ms vs {pe:.3f} ms"
        check("W1 ≤ pydantic-evals", None if pe is None else mine <= pe, versus)
        check(
            "W1 50× below Inspect AI",
            None if ins is None else ins / mine >= 50,
            f"{ins / mine:.0f}×" if ins else "no Inspect run",
        )
        if pe is not None:
            check("W1 ≤ 0.35× pydantic-evals (issue 21)", mine <= 0.35 * pe, f"{mine / pe:.2f}×")
    for key, limit in (("W2", 1.03), ("W2-1000", 1.10)):
        ratio = _ratio_ideal(results, WORKLOADS_BY_KEY[key], AGENTEVAL)
        floor = _ratio_ideal(results, WORKLOADS_BY_KEY[key], FLOOR)
        if ratio is not None:
            machine = f"; asyncio alone {floor:.3f}× on this machine now" if floor else ""
            check(f"{key} ≤ {limit}× ideal", ratio <= limit, f"{ratio:.3f}×{machine}")
            if key == "W2-1000" and floor:
                check(
                    "W2-1000 ≤ 1.20× asyncio alone (issue 21)",
                    ratio <= 1.20 * floor,
                    f"{ratio / floor:.2f}×",
                )
    big = results.median("W3-100k", AGENTEVAL, "seconds")
    small = results.median("W3-20k", AGENTEVAL, "seconds")
    rss = results.median("W3-100k", AGENTEVAL, "peak_rss_mb")
    if rss is not None:
        check("W3 100k peak RSS < 150 MB", rss < 150, f"{rss:.0f} MB")
    if big is not None and small is not None:
        check("W3 100k within 5.5× the 20k", big <= 5.5 * small, f"{big / small:.2f}×")
    goodput = results.median("W4", AGENTEVAL, "goodput_share")
    lost = results.median("W4", AGENTEVAL, "lost")
    if goodput is not None:
        check(
            "W4 goodput ≥ 90% of R, 0 lost",
            goodput >= 0.9 and lost == 0,
            f"{goodput:.2f}, {lost} lost",
        )
    rate = results.median("W5", AGENTEVAL, "trials_per_second")
    calls = results.median("W5", AGENTEVAL, "second_pass_calls")
    if rate is not None:
        check("W5 ≥ 20,000 trials/s", rate >= 20000, f"{rate:,.0f}/s")
        check("W5 second judge pass: 0 calls", calls == 0, f"{calls} calls")
    return out


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "peers": dict(PEERS),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workloads", default=",".join(WORKLOADS_BY_KEY))
    parser.add_argument("--peers", default=",".join(ALL_PEERS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round, no slow runs")
    parser.add_argument("--slow", action="store_true", help="also the slow peer runs")
    parser.add_argument(
        "--executors",
        default="",
        help="also agenteval on these executors (process,ray) in W1 and W2: issue 19's table",
    )
    args = parser.parse_args(argv)
    try:
        chosen = [WORKLOADS_BY_KEY[key] for key in args.workloads.split(",") if key]
    except KeyError as exc:
        parser.error(f"no workload {exc}; workloads: {', '.join(WORKLOADS_BY_KEY)}")
    peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in PEERS]
    if unknown:
        parser.error(f"no peer {unknown[0]!r}; peers: {', '.join(PEERS)}")
    executors = [k for k in args.executors.split(",") if k]
    if any(k not in EXECUTOR_COLUMNS for k in executors):
        parser.error(f"--executors: one of {', '.join(EXECUTOR_COLUMNS)}")
    repeat = 1 if args.quick else args.repeat
    slow = args.slow and not args.quick

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    about = machine()
    log(f"agenteval benchmarks, {about['date']}, {about['cpus']} CPUs, Python {about['python']}")
    load_before = os.getloadavg()
    results = measure(chosen, peers, repeat, slow, log, executors)
    about["load_average"] = {"before": load_before, "after": os.getloadavg()}
    out_dir = BENCH / "results"
    out_dir.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = out_dir / f"{stamp}.json"
    out.write_text(json.dumps({"machine": about, "repeat": repeat, "runs": results.runs}, indent=1))
    print(
        f"Medians of {repeat} interleaved runs, {about['date']}, {about['cpus']} CPUs, "
        f"Python {about['python']} ({about['platform']}).\n"
    )
    print(table(results, chosen, peers))
    print("\nTargets (issues 8 and 21):")
    print("\n".join(targets(results)))
    if executors:
        print()
        print(executor_report(results.median, [EXECUTOR_COLUMNS[k] for k in executors]))
    load = about["load_average"]
    print(f"\nLoad average (1, 5, 15 min): {load['before']} before, {load['after']} after.")
    log(f"every measurement: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
