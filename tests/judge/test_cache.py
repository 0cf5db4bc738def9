"""The judge cache: keys, round trips, persistence, refusal of foreign files, threads."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import random
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.errors import StoreError
from agenteval.judge.cache import (
    DEFAULT_CACHE_PATH,
    CachedVerdict,
    JudgeCache,
    NullCache,
    VerdictCache,
    cache_key,
)
from agenteval.trace import Usage

BASE: dict[str, Any] = {
    "provider": "openai",
    "model": "gpt-4o-mini",
    "params": {"temperature": 0.0, "max_tokens": 512},
    "template_id": "correctness",
    "template_version": 2,
    "inputs": {"question": "Where is Acme?", "answer": "In Paris.", "expected": "Paris"},
    "sample_index": 0,
}


def key(**changes: Any) -> str:
    return cache_key(**{**BASE, **changes})


def verdict(score: float = 1.0, **changes: Any) -> CachedVerdict:
    fields: dict[str, Any] = {
        "verdict": {"score": score, "reason": "matches the expected answer"},
        "raw": f'{{"score": {score}, "reason": "matches the expected answer"}}',
        "usage": Usage(input_tokens=120, output_tokens=30, cached_tokens=64, reasoning_tokens=8),
        "model": "gpt-4o-mini-2024-07-18",
        "params": {"temperature": 0.0, "max_tokens": 512},
        "created_at": datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC),
    }
    fields.update(changes)
    return CachedVerdict(**fields)


# -- keys -------------------------------------------------------------------------------------


def test_key_is_sha256_hex_and_stable() -> None:
    first = key()
    assert len(first) == 64
    assert all(c in "0123456789abcdef" for c in first)
    assert key() == first
    assert cache_key(**copy.deepcopy(BASE)) == first


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("provider", "anthropic"),
        ("model", "gpt-4o"),
        ("params", {"temperature": 0.7, "max_tokens": 512}),
        ("params", {"temperature": 0.0, "max_tokens": 512, "seed": 1}),
        ("template_id", "groundedness"),
        ("template_version", 3),
        ("inputs", {"question": "Where is Acme?", "answer": "In Lyon.", "expected": "Paris"}),
        ("inputs", {"question": "Where is Acme?", "answer": "In Paris."}),
        ("sample_index", 1),
    ],
)
def test_every_component_changes_the_key(field: str, value: Any) -> None:
    assert key(**{field: value}) != key()


def test_repeated_samples_are_distinct_and_the_same_sample_is_the_same_key() -> None:
    keys = [key(sample_index=i) for i in range(5)]
    assert len(set(keys)) == 5
    assert [key(sample_index=i) for i in range(5)] == keys


def test_dict_order_does_not_change_the_key() -> None:
    reordered_inputs = dict(reversed(list(BASE["inputs"].items())))
    reordered_params = {"max_tokens": 512, "temperature": 0.0}
    assert key(inputs=reordered_inputs, params=reordered_params) == key()
    nested_a = {"docs": {"b": [1, {"y": 2, "x": 1}], "a": "text"}}
    nested_b = {"docs": {"a": "text", "b": [1, {"x": 1, "y": 2}]}}
    assert key(inputs=nested_a) == key(inputs=nested_b)


def test_list_order_and_value_types_do_change_the_key() -> None:
    assert key(inputs={"tools": ["a", "b"]}) != key(inputs={"tools": ["b", "a"]})
    assert key(inputs={"n": 1}) != key(inputs={"n": "1"})
    assert key(inputs={"n": 1}) != key(inputs={"n": True})
    assert key(inputs={"n": 1}) != key(inputs={"n": 1.5})
    assert key(inputs={"n": None}) != key(inputs={})


def test_template_version_as_text_or_number_is_the_same_version() -> None:
    assert key(template_version=2) == key(template_version="2")


def test_non_ascii_text_is_hashed_as_utf8() -> None:
    assert key(inputs={"answer": "À Paris ✓"}) != key(inputs={"answer": "A Paris ✓"})
    assert key(inputs={"answer": "日本"}) == key(inputs={"answer": "日本"})
    # A lone surrogate (text decoded from bad bytes) still makes a key.
    assert key(inputs={"answer": "bad \udcff"}) != key(inputs={"answer": "bad"})


@dataclasses.dataclass
class Doc:
    title: str
    score: float


def test_non_json_values_have_a_deterministic_form() -> None:
    inputs = {
        "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "tags": {"b", "a", "c"},
        "doc": Doc("Acme", 0.5),
        "usage": Usage(input_tokens=3),
        "path": Path("docs/acme.md"),
        "blob": b"\x00\x01",
        "pair": (1, 2),
    }
    first = key(inputs=inputs)
    same = {
        "pair": (1, 2),
        "blob": b"\x00\x01",
        "path": Path("docs/acme.md"),
        "usage": Usage(input_tokens=3),
        "doc": Doc("Acme", 0.5),
        "tags": {"c", "a", "b"},
        "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    }
    assert key(inputs=same) == first
    assert key(inputs={**inputs, "tags": {"a", "b"}}) != first
    assert key(inputs={**inputs, "doc": Doc("Acme", 0.6)}) != first
    assert key(inputs={**inputs, "usage": Usage(input_tokens=4)}) != first


def test_non_text_mapping_keys_are_accepted() -> None:
    assert key(inputs={1: "a", "1x": "b"}) == key(inputs={"1x": "b", 1: "a"})
    assert key(inputs={1: "a"}) != key(inputs={"1": "a"})
    assert key(inputs={1: "a", "1": "b"}) != key(inputs={"1": "b"})


def test_bad_sample_index_is_refused() -> None:
    for bad in (-1, True, 1.0, "0"):
        with pytest.raises(ValueError, match="sample_index"):
            key(sample_index=bad)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """An equal copy of `value` whose dicts were built in another order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@given(
    inputs=st.dictionaries(st.text(max_size=10), _json, max_size=6),
    params=st.dictionaries(st.text(max_size=10), _json, max_size=4),
    model=st.text(min_size=1, max_size=20),
    sample=st.integers(min_value=0, max_value=10),
    seed=st.integers(),
)
def test_equal_inputs_give_equal_keys(
    inputs: dict[str, Any], params: dict[str, Any], model: str, sample: int, seed: int
) -> None:
    rng = random.Random(seed)
    first = key(inputs=inputs, params=params, model=model, sample_index=sample)
    again = key(
        inputs=_shuffled(copy.deepcopy(inputs), rng),
        params=_shuffled(copy.deepcopy(params), rng),
        model=model,
        sample_index=sample,
    )
    assert again == first
    assert key(inputs=inputs, params=params, model=model, sample_index=sample + 1) != first


