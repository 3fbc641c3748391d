"""Importing another tool's result file: its points, our metadata, the file's hash kept."""

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any, Literal

from sqlalchemy.orm import Session

from app.errors import Conflict
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.records.importers import ImportedRun, ImportFormatError, read_result, sha256_hex
from app.records.schemas import FieldError
from app.records.storage.repository import RecordRepository
from app.records.storage.service import Submission, scoped_key, submit_record

ALREADY_IMPORTED = register(
    "record.file_already_imported",
    _l(
        "This file (sha256 %(sha256)s) was already imported as record %(record)s; nothing "
        "new was stored. Import a new result file, or review record %(record)s."
    ),
)


class AlreadyImported(Conflict):
    """The same result file (same sha256) was imported before: one run, one record."""

    def __init__(self, record_id: int, digest: str) -> None:
        super().__init__(ALREADY_IMPORTED(sha256=digest[:12], record=str(record_id)))
        self.record_id = record_id


def merged(meta: Mapping[str, Any], run: ImportedRun | None) -> dict[str, Any]:
    """Metadata as given wins; the file fills the runtime version, environment and points."""
    raw: dict[str, Any] = {"outcome": "ok", **meta}
    if run is None:
        return raw
    if not raw.get("runtime_version") and run.runtime_version:
        raw["runtime_version"] = run.runtime_version
    given_env = meta.get("environment")
    raw["environment"] = {**run.environment, **(given_env if isinstance(given_env, dict) else {})}
    raw["measurements"] = run.measurements
    return raw


def provenance(run: ImportedRun, content: bytes, filename: str | None, source: str) -> dict:
    return {
        "tool": run.tool,
        "format": run.format,
        "tool_version": run.tool_version,
        "sha256": sha256_hex(content),
        "bytes": len(content),
        "filename": PurePath(filename).name[:200] if filename else None,
        "source": source,
        "summary": run.summary,
    }


def import_record(
    session: Session,
    content: bytes,
    meta: Mapping[str, Any],
    *,
    submitted_by: str,
    fmt: str | None = None,
    filename: str | None = None,
    source: Literal["upload", "cli"] = "upload",
    idempotency_key: str | None = None,
    extra_errors: list[FieldError] | None = None,
) -> Submission:
    """Read the file and submit it as a record; file and metadata errors come back together."""
    errors = list(extra_errors or [])
    run: ImportedRun | None = None
    try:
        run = read_result(content, fmt)
    except ImportFormatError as error:
        errors.append(FieldError.of("file", error.said))
    detail = provenance(run, content, filename, source) if run else {}
    if run is not None:
        refuse_a_second_import(session, detail["sha256"], submitted_by, idempotency_key)
    return submit_record(
        session,
        merged(meta, run),
        provenance="import",
        submitted_by=submitted_by,
        idempotency_key=idempotency_key,
        provenance_detail=detail,
        extra_errors=errors,
    )


def refuse_a_second_import(
    session: Session, digest: str, submitted_by: str, idempotency_key: str | None
) -> None:
    """A file imported before is refused, naming its record, unless this is a retry of that
    very import (the same idempotency key), which is answered with the first record."""
    earlier = RecordRepository(session).imported_file(digest)
    if earlier is None:
        return
    record_id, key = earlier
    if idempotency_key and key == scoped_key(submitted_by, idempotency_key):
        return
    raise AlreadyImported(record_id, digest)
