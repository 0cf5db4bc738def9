"""`import_or_skip`: a test skips when its package is not installed, and fails when the package
is installed but does not import (a skip passes nothing: openai-v2 2.4b0 beside
opentelemetry-util-genai 1.3b0 skipped every instrumentation test, OpenInference's and
OpenLLMetry's too, and the run stayed green)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.otel.installed import import_or_skip


def test_a_package_that_is_not_installed_skips() -> None:
    with pytest.raises(pytest.skip.Exception, match="agenteval_absent_package"):
        import_or_skip("agenteval_absent_package.instrumentation")


def test_a_module_missing_from_an_installed_namespace_skips() -> None:
    # opentelemetry is installed; one of its instrumentations is not.
    with pytest.raises(pytest.skip.Exception):
        import_or_skip("opentelemetry.instrumentation.agenteval_absent")


def test_an_installed_package_that_does_not_import_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "agenteval_broken_package"
    package.mkdir()
    # What openai-v2 2.4b0 does on util-genai 1.2b0 and later: import a module renamed away.
    (package / "__init__.py").write_text("from agenteval_broken_package.renamed import x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match=r"agenteval_broken_package\.renamed"):
        import_or_skip("agenteval_broken_package")


def test_an_installed_package_is_returned() -> None:
    import opentelemetry.trace

    assert import_or_skip("opentelemetry.trace") is opentelemetry.trace
