"""Health, readiness and Prometheus metrics, read the way an operator's tools read them."""

import pytest
from alembic import command
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import alembic_config, make_engine, session_scope
from app.main import create_app
from app.models import BenchJob, Record
from app.security.tokens import create_token
from tests.pg_server import PostgresServer
from tests.records.conftest import VALID, accept, post_record, seeded_slug

pytestmark = pytest.mark.postgresql


def submit(client: TestClient, session: Session) -> int:
    body = {**VALID, "hardware": seeded_slug(session, "8x-h200")}
    response = post_record(client, body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, keyed by name and sorted labels."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


@pytest.mark.parametrize("database_backend", ["postgresql"], indirect=True)
def test_unreachable_database_is_not_ready_but_the_process_is_healthy(
    client: TestClient, database_url: str, postgres_server: PostgresServer
) -> None:
    assert client.get("/readyz").status_code == 200
    postgres_server.drop_database(database_url.rpartition("/")[2])
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["reason"].startswith("database unreachable")
    assert database_url not in response.text  # no connection details leak
    assert client.get("/healthz").json() == {"status": "ok"}


def test_ready_at_the_newest_migration(client: TestClient) -> None:
    response = client.get("/readyz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_not_ready_when_the_schema_is_behind(client: TestClient, settings: Settings) -> None:
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        command.downgrade(config, "-1")
    engine.dispose()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert "servebook db upgrade" in response.json()["reason"]
    assert client.get("/healthz").status_code == 200


def test_requests_are_counted_by_route_template_and_status(
    client: TestClient, session: Session
) -> None:
    ids = [submit(client, session) for _ in range(2)]
    for record_id in ids:
        client.get(f"/api/records/{record_id}")
    client.get("/api/records/999999")
    client.get("/no/such/page")
    samples = scrape(client)
    route = "/api/records/{record_id}"
    count = samples[
        ("servebook_http_requests_total", (("method", "GET"), ("route", route), ("status", "200")))
    ]
    assert count == len(ids)
    assert (
        samples[
            (
                "servebook_http_requests_total",
                (("method", "GET"), ("route", route), ("status", "404")),
            )
        ]
        == 1
    )
    assert (
        samples[
            (
                "servebook_http_requests_total",
                (("method", "GET"), ("route", "<unmatched>"), ("status", "404")),
            )
        ]
        == 1
    )
    assert not any("999999" in str(labels) for _, labels in samples)
    observed = samples[
        ("servebook_http_request_duration_seconds_count", (("method", "GET"), ("route", route)))
    ]
    assert observed == len(ids) + 1


def test_jobs_and_records_by_state_match_the_database(client: TestClient, session: Session) -> None:
    session.add_all(
        [
            BenchJob(status="queued"),
            BenchJob(status="queued"),
            BenchJob(status="failed", error="gone"),
        ]
    )
    session.commit()
    accept(client, submit(client, session))
    submit(client, session)
    samples = scrape(client)
    jobs = {
        dict(labels)["state"]: value
        for (name, labels), value in samples.items()
        if name == "servebook_bench_jobs"
    }
    assert jobs == {"queued": 2, "running": 0, "succeeded": 0, "failed": 1}
    records = {
        dict(labels)["status"]: value
        for (name, labels), value in samples.items()
        if name == "servebook_records"
    }
    in_database = dict(
        session.execute(
            select(Record.review_state, func.count()).group_by(Record.review_state)
        ).all()
    )
    assert (records["accepted"], records["pending"]) == (1, 1)
    assert records == {state: in_database.get(state, 0) for state in records}
    assert sum(records.values()) == sum(in_database.values())
    assert samples[("servebook_database_up", ())] == 1


@pytest.fixture
def exposed_settings(settings: Settings) -> Settings:
    with session_scope(settings) as session:
        create_token(session, "maintainer-alice", "maintainer")
    return settings.model_copy(update={"host": "0.0.0.0"})


def test_metrics_are_off_beyond_loopback_by_default(exposed_settings: Settings) -> None:
    with TestClient(create_app(exposed_settings)) as client:
        response = client.get("/metrics")
        assert response.status_code == 404
        assert "SERVEBOOK_METRICS_BEYOND_LOOPBACK" in response.json()["detail"]
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200


def test_metrics_beyond_loopback_when_enabled(exposed_settings: Settings) -> None:
    enabled = exposed_settings.model_copy(update={"metrics_beyond_loopback": True})
    with TestClient(create_app(enabled)) as client:
        assert ("servebook_database_up", ()) in scrape(client)
