"""A run found again after its project folder moved, and never another project's run: only a
run whose old target no longer exists, with the same target file name, agent reference, dataset
file name and the very same cases, is taken for the target given now."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agenteval import EvalCase, RunStore
from agenteval.config import Target, find_target
from agenteval.engine.relocation import find_relocated, rehome, relocated
from agenteval.run import RunInfo, RunStatus

CASES = [{"id": f"c{i}", "input": f"q{i}", "expected_output": f"Q{i}"} for i in range(5)]


def _project(
    folder: Path, cases: list[dict[str, str]] = CASES, agent: str = "agent.py:answer"
) -> Target:
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text("def answer(q):\n    return q.upper()\n")
    (folder / "scorers.py").write_text("def fine(case, trial):\n    return True\n")
    (folder / "cases.json").write_text(json.dumps(cases))
    (folder / "agenteval.yaml").write_text(f"dataset: cases.json\nagent: {agent}\n")
    return find_target(folder)


def _started(store: RunStore, found: Target, **changes: object) -> RunInfo:
    """A run stored as `agenteval run` stores one, unfinished."""
    info = RunInfo(
        target=found.key,
        agent="agent.py:answer",
        dataset="cases.json",
        scorers=[f"{found.base_dir.resolve()}/scorers.py:fine", "exact_match"],
        settings={"base_dir": str(found.base_dir.resolve())},
    ).model_copy(update=changes)
    store.create_run(info, [EvalCase.model_validate(c) for c in CASES])
    return info


def test_a_moved_run_is_found_again_by_id_and_by_target_and_re_homed(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.db") as store:
        info = _started(store, _project(tmp_path / "before"))
        moved = find_target((tmp_path / "before").rename(tmp_path / "after"))
        found = relocated(store, store.get_info(info.run_id), moved, "agent.py:answer")
        assert found is not None and found.run_id == info.run_id
        assert "no longer exists" in found.describe() and "5 cases of cases.json" in found.matched
        by_target = find_relocated(store, moved, "agent.py:answer")
        assert by_target is not None and by_target.run_id == info.run_id

        rehomed = rehome(store, found, moved)
        new_dir = str((tmp_path / "after").resolve())
        assert rehomed.target == moved.key
        assert rehomed.settings["base_dir"] == new_dir
        assert rehomed.scorers == [f"{new_dir}/scorers.py:fine", "exact_match"]
        assert store.latest_unfinished(moved.key) == info.run_id  # found by path from now on


def test_another_projects_run_is_never_taken(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.db") as store:
        original = _project(tmp_path / "one")
        still_there = _started(store, original)
        # A copy: the original still exists, so its run stays its own.
        shutil.copytree(tmp_path / "one", tmp_path / "copy")
        copy = find_target(tmp_path / "copy")
        assert relocated(store, store.get_info(still_there.run_id), copy, "agent.py:answer") is None
        assert find_relocated(store, copy, "agent.py:answer") is None

        gone = _started(store, _project(tmp_path / "gone"))
        shutil.rmtree(tmp_path / "gone")
        edited = [*CASES[:-1], {**CASES[-1], "expected_output": "other"}]
        for other, agent in [
            (_project(tmp_path / "edited", edited), "agent.py:answer"),  # a case differs
            (_project(tmp_path / "fewer", CASES[:-1]), "agent.py:answer"),  # a case less
            (original, "bot.py:reply"),  # another agent
        ]:
            info = store.get_info(gone.run_id)
            assert relocated(store, info, other, agent) is None
            assert find_relocated(store, other, agent) is None
        # The same everything but the file name of the target.
        named = tmp_path / "named"
        shutil.copytree(tmp_path / "one", named)
        (named / "agenteval.yaml").rename(named / "eval.yaml")
        assert (
            relocated(
                store,
                store.get_info(gone.run_id),
                find_target(named / "eval.yaml"),
                "agent.py:answer",
            )
            is None
        )


def test_a_finished_run_is_never_taken(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.db") as store:
        _started(store, _project(tmp_path / "done"), status=RunStatus.FINISHED)
        moved = find_target((tmp_path / "done").rename(tmp_path / "after"))
        assert find_relocated(store, moved, "agent.py:answer") is None
