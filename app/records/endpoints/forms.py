"""The record form: what the person typed, turned into the schema's shape and back.

Field names follow the error paths (``measurements.2.ttft_ms``, ``environment.os``), so
an error lands beside the input it is about and every typed value is shown again.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.i18n import lazy_gettext as _l
from app.i18n.sentences import register, render
from app.records.schemas import FieldError
from app.security.json_input import JsonRefused, NotJson, loads_strict

SCALARS = (
    "model",
    "artifact",
    "runtime",
    "runtime_version",
    "hardware",
    "gpu_count",
    "profile",
    "command",
    "outcome",
    "notes",
)
ENVIRONMENT = ("driver", "os", "runtime_build")
ROW_FIELDS = (
    "context_length",
    "concurrency",
    "ttft_ms",
    "decode_tokens_per_s",
    "itl_ms",
    "e2e_latency_ms",
    "throughput_tokens_per_s",
    "peak_memory_gb_per_gpu",
    "needle_accuracy",
    "repetitions",
)
ROW_LABELS = {
    "context_length": _l("Context (tokens)"),
    "concurrency": _l("Concurrency"),
    "ttft_ms": _l("TTFT (ms)"),
    "decode_tokens_per_s": _l("Decode (tok/s)"),
    "itl_ms": _l("ITL (ms)"),
    "e2e_latency_ms": _l("End-to-end (ms)"),
    "throughput_tokens_per_s": _l("Throughput (tok/s)"),
    "peak_memory_gb_per_gpu": _l("Peak memory (GB/GPU)"),
    "needle_accuracy": _l("Needle accuracy (0–1)"),
    "repetitions": _l("Repetitions"),
}
# The form's label for each field an error can name (the summary above the form lists them).
FIELD_LABELS = {
    "model": _l("Model"),
    "artifact": _l("Model file"),
    "runtime": _l("Runtime"),
    "runtime_version": _l("Runtime version"),
    "hardware": _l("Hardware"),
    "gpu_count": _l("GPUs used"),
    "profile": _l("Profile"),
    "outcome": _l("Outcome"),
    "command": _l("Command as run"),
    "applied_values": _l("Applied values"),
    "environment.driver": _l("GPU driver"),
    "environment.os": _l("Operating system"),
    "environment.runtime_build": _l("Runtime build"),
    "measurements": _l("Measurements"),
    "file": _l("Or import a result file"),
    "notes": _l("Notes"),
}
ROW_FIELD = register("form.row_field", _l("Row %(row)s, %(field)s"))
ROW_ONLY = register("form.row", _l("Row %(row)s"))


def error_label(name: str) -> str:
    """The label of the field an error names, as the form shows it, in the reader's words."""
    match = ROW_NAME.match(name)
    if match:
        field = ROW_LABELS.get(match[2], match[2])
        return render(ROW_FIELD(row=int(match[1]) + 1, field=str(field)))
    row = re.match(r"^measurements\.(\d+)$", name)
    if row:
        return render(ROW_ONLY(row=int(row[1]) + 1))
    label = FIELD_LABELS.get(name)
    return str(label) if label is not None else name


GIVE_AN_OBJECT = register("form.give_an_object", _l("give a JSON object"))
WRITE_AS_ASSIGNMENT = register(
    "form.write_as_assignment", _l("line %(line)s: write it as name = value")
)
ON_LINE = register("form.on_line", _l("line %(line)s: %(problem)s"))
DEFAULT_ROWS = 3
MAX_ROWS = 200
ROW_NAME = re.compile(r"^measurements\.(\d+)\.(\w+)$")
ASSIGNMENT = re.compile(r"^\s*([^=:\s][^=:]*?)\s*[=:]\s*(.*)$")


@dataclass
class FormState:
    """What the page shows: typed values, the rows, and errors keyed by input name."""

    values: dict[str, str] = field(default_factory=dict)
    rows: list[dict[str, str]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)

    def error(self, name: str) -> str | None:
        return self.errors.get(name)


