"""The import graph of src/agenteval stays clean: no import cycle among its modules, no module
using another package's private (`_name`) names, no module over 600 lines.

`lint-imports` (the contracts in pyproject.toml) checks the layers; these tests check what the
contracts cannot say. None of them has an exception.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import grimp  # import-linter's graph builder (the dev extras install it)

import agenteval

PACKAGE = Path(agenteval.__file__).parent
MAX_LINES = 600


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("agenteval", cache_dir=None)


def _edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }


def strongly_connected(edges: Mapping[str, Set[str]]) -> list[frozenset[str]]:
    """The groups of modules (two or more) that import each other, directly or not (Tarjan's
    algorithm, iterative so a deep graph cannot exhaust the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[frozenset[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(frozenset(group))
    return groups


def shortest_cycle(edges: Mapping[str, Set[str]], group: Set[str]) -> list[str]:
    """One shortest cycle through the group's first module, to name in a failure."""
    start = min(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(edges[node] & group):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    return sorted(group)


def test_the_cycle_finder_names_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert strongly_connected(edges) == [frozenset({"a", "b", "c"})]
    assert shortest_cycle(edges, {"a", "b", "c"}) == ["a", "b", "c", "a"]


def test_no_import_cycle_among_the_modules() -> None:
    edges = _edges(_graph())
    groups = strongly_connected(edges)
    assert not groups, "import cycles:\n" + "\n".join(
        " -> ".join(shortest_cycle(edges, group)) for group in groups
    )


def _module_files() -> dict[str, Path]:
    files = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _package_of(module: str, files: Mapping[str, Path]) -> str:
    """A package's own __init__ belongs to the package; a module to the package holding it."""
    if files[module].name == "__init__.py":
        return module
    return module.rpartition(".")[0]


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        value = _dotted(node.value)
        return None if value is None else f"{value}.{node.attr}"
    return None


def private_uses(module: str, files: Mapping[str, Path]) -> set[tuple[str, str, str]]:
    """(module, source module, name) for each private name `module` takes from a module of
    another package: `from x import _name`, `from x._private import y`, or `x._name` where
    `x` names an agenteval module."""
    package = _package_of(module, files)
    tree = ast.parse(files[module].read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}  # a local name -> the agenteval module it stands for
    uses: set[tuple[str, str, str]] = set()

    def other_package(source: str) -> bool:
        return source in files and _package_of(source, files) != package

    def private_path(source: str) -> None:
        # `from agenteval.x._hidden import y` / `import agenteval.x._hidden`
        parts = source.split(".")
        for depth in range(2, len(parts) + 1):
            parent, name = ".".join(parts[: depth - 1]), parts[depth - 1]
            inside = package == parent or package.startswith(parent + ".")
            if _is_private(name) and parent in files and not inside:
                uses.add((module, parent, name))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "agenteval":
                    continue
                private_path(alias.name)
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases["agenteval"] = "agenteval"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            if source.split(".")[0] != "agenteval":
                continue
            private_path(source)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in files:
                    private_path(submodule)
                    aliases[alias.asname or alias.name] = submodule
                elif _is_private(alias.name) and other_package(source):
                    uses.add((module, source, alias.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            dotted = _dotted(node.value)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head not in aliases:
                continue
            source = f"{aliases[head]}.{rest}" if rest else aliases[head]
            if other_package(source):
                uses.add((module, source, node.attr))
    return uses


def test_the_private_name_finder(tmp_path: Path) -> None:
    sources = {
        "agenteval/__init__.py": "",
        "agenteval/a/__init__.py": "from agenteval.a.one import _fine\n",
        "agenteval/a/one.py": (
            "from agenteval.b.two import _hidden, shown\n"
            "from agenteval.b import two as t, _private\n"
            "import agenteval.b.two\n"
            "from . import _sibling\n"
            "from .one import _own\n"
            "from agenteval.version import __version__\n"
            "x = t._also, agenteval.b.two._deep, t.public, shown._not_a_module\n"
        ),
        "agenteval/b/__init__.py": "",
        "agenteval/b/two.py": "",
        "agenteval/b/_private.py": "",
    }
    files = {}
    for name, text in sources.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        parts = list(Path(name).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    assert private_uses("agenteval.a.one", files) == {
        ("agenteval.a.one", "agenteval.b.two", "_hidden"),
        ("agenteval.a.one", "agenteval.b", "_private"),
        ("agenteval.a.one", "agenteval.b.two", "_also"),
        ("agenteval.a.one", "agenteval.b.two", "_deep"),
    }
    assert private_uses("agenteval.a", files) == set()


def test_no_module_uses_another_packages_private_names() -> None:
    files = _module_files()
    found = set().union(*(private_uses(module, files) for module in files))
    assert not found, "private names used across packages (give them a public name):\n" + (
        "\n".join(f"{importer} uses {source}.{name}" for importer, source, name in sorted(found))
    )


def test_no_module_is_over_600_lines() -> None:
    lengths = {
        path.relative_to(PACKAGE.parent).as_posix(): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in PACKAGE.rglob("*.py")
    }
    long = {name for name, lines in lengths.items() if lines > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by job): " + ", ".join(
        f"{name} ({lengths[name]})" for name in sorted(long)
    )
