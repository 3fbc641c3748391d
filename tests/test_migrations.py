"""Schema only through Alembic: upgrade from empty, no drift, and every step reversible."""

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.db import Base, alembic_config, make_engine
from tests.conftest import sqlite_settings


def run(path: Path, action: str, revision: str) -> None:
    settings = sqlite_settings(path)
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        getattr(command, action)(config, revision)
    engine.dispose()


def table_names(path: Path) -> set[str]:
    engine = make_engine(sqlite_settings(path))
    names = set(inspect(engine).get_table_names())
    engine.dispose()
    return names - {"alembic_version"}


def test_upgrade_from_empty_creates_every_table(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    run(path, "upgrade", "head")
    assert table_names(path) == set(Base.metadata.tables)


def test_no_drift_between_models_and_migrations(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    run(path, "upgrade", "head")
    engine = make_engine(sqlite_settings(path))
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_downgrade_to_base_and_back(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    run(path, "upgrade", "head")
    run(path, "downgrade", "base")
    assert table_names(path) == set()
    run(path, "upgrade", "head")
    assert table_names(path) == set(Base.metadata.tables)


def test_each_revision_steps_down_and_up(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    settings = sqlite_settings(path)
    revisions = [
        r.revision for r in ScriptDirectory.from_config(alembic_config(settings)).walk_revisions()
    ]
    run(path, "upgrade", "head")
    for _ in revisions:
        run(path, "downgrade", "-1")
        run(path, "upgrade", "+1")
        run(path, "downgrade", "-1")
    assert table_names(path) == set()
