"""Importing agenteval imports no optional dependency: the provider SDKs, the OpenTelemetry SDK
and the frameworks are imported only when a run needs them (installed or not, they must never
make `import agenteval` slower or fail)."""

from __future__ import annotations

import subprocess
import sys

OPTIONAL = (
    "openai",
    "anthropic",
    "google",
    "opentelemetry",
    "pydantic_ai",
    "agents",
    "langgraph",
    "langchain_core",
    "langchain",
    "ray",
    "starlette",
)


def test_importing_agenteval_imports_no_optional_dependency() -> None:
    code = (
        "import sys, agenteval, agenteval.cli\n"
        f"optional = {OPTIONAL!r}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in optional}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
