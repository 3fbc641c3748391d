"""Schema only through Alembic: upgrade from empty, no drift, and every step reversible,
on SQLite and on PostgreSQL alike."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.config import Settings
from app.db import Base, alembic_config, make_engine
from tests.conftest import database_settings


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
