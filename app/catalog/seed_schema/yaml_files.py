"""Reading a seed file: strict YAML, with the line where each entry starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from app.catalog.seed_schema.errors import SeedError


class UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping."""


def _construct_mapping(loader: UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: Path, shown: str) -> Any:
    """The file's data; a missing file or bad YAML raises a SeedError with line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SeedError(shown, None, None, "file not found") from None
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise SeedError(shown, None, None, problem, line=line, column=column) from None
    except yaml.YAMLError as error:
        raise SeedError(shown, None, None, f"invalid YAML: {error}") from None


def entry_lines(path: Path, key: str) -> list[int]:
    """Line (1-based) where each entry of the top-level list starts."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key_node, value_node in root.value:
        if key_node.value == key and isinstance(value_node, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value_node.value]
    return []
