"""Task files: YAML (one task: name, prompts, ...) or JSONL (one prompt a line, named by
the file), read into the same ``TaskIn`` the API takes."""

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from app.bench.quality.task_spec import TaskFileError, TaskPrompt, describe
from app.security.json_input import JsonRefused, loads_strict
from app.tasks.schemas import TaskIn

MAX_FILE_BYTES = 20 * 1024 * 1024


def read_task_file(path: Path) -> TaskIn:
    """The task in ``path``; ``TaskFileError`` names the file, the line or field, and why."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TaskFileError(f"{path.name}: over {MAX_FILE_BYTES // 2**20} MiB")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskFileError(f"{path.name}: not UTF-8 text") from error
    if path.suffix.lower() == ".jsonl":
        return _from_jsonl(text, path)
    if path.suffix.lower() in (".yaml", ".yml"):
        return _from_yaml(text, path)
    raise TaskFileError(f"{path.name}: give a .yaml, .yml or .jsonl file")


def _from_yaml(text: str, path: Path) -> TaskIn:
    try:
        raw: Any = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise TaskFileError(f"{path.name}: not YAML ({error})") from error
    if not isinstance(raw, dict):
        raise TaskFileError(f"{path.name}: expected a mapping with name and prompts")
    try:
        return TaskIn.model_validate(raw)
    except ValidationError as error:
        raise TaskFileError(f"{path.name}: {describe(error)}") from error


def _from_jsonl(text: str, path: Path) -> TaskIn:
    prompts: list[TaskPrompt] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            prompts.append(TaskPrompt.model_validate(loads_strict(line)))
        except JsonRefused as error:
            raise TaskFileError(f"{path.name} line {number}: not JSON ({error})") from error
        except ValidationError as error:
            raise TaskFileError(f"{path.name} line {number}: {describe(error)}") from error
    try:
        return TaskIn(name=path.stem, prompts=prompts)
    except ValidationError as error:
        raise TaskFileError(f"{path.name}: {describe(error)}") from error