# -- the cache --------------------------------------------------------------------------------


def test_put_get_round_trip(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "cache.db") as cache:
        assert cache.get(key()) is None
        assert len(cache) == 0
        entry = verdict()
        cache.put(key(), entry)
        got = cache.get(key())
        assert got == entry
        assert got is not None
        assert got.usage.cached_tokens == 64
        assert got.created_at == entry.created_at
        assert key() in cache
        assert key(sample_index=1) not in cache
        assert cache.get(key(sample_index=1)) is None
        assert len(cache) == cache.count() == 1


def test_put_replaces_the_entry_of_a_key(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "cache.db") as cache:
        cache.put(key(), verdict(0.0))
        cache.put(key(), verdict(1.0))
        got = cache.get(key())
        assert got is not None
        assert got.verdict["score"] == 1.0
        assert cache.count() == 1


def test_entries_persist_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "judge-cache.db"
    with JudgeCache(path) as cache:
        for i in range(3):
            cache.put(key(sample_index=i), verdict(i / 2))
    with JudgeCache(path) as cache:
        assert cache.count() == 3
        got = cache.get(key(sample_index=2))
        assert got is not None
        assert got.verdict["score"] == 1.0


def test_the_file_is_marked_as_a_judge_cache_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    JudgeCache(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x6167766A
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_clear_forgets_everything(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "cache.db") as cache:
        cache.put(key(), verdict())
        cache.put(key(sample_index=1), verdict())
        cache.clear()
        assert cache.count() == 0
        assert cache.get(key()) is None


def test_an_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    with JudgeCache(path) as cache:
        cache.put(key(), verdict())
    conn = sqlite3.connect(path)
    conn.execute("UPDATE verdicts SET data = '{\"verdict\": 3}'")
    conn.commit()
    conn.close()
    with JudgeCache(path) as cache:
        assert cache.get(key()) is None
        cache.put(key(), verdict())
        assert cache.get(key()) == verdict()


def test_memory_cache() -> None:
    with JudgeCache(":memory:") as cache:
        cache.put(key(), verdict())
        assert cache.get(key()) == verdict()


def test_default_path() -> None:
    assert Path(".agenteval/judge-cache.db") == DEFAULT_CACHE_PATH


def test_closed_cache_says_so(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache.db")
    cache.close()
    cache.close()  # closing twice is fine
    with pytest.raises(StoreError, match="closed"):
        cache.get(key())


def test_null_cache_never_hits() -> None:
    cache: VerdictCache = NullCache()
    cache.put(key(), verdict())
    assert cache.get(key()) is None
    assert cache.count() == 0
    cache.clear()
    with NullCache() as null:
        assert len(null) == 0
        assert key() not in null
        assert null.path is None


def test_judge_cache_satisfies_the_protocol(tmp_path: Path) -> None:
    # Both caches offer every method the judge calls, with the protocol's parameters...
    methods = ("get", "put", "count", "clear", "close")
    for cls in (JudgeCache, NullCache):
        for name in methods:
            wanted = list(inspect.signature(getattr(VerdictCache, name)).parameters)
            assert list(inspect.signature(getattr(cls, name)).parameters) == wanted, (cls, name)
    # ...and, used through it, the file keeps a verdict until cleared while the null one never does.
    caches: list[VerdictCache] = [JudgeCache(tmp_path / "c.db"), NullCache()]
    kept = []
    for cache in caches:
        cache.put(key(), verdict())
        kept.append((cache.get(key()), cache.count()))
        cache.clear()
        assert cache.count() == 0 and cache.get(key()) is None
        cache.close()
    assert kept == [(verdict(), 1), (None, 0)]


# -- refusing what is not ours ----------------------------------------------------------------


def _refused(path: Path, match: str) -> StoreError:
    with pytest.raises(StoreError, match=match) as caught:
        JudgeCache(path)
    return caught.value


def test_a_file_that_is_not_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.db"
    content = b"these are my notes, not a database\n" * 50
    path.write_bytes(content)
    error = _refused(path, "not an agenteval judge cache")
    assert error.file == str(path)
    assert error.hint is not None and "delete the cache file" in error.hint
    assert str(path) in str(error)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judge-cache.db"]


def test_a_corrupt_sqlite_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.db"
    with JudgeCache(path) as cache:
        for i in range(50):
            cache.put(key(sample_index=i), verdict())
    # Keep the SQLite header, damage everything after it.
    data = bytearray(path.read_bytes())
    for i in range(16, len(data)):
        data[i] = 0xA5
    path.write_bytes(bytes(data))
    error = _refused(path, "judge cache")
    assert error.file == str(path)
    assert error.hint is not None and "delete the cache file" in error.hint
    assert path.read_bytes() == bytes(data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judge-cache.db"]


def test_another_sqlite_database_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    _refused(path, "not an agenteval judge cache")
    assert path.read_bytes() == before


def test_a_run_store_is_not_a_judge_cache(tmp_path: Path) -> None:
    from agenteval.store import RunStore

    path = tmp_path / "runs.db"
    RunStore(path).close()
    before = path.read_bytes()
    _refused(path, "not an agenteval judge cache")
    assert path.read_bytes() == before


def test_a_newer_cache_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    JudgeCache(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    _refused(path, "newer agenteval")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    _refused(tmp_path, "folder")


def test_an_empty_file_becomes_a_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    path.touch()
    with JudgeCache(path) as cache:
        cache.put(key(), verdict())
        assert cache.count() == 1


# -- threads and speed ------------------------------------------------------------------------


def test_threads_can_put_and_get_at_once(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with JudgeCache(tmp_path / "cache.db") as cache:

        def work(worker: int) -> None:
            try:
                for i in range(100):
                    k = key(sample_index=worker * 1000 + i)
                    cache.put(k, verdict(i / 100))
                    got = cache.get(k)
                    assert got is not None and got.verdict["score"] == i / 100
                    cache.get(key(sample_index=worker * 1000 + i + 1))
                    len(cache)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert cache.count() == 800


def test_two_connections_to_one_file_share_entries(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    with JudgeCache(path) as first, JudgeCache(path) as second:
        first.put(key(), verdict())
        assert second.get(key()) == verdict()


def test_lookups_are_fast(tmp_path: Path) -> None:
    # A generous bound that only catches a pathological slowdown (a connection per call, a
    # table scan); measured per-call times are far lower.
    with JudgeCache(tmp_path / "cache.db") as cache:
        keys = [key(sample_index=i) for i in range(2000)]
        for k in keys:
            cache.put(k, verdict())
        started = time.perf_counter()
        for k in keys:
            assert cache.get(k) is not None
            assert cache.get(k + "-miss") is None
        elapsed = time.perf_counter() - started
    assert elapsed < 4.0


# -- data of any shape ------------------------------------------------------------------------


def _deep(levels: int, leaf: Any = "leaf") -> Any:
    value: Any = {"x": leaf}
    for _ in range(levels):
        value = {"x": value}
    return value


def _circular() -> dict[str, Any]:
    value: dict[str, Any] = {"score": 1.0}
    value["self"] = value
    return value


def test_a_deep_or_circular_verdict_is_stored_cut_never_a_crash(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "cache.db") as cache:
        cache.put("deep", verdict(verdict={"score": 1.0, "evidence": _deep(3_000)}))
        cache.put("circular", verdict(verdict={"score": 0.5, "evidence": _circular()}))
        deep, circular = cache.get("deep"), cache.get("circular")
    assert deep is not None and deep.verdict["score"] == 1.0
    assert "<cut: nested deeper than 64>" in json.dumps(deep.verdict)
    assert circular is not None and circular.verdict["evidence"]["self"] == (
        "<cut: circular reference>"
    )


def test_a_deep_or_circular_input_makes_a_key_that_matches_no_other() -> None:
    # A key cut short could match another request's and return its verdict: such a request gets
    # a key of its own (asked again each time, never answered with someone else's verdict).
    deep_a, deep_b = key(inputs={"a": _deep(3_000, 1)}), key(inputs={"a": _deep(3_000, 2)})
    circular = key(inputs={"a": _circular()})
    keys = {deep_a, deep_b, circular, key(inputs={"a": _deep(3_000, 1)}), key()}
    assert len(keys) == 5
    assert all(len(k) == 64 for k in keys)
    # Up to the depth the store keeps, a deep input is a key like any other: stable.
    assert key(inputs={"a": _deep(60)}) == key(inputs={"a": _deep(60)})


def test_an_object_whose_repr_raises_still_makes_a_key() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert len(key(inputs={"a": Unprintable()})) == 64
