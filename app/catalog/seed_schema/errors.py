"""How a problem in the seed files is reported: the file, the entry, the field, the line."""

from __future__ import annotations

from typing import Any


class SeedError(Exception):
    """A problem in the seed files, located by file, entry and field.

    ``str()`` reads ``seed_data/models.yaml: models[3] (slug qwen3-32b): params_total_b:
    Input should be a valid number``; YAML syntax errors read
    ``seed_data/models.yaml: line 12, column 5: <problem>``.
    ``errors`` lists every problem found (this one first).
    """

    def __init__(
        self,
        file: str,
        entry: str | None,
        field: str | None,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.file = file
        self.entry = entry
        self.field = field
        self.message = message
        self.line = line
        self.column = column
        self.errors: list[SeedError] = [self]
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.file]
        if self.entry:
            parts.append(self.entry)
        elif self.line is not None:
            where = f"line {self.line}"
            parts.append(where if self.column is None else f"{where}, column {self.column}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)

    def __repr__(self) -> str:
        return f"SeedError({str(self)!r})"


def entry_label(key: str, index: int, slug: Any) -> str:
    """How an entry is named in errors: ``models[3] (slug qwen3-32b)``."""
    if isinstance(slug, str) and slug:
        return f"{key}[{index}] (slug {slug})"
    return f"{key}[{index}]"


def pair_label(index: int, artifact: Any, runtime: Any) -> str:
    """Verified pairs have no slug; they are named by what they pair."""
    known = [
        f"{name} {value}"
        for name, value in (("artifact", artifact), ("runtime", runtime))
        if isinstance(value, str) and value
    ]
    return f"verified_pairs[{index}]" + (f" ({', '.join(known)})" if known else "")
