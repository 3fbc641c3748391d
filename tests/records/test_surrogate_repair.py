"""Records stored with a lone surrogate before the edge refused them are repaired by a
migration: each becomes U+FFFD and every page showing them answers again."""

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.config import Settings
from app.main import create_app
from app.records.storage.service import get_record
from tests.records.conftest import GLM, post_record
from tests.test_migrations import run

BEFORE_REPAIR = "9d4e6a1c2b77"


def store_legacy(session: Session, record_id: int) -> None:
    """What SQLite kept for such a submission: the JSON escape of the lone surrogate."""
    session.execute(
        text("UPDATE records SET applied_values = :value, environment = :env WHERE id = :id"),
        {
            "value": '{"context": "caf\\udc80", "k\\ud800": 1}',
            "env": '{"os": "x"}',
            "id": record_id,
        },
    )
    session.execute(
        text("UPDATE measurements SET details = :value WHERE record_id = :id"),
        {"value": '{"p99": ["ok \\ud83d\\ude00", "\\udfff"]}', "id": record_id},
    )
    session.commit()


@pytest.mark.parametrize("database_backend", ["sqlite"], indirect=True)
def test_migration_repairs_stored_lone_surrogates(
    settings: Settings, session: Session, valid: dict[str, Any], h200: str
) -> None:
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        record_id = post_record(client, valid).json()["id"]
        store_legacy(session, record_id)
        assert client.get(f"/records/{record_id}").status_code == 500  # what it did
    run(settings, "downgrade", BEFORE_REPAIR)
    run(settings, "upgrade", "head")
    session.expire_all()
    record = get_record(session, record_id)
    assert record.applied_values == {"context": "caf\ufffd", "k\ufffd": 1}
    # A valid pair (an emoji) is kept; only the lone one is replaced.
    assert record.measurements[0].details == {"p99": ["ok \U0001f600", "\ufffd"]}
    with TestClient(create_app(settings)) as client:
        for url in (
            f"/records/{record_id}",
            f"/api/records/{record_id}",
            "/api/records",
            "/api/records/export?format=csv",
            f"/models/{GLM}/hardware/{h200}/profiles/balanced",
        ):
            assert client.get(url).status_code == 200, url
