"""Schema only through Alembic: upgrade from empty, no drift, and every step reversible,
on SQLite and on PostgreSQL alike."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, select, text
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import Base, alembic_config, make_engine
from app.models import LlmModel
from tests.conftest import database_settings, migrate_and_seed

# The revision before the catalog's prose got its translations column.
PROSE_PARENT = "7c2e4a6b8d10"


@pytest.fixture(params=["sqlite", "postgresql"])
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    """Settings for a database with no tables yet."""
    if request.param == "sqlite":
        yield database_settings(f"sqlite:///{tmp_path / 'db.sqlite'}")
        return
    server = request.getfixturevalue("postgres_server")
    name = server.create_database()
    yield database_settings(server.url(name))
    server.drop_database(name)


def run(settings: Settings, action: str, revision: str) -> None:
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        getattr(command, action)(config, revision)
    engine.dispose()


def table_names(settings: Settings) -> set[str]:
    engine = make_engine(settings)
    names = set(inspect(engine).get_table_names())
    engine.dispose()
    return names - {"alembic_version"}


def test_upgrade_from_empty_creates_every_table(empty: Settings) -> None:
    run(empty, "upgrade", "head")
    assert table_names(empty) == set(Base.metadata.tables)


def test_no_drift_between_models_and_migrations(empty: Settings) -> None:
    run(empty, "upgrade", "head")
    engine = make_engine(empty)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_downgrade_to_base_and_back(empty: Settings) -> None:
    run(empty, "upgrade", "head")
    run(empty, "downgrade", "base")
    assert table_names(empty) == set()
    run(empty, "upgrade", "head")
    assert table_names(empty) == set(Base.metadata.tables)


def test_each_revision_steps_down_and_up(empty: Settings) -> None:
    revisions = [
        r.revision for r in ScriptDirectory.from_config(alembic_config(empty)).walk_revisions()
    ]
    run(empty, "upgrade", "head")
    for _ in revisions:
        run(empty, "downgrade", "-1")
        run(empty, "upgrade", "+1")
        run(empty, "downgrade", "-1")
    assert table_names(empty) == set()


def catalog_prose(settings: Settings) -> dict[str, tuple]:
    """Each model's English texts and each profile's steps, read with plain SQL (the ORM
    classes describe the newest schema only)."""
    engine = make_engine(settings)
    with engine.connect() as connection:
        models = connection.execute(text("SELECT slug, description, notes FROM models"))
        profiles = connection.execute(
            text("SELECT slug, summary, stop_conditions, measurement_order FROM profiles")
        )
        rows = {f"model {r[0]}": tuple(r[1:]) for r in models}
        rows |= {f"profile {r[0]}": tuple(r[1:]) for r in profiles}
    engine.dispose()
    return rows


def column_names(settings: Settings, table: str) -> set[str]:
    engine = make_engine(settings)
    names = {column["name"] for column in inspect(engine).get_columns(table)}
    engine.dispose()
    return names


def test_prose_translations_step_down_and_up_keeping_the_catalog(empty: Settings) -> None:
    """The translations column comes and goes; the English texts stay through both steps,
    and a seed after the upgrade writes the translations back."""
    migrate_and_seed(empty)
    seeded = catalog_prose(empty)
    assert seeded and all(values[0] for values in seeded.values())  # descriptions, summaries
    run(empty, "downgrade", PROSE_PARENT)
    assert "translations" not in column_names(empty, "models")
    assert catalog_prose(empty) == seeded
    run(empty, "upgrade", "head")
    assert catalog_prose(empty) == seeded
    engine = make_engine(empty)
    with Session(engine) as session:
        assert all(m.translations == {} for m in session.scalars(select(LlmModel)))
        migrate_and_seed(empty)
        session.expire_all()
        assert all(m.translations["description"]["ja"] for m in session.scalars(select(LlmModel)))
    engine.dispose()
    assert catalog_prose(empty) == seeded


def test_record_estimates_step_down_and_up(empty: Settings) -> None:
    """The table of kept estimates comes and goes alone; the records stay."""
    run(empty, "upgrade", "8c4d2f6a9e13")
    before = table_names(empty)
    assert "record_estimates" not in before
    run(empty, "upgrade", "3e7a9c1d5b20")
    assert table_names(empty) == before | {"record_estimates"}
    kept = {"estimator_version", "catalog_revision", "class_key", "decode_low", "decode_high"}
    assert kept | {"decode_point", "measured_decode", "flagged"} <= column_names(
        empty, "record_estimates"
    )
    run(empty, "downgrade", "8c4d2f6a9e13")
    assert table_names(empty) == before


def test_jobs_queued_before_kinds_keep_their_kind(empty: Settings) -> None:
    """A calibration and a sentinel re-check queued before jobs named their kind are read
    from their plan and target; every other job is a benchmark."""
    run(empty, "upgrade", "3f7a1c9e5b20")
    engine = make_engine(empty)
    queued = (
        ({"calibrate": {"base_url": "http://127.0.0.1:1/v1"}}, {"kind": "calibrate"}),
        ({"base_url": "http://127.0.0.1:1/v1"}, {"sentinel_baseline": 7}),
        ({"base_url": "http://127.0.0.1:1/v1"}, {"model": "m"}),
    )
    with engine.begin() as connection:
        for plan, target in queued:
            connection.execute(
                text(
                    "INSERT INTO bench_jobs (status, plan, target, needs_api_key, progress, "
                    "attempts, max_attempts, error, submitted_by, created_at) "
                    "VALUES ('queued', :plan, :target, false, '{}', 0, 2, '', 'local', "
                    "CURRENT_TIMESTAMP)"
                ),
                {"plan": json.dumps(plan), "target": json.dumps(target)},
            )
    run(empty, "upgrade", "head")
    with engine.connect() as connection:
        kinds = connection.execute(text("SELECT kind FROM bench_jobs ORDER BY id")).scalars()
        assert list(kinds) == ["calibration", "sentinel", "benchmark"]
    engine.dispose()