@dataclass
class ParsedForm:
    raw: dict[str, Any]
    state: FormState
    row_of: list[int]  # position in raw["measurements"] -> row index on the form
    errors: list[FieldError]


def text_fields(form: Mapping[str, Any]) -> dict[str, str]:
    return {k: v for k, v in form.items() if isinstance(v, str)}


def typed_rows(fields: Mapping[str, str]) -> list[dict[str, str]]:
    rows: dict[int, dict[str, str]] = {}
    for name, value in fields.items():
        match = ROW_NAME.match(name)
        if match and int(match[1]) < MAX_ROWS and match[2] in ROW_FIELDS:
            rows.setdefault(int(match[1]), {})[match[2]] = value
    count = max(rows, default=-1) + 1
    return [rows.get(index, {}) for index in range(max(count, DEFAULT_ROWS))]


def parse_applied_values(text: str) -> tuple[dict[str, Any], list[FieldError]]:
    """A JSON object, or one `name = value` (or `name: value`) per line."""
    text = text.strip()
    if not text:
        return {}, []
    if text.startswith("{"):
        try:
            value = loads_strict(text)
        except JsonRefused as error:
            return {}, [FieldError.of("applied_values", error.said)]
        if isinstance(value, dict):
            return value, []
        return {}, [FieldError.of("applied_values", GIVE_AN_OBJECT())]
    values: dict[str, Any] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = ASSIGNMENT.match(line)
        if match is None:
            return {}, [FieldError.of("applied_values", WRITE_AS_ASSIGNMENT(line=number))]
        try:
            values[match[1]] = scalar(match[2].strip())
        except JsonRefused as error:
            return {}, [FieldError.of("applied_values", ON_LINE(line=number, problem=error.said))]
    return values, []


def scalar(raw: str) -> Any:
    """A JSON value (number, true, null, a quoted string, a list...), else the text as typed;
    NaN, Infinity and integers past 64 bits are refused, not kept as text."""
    try:
        return loads_strict(raw)
    except NotJson:
        return raw


def parse_form(form: Mapping[str, Any]) -> ParsedForm:
    """The schema's raw input, plus the state to re-render the form with."""
    fields = text_fields(form)
    state = FormState(values=fields, rows=typed_rows(fields))
    raw: dict[str, Any] = {k: fields[k].strip() for k in SCALARS if fields.get(k, "").strip()}
    environment = {
        k: fields[f"environment.{k}"].strip()
        for k in ENVIRONMENT
        if fields.get(f"environment.{k}", "").strip()
    }
    raw["environment"] = environment
    raw["applied_values"], errors = parse_applied_values(fields.get("applied_values", ""))
    measurements, row_of = [], []
    for index, row in enumerate(state.rows):
        given = {k: v.strip() for k, v in row.items() if v.strip()}
        if given:
            measurements.append(given)
            row_of.append(index)
    raw["measurements"] = measurements
    return ParsedForm(raw, state, row_of, errors)


def show_errors(parsed: ParsedForm, errors: list[FieldError]) -> FormState:
    """Put each error beside its input; positions in the list map back to form rows."""
    state = parsed.state
    for error in errors:
        name = form_name(error.field, parsed.row_of)
        if name is None:
            state.general.append(f"{error.field}: {error.text()}")
        else:
            state.errors.setdefault(name, error.text())
    return state


def form_name(path: str, row_of: list[int]) -> str | None:
    parts = path.split(".")
    if parts[0] == "measurements" and len(parts) >= 2 and parts[1].isdigit():
        position = int(parts[1])
        if position >= len(row_of):
            return None
        row = row_of[position]
        if len(parts) == 2:
            return f"measurements.{row}"
        return f"measurements.{row}.{parts[2]}" if parts[2] in ROW_FIELDS else None
    if parts[0] == "environment" and len(parts) == 2 and parts[1] in ENVIRONMENT:
        return path
    if parts[0] in (*SCALARS, "applied_values", "file") and len(parts) == 1:
        return path
    return None
