"""Writes are limited per token: past the allowance a maintainer sets, a write gets 429
with Retry-After and stores nothing, while another token, reads, and the estimate go on."""

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import session_scope
from app.main import create_app
from app.models import Record
from app.security import create_token
from app.security.rate_limit import Buckets
from tests.records.conftest import post_record

PER_MINUTE = 3


def count(session: Session) -> int:
    session.rollback()
    return session.scalar(select(func.count()).select_from(Record)) or 0


def test_a_token_past_its_writes_a_minute_gets_429_with_retry_after(
    settings: Settings, session: Session, valid: dict
) -> None:
    with session_scope(settings) as scope:
        first = create_token(scope, "first", "submitter")
        second = create_token(scope, "second", "submitter")
    limited = settings.model_copy(update={"write_rate_per_minute": PER_MINUTE})
    with TestClient(create_app(limited)) as client:
        one = {"Authorization": f"Bearer {first}"}
        answers = [post_record(client, {**valid, "notes": f"n{i}"}, **one) for i in range(4)]
        assert [a.status_code for a in answers] == [201, 201, 201, 429]
        refused = answers[-1]
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.json()["code"] == "request.too_many_writes"
        assert refused.json()["params"]["most"] == PER_MINUTE
        assert count(session) == 3
        other = post_record(client, valid, Authorization=f"Bearer {second}")
        assert other.status_code == 201, other.text
        assert client.get("/api/records", headers=one).status_code == 200
        estimate = {"model": {"params_b": 8, "quant": "bf16"}, "gpu": "H100", "gpu_count": 1}
        assert client.post("/api/estimate", json=estimate, headers=one).status_code != 429


def test_the_allowance_refills_at_its_rate() -> None:
    buckets = Buckets(60)  # one a second
    assert all(buckets.take("t", now=0.0) == 0 for _ in range(60))
    assert buckets.take("t", now=0.0) == 1.0
    assert buckets.take("t", now=1.0) == 0  # one second later, one more
    assert buckets.take("u", now=1.0) == 0  # another client has its own
