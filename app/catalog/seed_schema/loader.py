"""Loading the catalog: every entry validated, every problem located by file, entry, field
and line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from app.catalog.seed_schema.catalog import SEED_FILES, SeedCatalog
from app.catalog.seed_schema.errors import SeedError, entry_label, pair_label
from app.catalog.seed_schema.hardware import SeedHardware
from app.catalog.seed_schema.models import SeedModel
from app.catalog.seed_schema.profiles import SeedProfile
from app.catalog.seed_schema.runtimes import SeedRuntime
from app.catalog.seed_schema.verified_pairs import SeedVerifiedPair
from app.catalog.seed_schema.yaml_files import entry_lines, read_yaml
from app.resources import SEED_DIR

DEFAULT_SEED_DIR = SEED_DIR

ENTRY_CLASSES: dict[str, type[BaseModel]] = {
    "models": SeedModel,
    "hardware": SeedHardware,
    "runtimes": SeedRuntime,
    "profiles": SeedProfile,
    "verified_pairs": SeedVerifiedPair,
}


def load_catalog(directory: Path) -> SeedCatalog:
    """Read and check the five seed files in ``directory``.

    Raises :class:`SeedError` (the first problem; ``.errors`` holds all of them).
    """
    directory = Path(directory)
    errors: list[SeedError] = []
    loaded = {key: _load_file(directory, name, key, errors) for name, key in SEED_FILES.items()}
    if not errors:
        errors = _cross_file_problems(directory, loaded)
    if errors:
        first = errors[0]
        first.errors = errors
        raise first
    return SeedCatalog.model_validate(loaded)


def _load_file(directory: Path, name: str, key: str, errors: list[SeedError]) -> list[BaseModel]:
    shown = f"{directory.name}/{name}"
    entries = _read_entries(directory / name, shown, key, errors)
    if entries is None:
        return []
    return _validate_entries(directory / name, shown, key, entries, errors)


def _read_entries(path: Path, shown: str, key: str, errors: list[SeedError]) -> list[Any] | None:
    """The file's list of raw entries, or None when the file cannot give one."""
    try:
        data = read_yaml(path, shown)
    except SeedError as error:
        errors.append(error)
        return None
    if not isinstance(data, dict) or key not in data:
        errors.append(
            SeedError(shown, None, key, f"the file must be a mapping with a top-level '{key}' list")
        )
        return None
    extra = sorted(set(data) - {key, "schema_version"}, key=str)
    if extra:
        errors.append(SeedError(shown, None, str(extra[0]), "unknown top-level key"))
    entries = data[key]
    if not isinstance(entries, list):
        errors.append(SeedError(shown, None, key, "must be a list of entries"))
        return None
    return entries


def _validate_entries(
    path: Path, shown: str, key: str, entries: list[Any], errors: list[SeedError]
) -> list[BaseModel]:
    lines = entry_lines(path, key)
    cls = ENTRY_CLASSES[key]
    loaded: list[BaseModel] = []
    for index, raw in enumerate(entries):
        try:
            loaded.append(cls.model_validate(raw))
        except ValidationError as error:
            line = lines[index] if index < len(lines) else None
            entry = _entry_name(key, index, raw)
            errors.extend(_validation_errors(error, raw, shown, entry, line))
    return loaded


def _entry_name(key: str, index: int, raw: Any) -> str:
    if key == "verified_pairs":
        if isinstance(raw, dict):
            return pair_label(index, raw.get("artifact"), raw.get("runtime"))
        return f"verified_pairs[{index}]"
    return entry_label(key, index, raw.get("slug") if isinstance(raw, dict) else None)


def _validation_errors(
    error: ValidationError, raw: Any, file: str, entry: str, line: int | None
) -> list[SeedError]:
    """One SeedError per distinct problem pydantic found in an entry."""
    found: list[SeedError] = []
    for item in error.errors(include_url=False):
        field = _format_loc(raw, tuple(item["loc"]))
        message = item["msg"]
        if item["type"] == "seed_field":
            # a model validator's error names its field; append it to where pydantic was
            inner = item["ctx"]["field"]
            field = f"{field}.{inner}" if field and not inner.startswith("[") else field + inner
            message = item["ctx"]["message"]
        elif message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        seed_error = SeedError(file, entry, field or None, message, line=line)
        if str(seed_error) not in {str(e) for e in found}:
            found.append(seed_error)
    return found


def _format_loc(raw: Any, loc: tuple[Any, ...]) -> str:
    """Render a validation location against the raw data: ``artifacts[0].repo``."""
    text = ""
    for part in _raw_parts(raw, loc):
        text += part if part.startswith("[") or not text else f".{part}"
    return text


def _raw_parts(raw: Any, loc: tuple[Any, ...]) -> Iterator[str]:
    """The parts of a validation location that exist in the raw data.

    Other parts are internal (a union tag, or the ``value`` slot of a number written as
    a plain scalar) and are left out.
    """
    current = raw
    for position, part in enumerate(loc):
        last = position == len(loc) - 1
        if isinstance(current, dict) and part in current:
            yield str(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            yield f"[{part}]"
            current = current[part]
        elif last and isinstance(current, dict):
            yield str(part)  # a missing or unknown key


def _cross_file_problems(directory: Path, loaded: dict[str, list[BaseModel]]) -> list[SeedError]:
    """Problems between valid entries, each located at the line its entry starts."""
    catalog = SeedCatalog.model_construct(**loaded)
    files = {key: f"{directory.name}/{name}" for name, key in SEED_FILES.items()}
    problems = catalog.problems(files)
    for problem in problems:
        if problem.entry and problem.line is None:
            problem.line = _line_of(directory, problem)
    return problems


def _line_of(directory: Path, error: SeedError) -> int | None:
    match = re.match(r"^(\w+)\[(\d+)\]", error.entry or "")
    if not match:
        return None
    name = error.file.rsplit("/", 1)[-1]
    lines = entry_lines(directory / name, match.group(1))
    index = int(match.group(2))
    return lines[index] if index < len(lines) else None
