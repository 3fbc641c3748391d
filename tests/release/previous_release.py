"""The database of the previous release, kept as data: what its migrations and its seed
made, with records and their reviews in it, dumped table by table. The upgrade test
loads it into SQLite or PostgreSQL at the revision it was made at, then upgrades it with
this code.

Made by running the previous release's own code (``git archive COMMIT``) against a new
SQLite file: ``python -m tests.release.previous_release COMMIT`` rewrites
tests/release/data/previous_release.json. Run it again with the new previous release
whenever one is made.
"""

import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime
from io import BytesIO
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, MetaData, delete, insert, select, text
from sqlalchemy.engine import Connection

from app.config import PROJECT_ROOT

DUMP = Path(__file__).parent / "data" / "previous_release.json"

# Run by the previous release's code: migrate, seed, then records through its own API.
MAKE_WITH_OLD_CODE = """
import sys
from fastapi.testclient import TestClient
from app.config import Settings
from app.db import upgrade_database, session_scope
from app.catalog.seed import seed_catalog
from app.catalog.seed_schema import load_catalog
from app.config import PROJECT_ROOT
from app.main import create_app

settings = Settings(database_url=sys.argv[1], run_worker=False)
upgrade_database(settings)
with session_scope(settings) as session:
    seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
record = {
    "model": "glm-5.3-flash", "artifact": "glm-5.3-flash-fp8", "runtime": "sglang",
    "runtime_version": "0.5.10", "hardware": "8x-h200-141gb", "gpu_count": 8,
    "profile": "balanced",
    "command": "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8",
    "applied_values": {"tensor_parallel": 8, "context": 16384},
    "environment": {"driver": "580.95.05", "os": "Ubuntu 24.04"},
    "outcome": "ok", "notes": "three runs, median kept",
    "measurements": [
        {"context_length": 4096, "concurrency": 1, "repetitions": 3, "ttft_ms": 250.0,
         "decode_tokens_per_s": 95.0, "itl_ms": 10.5, "peak_memory_gb_per_gpu": 120.0},
    ],
}
with TestClient(create_app(settings)) as client:
    ids = []
    for n, notes in enumerate(("accepted later", "rejected later", "left pending")):
        body = {**record, "notes": notes}
        body["measurements"] = [{**record["measurements"][0], "decode_tokens_per_s": 95.0 + n}]
        answer = client.post("/api/records", json=body, headers={"Idempotency-Key": f"k{n}"})
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["id"])
    for record_id, action, reason in ((ids[0], "accept", "reproduced"),
                                      (ids[1], "reject", "numbers from another card")):
        answer = client.post(f"/api/records/{record_id}/review",
                             json={"action": action, "reason": reason})
        assert answer.status_code == 200, answer.text
"""


def make(commit: str) -> None:
    archive = subprocess.run(
        ["git", "archive", commit], cwd=PROJECT_ROOT, check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        database = Path(folder) / "previous.db"
        environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("SERVEBOOK_") and key != "DATABASE_URL"
        }
        subprocess.run(
            [sys.executable, "-c", MAKE_WITH_OLD_CODE, f"sqlite:///{database}"],
            cwd=folder,
            env={**environment, "PYTHONPATH": folder},
            check=True,
        )
        DUMP.write_text(dump(database, commit))


def dump(database: Path, commit: str) -> str:
    """Every table's rows as SQLite stores them, one row a line (a readable diff)."""
    connection = sqlite3.connect(database)
    names = [
        row[0]
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    (revision,) = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    lines = [
        "{",
        f'"made_by": {json.dumps(commit)},',
        f'"revision": {json.dumps(revision)},',
        '"tables": {',
    ]
    tables = []
    for name in sorted(set(names) - {"alembic_version"}):
        cursor = connection.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
        columns = [c[0] for c in cursor.description]
        rows = ",\n".join(json.dumps(list(row), ensure_ascii=False) for row in cursor)
        tables.append(f'"{name}": {{"columns": {json.dumps(columns)}, "rows": [\n{rows}\n]}}')
    lines.append(",\n".join(tables))
    lines.append("}}")
    connection.close()
    return "\n".join(lines) + "\n"


def read() -> dict[str, Any]:
    return json.loads(DUMP.read_text())


def stored_value(column: Any, value: Any) -> Any:
    """A dumped SQLite value as the column takes it on either database."""
    if value is None:
        return None
    if isinstance(column.type, DateTime):
        return datetime.fromisoformat(value)
    if isinstance(column.type, JSON):
        return json.loads(value) if isinstance(value, str) else value
    if isinstance(column.type, Boolean):
        return bool(value)
    return value


def load(connection: Connection, tables: dict[str, Any]) -> None:
    """Put the dump in place of the rows of a database migrated to its revision (tables read
    from the database itself, parents first); on PostgreSQL each id sequence then continues after
    the ids inserted."""
    schema = MetaData()
    schema.reflect(connection)
    for table in reversed(schema.sorted_tables):  # rows the migrations wrote (catalog_state)
        if table.name in tables:
            connection.execute(delete(table))
    for table in schema.sorted_tables:
        if table.name not in tables:
            continue
        dumped = tables[table.name]
        rows = [
            {
                column: stored_value(table.c[column], value)
                for column, value in zip(dumped["columns"], row, strict=True)
            }
            for row in dumped["rows"]
        ]
        if rows:
            connection.execute(insert(table), rows)
        if connection.dialect.name == "postgresql" and "id" in table.c and rows:
            top = connection.scalar(select(table.c.id).order_by(table.c.id.desc()).limit(1))
            sequence = connection.scalar(
                text("SELECT pg_get_serial_sequence(:table, 'id')"), {"table": table.name}
            )
            if sequence:
                connection.execute(
                    text("SELECT setval(:sequence, :top)"), {"sequence": sequence, "top": top}
                )


if __name__ == "__main__":
    make(sys.argv[1])
