"""The YAML reader (`.yaml`, `.yml`): a list of cases, or a mapping whose only key is `cases:`.

The text fields (`id`, `input`, `expected_output`, `context`) are read as written: `1.50` stays
the text "1.50". libyaml parses when it is installed; a mistake is explained by the Python
parser, which says more (`agenteval.yaml_syntax`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import yaml

from agenteval.casefiles.positions import (
    TREE_DEPTH,
    InTree,
    Loc,
    Node,
    Twice,
    cached_tree,
    line_in,
)
from agenteval.casefiles.records import Record, case_items, no_cases, split_duplicate
from agenteval.errors import DatasetError
from agenteval.yaml_syntax import explain_yaml_error

__all__ = ["YAML_STR", "yaml_records"]


# In YAML, plain scalars of these fields are kept as the text written (`id: 007` is "007").
_YAML_TEXT_FIELDS = frozenset({"id", "input", "expected_output", "context"})
YAML_STR = "tag:yaml.org,2002:str"
_YAML_IMPLICIT = frozenset(
    {
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:timestamp",
    }
)
_YAML_MERGE = "tag:yaml.org,2002:merge"


class _YamlLoader(yaml.SafeLoader):
    """A safe loader; a fresh subclass so nothing registered here leaks into `yaml.SafeLoader`."""


_FAST_YAML_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", _YamlLoader
)


def yaml_records(text: str, file: str) -> Iterator[Record]:
    """The cases of a YAML document, each with where it is in the file."""
    try:
        root, data, duplicate = _parse_yaml(text, _FAST_YAML_LOADER)
    except (yaml.YAMLError, RecursionError) as fast_error:
        # libyaml is fast, but the Python parser explains mistakes better: let it say what.
        try:
            _parse_yaml(text, _YamlLoader)
        except (yaml.YAMLError, RecursionError) as exc:
            raise _yaml_error(exc, text, file) from exc
        raise _yaml_error(fast_error, text, file) from fast_error
    if root is None:
        raise no_cases(file, "yaml")
    tree = cached_tree(lambda: _yaml_tree(root, {}))

    def line_of(path: Loc) -> int:
        return line_in(tree(), path)

    items, where = case_items(data, file, "yaml", line_of)
    duplicates = split_duplicate(duplicate, where, len(items), file)
    for index, item in enumerate(items):
        yield Record(
            index + 1,
            item,
            InTree(tree, (*where, index)),
            "yaml",
            duplicates.get(index),
        )


def _parse_yaml(
    text: str, loader_class: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
) -> tuple[yaml.Node | None, Any, Twice | None]:
    """The document's node tree (with lines), its data, and the first key given twice."""
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None, None
        duplicate = _prepare_yaml(root)
        return root, loader.construct_document(root), duplicate
    finally:
        loader.dispose()


def _yaml_error(exc: BaseException, text: str, file: str) -> DatasetError:
    if isinstance(exc, yaml.MarkedYAMLError):
        return _yaml_syntax_error(exc, text, file)
    if isinstance(exc, yaml.reader.ReaderError):
        return DatasetError(
            f"invalid YAML: the character {exc.character:#06x} is not allowed in YAML text",
            file=file,
            line=text.count("\n", 0, exc.position) + 1,
            hint='remove it, or write it as an escape such as "\\x1f" inside double quotes',
        )
    if isinstance(exc, RecursionError):
        return DatasetError(
            "invalid YAML: nested too deeply", file=file, hint="flatten the nesting"
        )
    return DatasetError(
        f"invalid YAML: {str(exc).splitlines()[0]}",
        file=file,
        hint="check that the file is YAML text",
    )


def _case_nodes(root: yaml.Node) -> list[yaml.Node]:
    if isinstance(root, yaml.SequenceNode):
        return list(root.value)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            cases = isinstance(key, yaml.ScalarNode) and key.value == "cases"
            if cases and isinstance(value, yaml.SequenceNode):
                return list(value.value)
    return []


def _prepare_yaml(root: yaml.Node) -> Twice | None:
    """Keep the text fields' plain scalars as text; find the first key given twice, if any."""
    for case in _case_nodes(root):
        if isinstance(case, yaml.MappingNode):
            for key, value in case.value:
                if (
                    isinstance(key, yaml.ScalarNode)
                    and key.value in _YAML_TEXT_FIELDS
                    and isinstance(value, yaml.ScalarNode)
                    and not value.style  # plain: None in PyYAML, '' in libyaml
                    and value.tag in _YAML_IMPLICIT
                ):
                    value.tag = YAML_STR
    return _yaml_duplicate_key(root, (), set())


def _yaml_duplicate_key(node: yaml.Node, path: Loc, visited: set[int]) -> Twice | None:
    if id(node) in visited or len(path) > TREE_DEPTH:
        return None
    visited.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found = _yaml_duplicate_key(item, (*path, index), visited)
            if found:
                return found
    elif isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == _YAML_MERGE:
                continue
            line = key.start_mark.line + 1
            if key.value in seen:
                return Twice((*path, key.value), line, seen[key.value])
            seen[key.value] = line
            found = _yaml_duplicate_key(value, (*path, key.value), visited)
            if found:
                return found
    return None


def _yaml_tree(node: yaml.Node, built: dict[int, Node], depth: int = 0) -> Node:
    known = built.get(id(node))
    if known is not None:  # an alias, or a structure that contains itself
        return dataclasses.replace(known)
    result = Node(node.start_mark.line + 1)
    built[id(node)] = result
    if depth > TREE_DEPTH:
        return result
    if isinstance(node, yaml.SequenceNode):
        result.children = [_yaml_tree(item, built, depth + 1) for item in node.value]
    elif isinstance(node, yaml.MappingNode):
        children: dict[str, Node] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = dataclasses.replace(_yaml_tree(value, built, depth + 1))
                child.key_line = key.start_mark.line + 1
                children[str(key.value)] = child
        result.children = children
    return result


def _yaml_syntax_error(exc: yaml.MarkedYAMLError, text: str, file: str) -> DatasetError:
    problem = explain_yaml_error(exc, text)
    return DatasetError(problem.message, file=file, line=problem.line, hint=problem.hint)
