"""Upgrades keep data: a database made by the previous release's migrations and seed, with
records and reviews in it, upgraded by this code's migrations and merged with this code's
seed, on SQLite and on PostgreSQL."""

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from alembic import command
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog.revision import current_definition
from app.catalog.seed import seed_catalog
from app.catalog.seed_schema import SeedError, load_catalog
from app.config import Settings
from app.db import alembic_config, make_engine, migrations_config, session_scope
from app.main import create_app
from app.models import Artifact, LlmModel, Measurement, Record, RecordEvent
from app.observability.queries import migration_heads
from app.resources import SEED_DIR
from tests.conftest import database_settings
from tests.release.previous_release import load, read

PREVIOUS = read()


@pytest.fixture(params=["sqlite", "postgresql"])
def previous(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    """A database as the previous release left it: its revision, its rows."""
    if request.param == "sqlite":
        settings = database_settings(f"sqlite:///{tmp_path / 'previous.db'}")
    else:
        server = request.getfixturevalue("postgres_server")
        name = server.create_database()
        settings = database_settings(server.url(name))
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        command.upgrade(config, PREVIOUS["revision"])
        load(connection, PREVIOUS["tables"])
    engine.dispose()
    yield settings
    if request.param == "postgresql":
        server.drop_database(name)


def upgrade(settings: Settings) -> None:
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    engine.dispose()


def evidence(session: Session) -> dict[str, Any]:
    """Everything a record is: its row, its points, its history, what its ids name. Read
    column by column, so the same reads run before the upgrade and after it."""
    return {
        "records": session.execute(
            select(
                Record.id,
                Record.review_state,
                Record.notes,
                Record.outcome,
                Record.idempotency_key,
                Record.applied_values,
                LlmModel.slug,
                Artifact.slug,
            )
            .join(LlmModel, LlmModel.id == Record.model_id)
            .join(Artifact, Artifact.id == Record.artifact_id)
            .order_by(Record.id)
        ).all(),
        "points": session.execute(
            select(Measurement.record_id, Measurement.decode_tokens_per_s).order_by(Measurement.id)
        ).all(),
        "events": session.execute(
            select(RecordEvent.record_id, RecordEvent.action, RecordEvent.reason).order_by(
                RecordEvent.id
            )
        ).all(),
    }


def test_the_previous_release_is_an_ancestor_of_this_code() -> None:
    """Its revision is still in the chain the migrations upgrade through."""
    scripts = ScriptDirectory.from_config(migrations_config())
    chain = {script.revision for script in scripts.walk_revisions()}
    assert PREVIOUS["revision"] in chain
    assert PREVIOUS["revision"] not in migration_heads()  # there is something to upgrade


def test_an_upgrade_keeps_every_record_and_review(previous: Settings) -> None:
    with session_scope(previous) as session:
        before = evidence(session)
    assert [row.review_state for row in before["records"]] == ["accepted", "rejected", "pending"]

    upgrade(previous)
    with session_scope(previous) as session:
        report = seed_catalog(session, load_catalog(SEED_DIR))
    with session_scope(previous) as session:
        assert evidence(session) == before
        # The catalog rows were updated by key: the prose got its translations since.
        glm = session.scalar(select(LlmModel).where(LlmModel.slug == "glm-5.3-flash"))
        assert glm.translations
    assert "models:glm-5.3-flash" in report.updated
    with session_scope(previous) as session:
        assert not seed_catalog(session, load_catalog(SEED_DIR)).changed

    with TestClient(create_app(previous)) as client:
        accepted = client.get(f"/api/records/{before['records'][0][0]}")
        assert accepted.status_code == 200
        assert accepted.json()["review_state"] == "accepted"
        assert client.get("/models/glm-5.3-flash").status_code == 200
        assert client.get("/readyz").status_code == 200


def moved_artifact_seed(tmp_path: Path, slug: str) -> Path:
    """The seed files with a new model, glm-5.3, that takes one of glm-5.3-flash's artifacts
    (its slug still starts with the new model's, as the seed schema asks)."""
    folder = tmp_path / "seed"
    shutil.copytree(SEED_DIR, folder)
    models_file = folder / "models.yaml"
    models = yaml.safe_load(models_file.read_text())
    flash = next(model for model in models["models"] if model["slug"] == "glm-5.3-flash")
    artifact = next(a for a in flash["artifacts"] if a["slug"] == slug)
    flash["artifacts"].remove(artifact)
    larger = {**flash, "slug": "glm-5.3", "name": "GLM-5.3", "artifacts": [artifact]}
    larger.pop("reported", None)
    models["models"].append(larger)
    models_file.write_text(yaml.safe_dump(models, allow_unicode=True, sort_keys=False))
    return folder


def test_a_seed_that_would_orphan_records_is_refused_and_loads_nothing(
    previous: Settings, tmp_path: Path
) -> None:
    upgrade(previous)
    with session_scope(previous) as session:
        seed_catalog(session, load_catalog(SEED_DIR))
    with session_scope(previous) as session:
        before = evidence(session), current_definition(session)
    moved = load_catalog(moved_artifact_seed(tmp_path, "glm-5.3-flash-fp8"))

    with pytest.raises(SeedError) as refused, session_scope(previous) as session:
        seed_catalog(session, moved)
    message = str(refused.value)
    assert message.startswith("seed_data/models.yaml: models (slug glm-5.3)")
    assert "artifacts (slug glm-5.3-flash-fp8)" in message
    assert "3 record(s) of glm-5.3-flash name it" in message
    assert "nothing was loaded" in message
    with session_scope(previous) as session:
        assert (evidence(session), current_definition(session)) == before
        fp8 = session.scalar(select(Artifact).where(Artifact.slug == "glm-5.3-flash-fp8"))
        assert session.get(LlmModel, fp8.model_id).slug == "glm-5.3-flash"


def test_an_artifact_no_record_names_may_move(previous: Settings, tmp_path: Path) -> None:
    upgrade(previous)
    moved = load_catalog(moved_artifact_seed(tmp_path, "glm-5.3-flash-bf16"))
    with session_scope(previous) as session:
        report = seed_catalog(session, moved)
    assert "artifacts:glm-5.3-flash-bf16" in report.updated
