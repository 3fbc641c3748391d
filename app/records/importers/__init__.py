"""Result files of other benchmark tools, read into record measurements."""

import hashlib
from collections.abc import Callable
from typing import Any

from app.records.importers import guidellm, llama_bench, vllm
from app.records.importers.base import (
    EMPTY,
    NOT_JSON,
    NOT_UTF8,
    UNKNOWN_FORMAT,
    UNREADABLE,
    UNRECOGNISED,
    ImportedRun,
    ImportFormatError,
)
from app.security.json_input import JsonRefused, NotJson, loads_strict

FORMATS: dict[str, tuple[Callable[[Any], bool], Callable[[Any], ImportedRun]]] = {
    "vllm": (vllm.looks_like, vllm.parse),
    "guidellm": (guidellm.looks_like, guidellm.parse),
    "llama-bench": (llama_bench.looks_like, llama_bench.parse),
}
FORMAT_LABELS = {
    "vllm": "vLLM bench serve --save-result JSON",
    "guidellm": "GuideLLM JSON report",
    "llama-bench": "llama-bench -o json",
}

__all__ = [
    "FORMATS",
    "FORMAT_LABELS",
    "ImportFormatError",
    "ImportedRun",
    "read_result",
    "sha256_hex",
]


def sha256_hex(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def load_json(content: bytes) -> Any:
    """One JSON document, or JSON lines (vLLM's --append-result)."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportFormatError(NOT_UTF8()) from error
    # Tools write NaN for a statistic they could not compute: read as missing, not refused.
    try:
        return loads_strict(text, nan_as_null=True)
    except NotJson as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1:
            try:
                return [loads_strict(line, nan_as_null=True) for line in lines]
            except JsonRefused:
                pass
        raise ImportFormatError(NOT_JSON(detail=str(whole))) from whole
    except JsonRefused as refused:
        raise ImportFormatError(UNREADABLE(problem=refused.said)) from refused


def detect(document: Any) -> str:
    for name, (looks_like, _parse) in FORMATS.items():
        if looks_like(document):
            return name
    raise ImportFormatError(UNRECOGNISED(formats="; ".join(FORMAT_LABELS.values())))


def read_result(content: bytes, fmt: str | None = None) -> ImportedRun:
    """Parse a result file, detecting its format unless one is named."""
    if not content.strip():
        raise ImportFormatError(EMPTY())
    document = load_json(content)
    name = fmt or detect(document)
    if name not in FORMATS:
        raise ImportFormatError(UNKNOWN_FORMAT(name=name, formats=list(FORMATS)))
    return FORMATS[name][1](document)
