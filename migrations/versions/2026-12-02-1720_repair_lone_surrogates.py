"""repair stored text that is not valid Unicode: each lone surrogate becomes U+FFFD

Revision ID: 5b1e9c3d7a42
Revises: 9d4e6a1c2b77
Create Date: 2026-12-02 17:20:00

Before the edge refused them, a JSON escape such as "\\udc80" could be stored inside the
free-form JSON columns (applied values, environment, measurement details and samples,
benchmark results, task checks). Python reads it back as a lone UTF-16 surrogate that no
UTF-8 encoder can write, so every list and page showing that record failed. The repair
replaces each one, in values and in keys, with U+FFFD, as a decoder does with bytes it
cannot read; everything else in the row stays as it was. Text columns never held one: the
database drivers refuse to encode it. The repair cannot be undone (nothing to restore), so
the downgrade leaves the rows as they are.
"""

import json
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "5b1e9c3d7a42"
down_revision: str | None = "9d4e6a1c2b77"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Every JSON column whose content came from a submission, by table.
JSON_COLUMNS = {
    "records": ("applied_values", "environment", "provenance_detail", "flags"),
    "measurements": ("details",),
    "bench_jobs": ("plan", "target", "progress", "result"),
    "task_prompts": ("check",),
}
SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
BATCH = 500


def repaired(value: Any) -> Any:
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {repaired(key): repaired(child) for key, child in value.items()}
    if isinstance(value, list):
        return [repaired(child) for child in value]
    return value


def upgrade() -> None:
    connection = op.get_bind()
    for table_name, columns in JSON_COLUMNS.items():
        for column_name in columns:
            repair_column(connection, table_name, column_name)


def repair_column(connection: sa.Connection, table_name: str, column_name: str) -> None:
    as_text = sa.table(table_name, sa.column("id", sa.Integer), sa.column(column_name, sa.Text))
    as_json = sa.table(table_name, sa.column("id", sa.Integer), sa.column(column_name, sa.JSON))
    # As text on every database (psycopg would otherwise decode a json column itself). Only
    # rows whose JSON text escapes a character could hold one (`\u`, matched literally).
    stored_text = sa.cast(as_text.c[column_name], sa.Text)
    candidates = sa.select(as_text.c.id, stored_text).where(stored_text.like("%\\u%", escape="!"))
    last_id = 0
    while True:
        rows = connection.execute(
            candidates.where(as_text.c.id > last_id).order_by(as_text.c.id).limit(BATCH)
        ).all()
        if not rows:
            return
        for row_id, stored in rows:
            if stored is not None and SURROGATE_ESCAPE.search(stored):
                loaded = json.loads(stored)
                fixed = repaired(loaded)
                if fixed != loaded:
                    connection.execute(
                        as_json.update().where(as_json.c.id == row_id).values({column_name: fixed})
                    )
        last_id = rows[-1][0]


def downgrade() -> None:
    pass
