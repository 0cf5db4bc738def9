"""The mistakes a new user makes in the first hour, end to end: each broken file is run through
the real `agenteval run` in a child process, which must stop with one clear message (exit 2, no
traceback) naming the file and line or field and the fix; the test then does what the hint says,
mechanically, and the run must work.

A hint that cannot be followed by a few plain edit rules (rename, re-indent, close a quote,
write a line, use another reference) fails here: so does a hint that, followed, leads to the
next error.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env

AGENT = """\
def run(text):
    return "Paris"
"""
CASE = "What is the capital of France?"
CONFIG = "dataset: cases.yaml\nagent: agent.py:run\n"
RUN_CASES = ("run", "cases.yaml", "--agent", "agent.py:run")
RUN_FOLDER = ("run", ".")


@dataclass(frozen=True)
class Mistake:
    """One broken project: its files, the command, where the message must point, and what it
    must say (the wrong name and the fix)."""

    name: str
    files: dict[str, str]
    where: str
    says: tuple[str, ...] = ()
    args: tuple[str, ...] = RUN_CASES
    cwd: str = "."
    never: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


def _yaml_case(key: str, value: str = CASE, *, more: str = "  expected_output: Paris\n") -> str:
    return f"- id: cap\n  {key}: {value}\n{more}"


MISTAKES = [
    # A case's input, by the names other frameworks give it.
    *(
        Mistake(
            f"case-{key}",
            {"cases.yaml": _yaml_case(key)},
            "cases.yaml:2",
            (f"'{key}'", f"rename '{key}' to 'input'"),
            never=("conversation",),
        )
        for key in ("question", "prompt", "query", "user_input", "Question")
    ),
    # What the agent should answer.
    *(
        Mistake(
            f"case-{key}",
            {"cases.yaml": f"- id: cap\n  input: {CASE}\n  {key}: Paris\n"},
            "cases.yaml:3",
            (f"'{key}'", f"rename '{key}' to 'expected_output'"),
            never=("expected_tools",),
        )
        for key in ("expected", "answer", "expected_answer", "ground_truth", "reference")
    ),
    # The tools it should call.
    *(
        Mistake(
            f"case-{key}",
            {"cases.yaml": f"- id: cap\n  input: {CASE}\n  {key}: [search]\n"},
            "cases.yaml:3",
            (f"'{key}'", f"rename '{key}' to 'expected_tools'"),
        )
        for key in ("tools", "expected_tool")
    ),
    # A list under `expected` is the tools, not the answer (`expected_output` is text).
    Mistake(
        "case-expected-list",
        {"cases.yaml": f"- id: cap\n  input: {CASE}\n  expected: [search]\n"},
        "cases.yaml:3",
        ("rename 'expected' to 'expected_tools'",),
    ),
    Mistake(
        "case-name",
        {"cases.yaml": f"- name: cap\n  input: {CASE}\n"},
        "cases.yaml:1",
        ("'name'", "rename 'name' to 'id'"),
    ),
    Mistake(
        "case-spelling",
        {"cases.yaml": f"- id: cap\n  input: {CASE}\n  expeted_output: Paris\n"},
        "cases.yaml:3",
        ("rename 'expeted_output' to 'expected_output'",),
    ),
    # The same mistakes in the other formats.
    Mistake(
        "json-answer",
        {"cases.json": json.dumps([{"id": "cap", "input": CASE, "answer": "Paris"}], indent=1)},
        "cases.json:5",
        ("rename 'answer' to 'expected_output'",),
        args=("run", "cases.json", "--agent", "agent.py:run"),
    ),
    Mistake(
        "jsonl-question",
        {"cases.jsonl": json.dumps({"question": CASE, "expected_output": "Paris"}) + "\n"},
        "cases.jsonl:1",
        ("rename 'question' to 'input'",),
        args=("run", "cases.jsonl", "--agent", "agent.py:run"),
    ),
    Mistake(
        "csv-question",
        {"cases.csv": f"id,question,expected_output\ncap,{CASE},Paris\n"},
        "cases.csv:1",
        ("'question'", "rename the column 'question' to 'input'"),
        args=("run", "cases.csv", "--agent", "agent.py:run"),
    ),
    Mistake(
        "csv-answer",
        {"cases.csv": f"id,input,answer\ncap,{CASE},Paris\n"},
        "cases.csv:1",
        ("rename the column 'answer' to 'expected_output'",),
        args=("run", "cases.csv", "--agent", "agent.py:run"),
    ),
    Mistake(
        "csv-tools",
        {"cases.csv": f"id,input,tools\ncap,{CASE},search\n"},
        "cases.csv:1",
        ("rename the column 'tools' to 'expected_tools'",),
        args=("run", "cases.csv", "--agent", "agent.py:run"),
    ),
    # Not valid YAML, JSON Lines.
    Mistake(
        "yaml-indented-too-far",
        {"cases.yaml": f"- id: cap\n  input: {CASE}\n   expected_output: Paris\n"},
        "cases.yaml:3",
        ("indent line 3 with 2 spaces",),
        never=("quote",),
    ),
    Mistake(
        "yaml-indented-too-little",
        {"cases.yaml": f"- id: cap\n  input: {CASE}\n expected_output: Paris\n"},
        "cases.yaml:3",
        ("indent line 3 with 2 spaces",),
    ),
    Mistake(
        "yaml-second-case-indented",
        {"cases.yaml": f"- id: cap\n  input: {CASE}\n  - id: two\n    input: Hello\n"},
        "cases.yaml:3",
        ("indent lines 3 to 4 by 2 fewer spaces",),
    ),
    Mistake(
        "yaml-tab",
        {"cases.yaml": f"- id: cap\n\tinput: {CASE}\n"},
        "cases.yaml:2",
        ("tab", "indent line 2 with 2 spaces"),
    ),
    Mistake(
        "yaml-missing-quote",
        {"cases.yaml": f'- id: cap\n  input: "{CASE}\n  expected_output: Paris\n'},
        "cases.yaml:2",
        ('add the closing " at the end of line 2',),
    ),
    Mistake(
        "yaml-missing-quote-last",
        {"cases.yaml": f"- id: cap\n  expected_output: Paris\n  input: '{CASE}\n"},
        "cases.yaml:3",
        ("add the closing ' at the end of line 3",),
    ),
    Mistake(
        "yaml-colon-in-text",
        {"cases.yaml": "- id: cap\n  input: Capital: what is it for France?\n"},
        "cases.yaml:2",
        ("quote",),
    ),
    Mistake(
        "jsonl-bare-key",
        {"cases.jsonl": json.dumps({"input": CASE}) + '\n{input: "Hello"}\n'},
        "cases.jsonl:2",
        ("write line 2 as",),
        args=("run", "cases.jsonl", "--agent", "agent.py:run"),
    ),
    Mistake(
        "jsonl-plain-text",
        {"cases.jsonl": json.dumps({"input": CASE}) + "\nWhat is 2 + 2?\n"},
        "cases.jsonl:2",
        ("write line 2 as",),
        args=("run", "cases.jsonl", "--agent", "agent.py:run"),
    ),
    # agenteval.yaml's own keys.
    *(
        Mistake(
            f"config-{wrong}",
            {
                "cases.yaml": _yaml_case("input"),
                "agenteval.yaml": CONFIG.replace(f"{right}:", f"{wrong}:")
                if right in ("dataset", "agent")
                else CONFIG + f"{wrong}: {value}\n",
            },
            f"agenteval.yaml:{line}",
            (f"'{wrong}'", f"rename '{wrong}' to '{right}'"),
            args=RUN_FOLDER,
        )
        for wrong, right, value, line in (
            ("datasets", "dataset", "", 1),
            ("cases", "dataset", "", 1),
            ("agents", "agent", "", 2),
            ("scorer", "scorers", "[exact_match]", 3),
            ("trial", "trials", "2", 3),
        )
    ),
    Mistake(
        "config-scorer-text",
        {"cases.yaml": _yaml_case("input"), "agenteval.yaml": CONFIG + "scorer: exact_match\n"},
        "agenteval.yaml:3",
        ("rename 'scorer' to 'scorers' and make it a list: `scorers: [exact_match]`",),
        args=RUN_FOLDER,
    ),
    Mistake(
        "config-scorer-name",
        {
            "cases.yaml": _yaml_case("input"),
            "agenteval.yaml": CONFIG + "scorers:\n  - exact_mach\n",
        },
        "agenteval.yaml:4",
        ("scorers[0]", "'exact_mach'", "did you mean 'exact_match'?"),
        args=RUN_FOLDER,
    ),
    Mistake(
        "config-scorer-with-settings",
        {
            "cases.yaml": _yaml_case("input"),
            "agenteval.yaml": CONFIG + "scorers:\n  - name: exact_mach\n",
        },
        "agenteval.yaml:4",
        ("scorers[0]", "did you mean 'exact_match'?"),
        args=RUN_FOLDER,
    ),
    Mistake(
        "config-indented",
        {"cases.yaml": _yaml_case("input"), "agenteval.yaml": CONFIG.replace("agent:", " agent:")},
        "agenteval.yaml:2",
        ("indent line 2 with 0 spaces",),
        args=RUN_FOLDER,
        never=("quote",),
    ),
    Mistake(
        "config-tab",
        {
            "cases.yaml": _yaml_case("input"),
            "agenteval.yaml": CONFIG + "scorers:\n\t- exact_match\n",
        },
        "agenteval.yaml:4",
        ("tab", "indent line 4 with"),
        args=RUN_FOLDER,
    ),
    Mistake(
        "case-text",
        {"cases.yaml": _yaml_case("text")},
        "cases.yaml:2",
        ("rename 'text' to 'input'",),
    ),
    Mistake(
        "flag-scorer-name",
        {"cases.yaml": _yaml_case("input")},
        "--scorer",
        ("'exact_mach'", "did you mean 'exact_match'?"),
        args=(*RUN_CASES, "--scorer", "exact_mach"),
    ),
    # The agent.
    Mistake(
        "agent-file-misspelt",
        {"cases.yaml": _yaml_case("input")},
        "--agent",
        ("agnt.py", "current directory", "did you mean agent.py:run?"),
        args=("run", "cases.yaml", "--agent", "agnt.py:run"),
        never=("config file",),
    ),
    Mistake(
        "agent-file-from-elsewhere",
        {"proj/cases.yaml": _yaml_case("input"), "proj/helper.py": AGENT},
        "--agent",
        ("current directory", "did you mean proj/helper.py:run?"),
        args=("run", "proj/cases.yaml", "--agent", "helper.py:run"),
        never=("config file",),
    ),
    Mistake(
        "config-agent-misspelt",
        {
            "cases.yaml": _yaml_case("input"),
            "agenteval.yaml": "dataset: cases.yaml\nagent: agnt.py:run\n",
        },
        "agenteval.yaml:2",
        ("agnt.py", "did you mean agent.py:run?"),
        args=RUN_FOLDER,
    ),
    Mistake(
        "agent-function-misspelt",
        {"cases.yaml": _yaml_case("input")},
        "--agent",
        ("'rnu'", "did you mean agent.py:run?"),
        args=("run", "cases.yaml", "--agent", "agent.py:rnu"),
    ),
    Mistake(
        "agent-module-function-misspelt",
        {"cases.yaml": _yaml_case("input")},
        "--agent",
        ("did you mean agent:run?",),
        args=("run", "cases.yaml", "--agent", "agent:rnu"),
    ),
    Mistake(
        "agent-no-function",
        {"cases.yaml": _yaml_case("input")},
        "--agent",
        ("did you mean agent.py:run?",),
        args=("run", "cases.yaml", "--agent", "agent.py"),
    ),
    Mistake(
        "agent-import-fails",
        {
            "cases.yaml": _yaml_case("input"),
            "agent.py": "import json\nimport no_such_dependency_here\n\n" + AGENT,
        },
        "agent.py:2",
        ("no_such_dependency_here", "remove the import on line 2"),
        args=("run", "cases.yaml", "--agent", "agent.py:run"),
    ),
]


def _agenteval(cwd: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return agenteval_cli(cwd, *args, "--store", str(cwd / "runs.db"), env=cli_env(COLUMNS="400"))


@dataclass(frozen=True)
class _Error:
    """The one message the CLI printed: where, what, and the hint."""

    where: str
    message: str
    hint: str

    @property
    def file(self) -> str | None:
        head = self.where.split(",")[0]
        return head.split(":")[0] if "." in head.split(":")[0] else None

    @property
    def line(self) -> int | None:
        match = re.match(r"[^:,]+:(\d+)", self.where)
        return int(match.group(1)) if match else None


def _one_error(stderr: str) -> _Error:
    assert_clean(stderr)
    assert stderr.count("error:") == 1, stderr
    text = stderr[stderr.index("error:") + len("error:") :].strip()
    head, _, hint = text.partition("\n  hint: ")
    assert hint, f"no hint: {stderr}"
    where, _, message = head.partition(": ")
    return _Error(where, message, " ".join(hint.split()))


def _edit_line(path: Path, number: int, edit: object) -> None:
    lines = path.read_text().split("\n")
    lines[number - 1] = edit(lines[number - 1])  # type: ignore[operator]
    path.write_text("\n".join(lines))


def _follow(error: _Error, folder: Path, args: tuple[str, ...]) -> tuple[str, ...]:
    """Do what the hint says, as a user following it to the letter would; the new arguments."""
    hint = error.hint
    file = folder / error.file if error.file else None
    line = error.line
    if match := re.search(r"make it a list: `([^`]+)`", hint):
        assert file and line, error
        _edit_line(file, line, lambda _: match.group(1))
        return args
    if match := re.search(r"rename (?:the column )?'([^']+)' to '([^']+)'", hint):
        old, new = match.groups()
        assert file and line, error
        _edit_line(file, line, lambda text: re.sub(rf"\b{re.escape(old)}\b", new, text, count=1))
        return args
    if match := re.search(r"indent line (\d+) with (\d+) spaces", hint):
        assert file, error
        _edit_line(file, int(match.group(1)), lambda t: " " * int(match.group(2)) + t.lstrip())
        return args
    if match := re.search(r"indent lines (\d+) to (\d+) by (\d+) (fewer|more) spaces", hint):
        assert file, error
        first, last, by, way = match.groups()
        for number in range(int(first), int(last) + 1):
            _edit_line(
                file,
                number,
                lambda t: t[int(by) :] if way == "fewer" else " " * int(by) + t,
            )
        return args
    if match := re.search(r"add the closing (\S) at the end of line (\d+)", hint):
        assert file, error
        _edit_line(file, int(match.group(2)), lambda text: text + match.group(1))
        return args
    if match := re.search(r"write line (\d+) as `([^`]+)`", hint):
        assert file, error
        _edit_line(file, int(match.group(1)), lambda _: match.group(2))
        return args
    if match := re.search(r"quotes?: `([^`]+)`", hint):
        assert file and line, error
        _edit_line(file, line, lambda text: text[: len(text) - len(text.lstrip())] + match.group(1))
        return args
    if match := re.search(r"remove the import on line (\d+)", hint):
        assert file, error
        _edit_line(file, int(match.group(1)), lambda _: "")
        return args
    if match := re.search(r"did you mean '([^']+)'\?", hint):
        wrong = re.search(r"'([^']+)'", error.message)
        assert wrong, error
        if file is not None and line is not None:
            _edit_line(file, line, lambda text: text.replace(wrong.group(1), match.group(1)))
            return args
        return tuple(match.group(1) if arg == wrong.group(1) else arg for arg in args)
    if match := re.search(r"did you mean (\S+)\?", hint):
        new = match.group(1)
        if "--agent" in args:
            at = args.index("--agent") + 1
            return (*args[:at], new, *args[at + 1 :])
        assert file and line, error
        _edit_line(file, line, lambda text: text.split(":", 1)[0] + ": " + new)
        return args
    raise AssertionError(f"the hint says no edit a user could make: {hint!r}")


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_hint_leads_to_a_run_that_works(tmp_path: Path, mistake: Mistake) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    for name, text in mistake.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    cwd = tmp_path / mistake.cwd

    broken = _agenteval(cwd, mistake.args)
    assert broken.returncode == 2, broken.stderr + broken.stdout
    error = _one_error(broken.stderr)
    if mistake.where.startswith("--"):
        assert mistake.where in error.where + error.message, error
    else:
        assert error.where.startswith(mistake.where), error
    shown = f"{error.where}: {error.message} hint: {error.hint}"
    for text in mistake.says:
        assert text in shown, shown
    for text in mistake.never:
        assert text not in shown, shown

    args = _follow(error, cwd, mistake.args)
    fixed = _agenteval(cwd, args)
    assert fixed.returncode == 0, fixed.stderr + fixed.stdout
    assert_clean(fixed.stderr)
