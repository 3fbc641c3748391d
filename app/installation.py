"""What `servebook info` reports and what `servebook serve` does to an empty database: the
installation's version, where its data lives, and how far its database has come."""

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from sqlalchemy import func, inspect, select
from sqlalchemy.engine import make_url

from app.config import Settings
from app.db import make_engine, session_scope, upgrade_database
from app.resources import FROM_CHECKOUT, RESOURCE_ROOT


def servebook_version() -> str:
    try:
        return version("servebook")
    except PackageNotFoundError:  # imported from a checkout that was never installed
        return "unknown"


def shown_url(database_url: str) -> str:
    """The database URL as it may be printed: the password replaced by ***."""
    return make_url(database_url).render_as_string(hide_password=True)


@dataclass(frozen=True)
class DatabaseState:
    revisions: frozenset[str]  # the migrations the database is at; empty before the first
    heads: frozenset[str]  # the newest the code ships
    catalog_revision: int | None  # None before the first migration
    models: int  # catalog models stored

    @property
    def empty(self) -> bool:
        return not self.revisions

    @property
    def current(self) -> bool:
        return self.revisions == self.heads


def database_state(settings: Settings) -> DatabaseState:
    from app.catalog.revision import current_revision
    from app.models import LlmModel
    from app.observability.queries import database_revisions, migration_heads

    engine = make_engine(settings)
    try:
        with engine.connect() as connection:
            revisions = frozenset(database_revisions(connection))
            has_catalog = revisions and inspect(connection).has_table(LlmModel.__tablename__)
    finally:
        engine.dispose()
    catalog_revision, models = None, 0
    if has_catalog:
        with session_scope(settings) as session:
            catalog_revision = current_revision(session)
            models = session.scalar(select(func.count()).select_from(LlmModel)) or 0
    return DatabaseState(revisions, migration_heads(), catalog_revision, models)


def seed_from(settings: Settings, seed_dir: Path | None = None) -> tuple[str, list[str]]:
    """Load the seed files into the database: the catalog report's summary and the tasks
    created. Raises SeedError or TaskFileError for a file that cannot be loaded, and
    SeedError for a seed that would leave records without their rows."""
    from app.catalog.seed import seed_catalog
    from app.catalog.seed_schema import load_catalog
    from app.tasks.seed import read_seed_tasks, seed_tasks

    directory = seed_dir or settings.seed_dir
    catalog = load_catalog(directory)
    tasks = read_seed_tasks(directory / "tasks")
    with session_scope(settings) as session:
        report = seed_catalog(session, catalog)
        created_tasks = seed_tasks(session, tasks)
    return report.summary(), created_tasks


def prepare_database(settings: Settings) -> list[str]:
    """Make an empty database ready to serve: migrate it, then seed its empty catalog. A
    database with data in it is left as it is (its upgrades are run on purpose, with
    `servebook db upgrade`). Returns what was done, one sentence each."""
    done: list[str] = []
    state = database_state(settings)
    if state.empty:
        upgrade_database(settings)
        done.append(f"empty database: migrated to {', '.join(sorted(state.heads))}")
        state = database_state(settings)
    if state.current and state.models == 0:
        summary, _tasks = seed_from(settings)
        done.append(f"empty catalog: seeded from {settings.seed_dir} ({summary})")
    return done


def installation_lines(settings: Settings) -> list[str]:
    """`servebook info`: what is installed, where its data lives, how far its database is."""
    lines = [
        f"servebook {servebook_version()}",
        f"resources     {RESOURCE_ROOT} ({'checkout' if FROM_CHECKOUT else 'installed'})",
        f"data folder   {settings.data_dir}",
        f"database      {shown_url(settings.database_url)}",
    ]
    try:
        state = database_state(settings)
    except Exception as error:  # a server that does not answer is part of the report
        lines.append(f"migration     unknown: the database did not answer ({error})")
        return lines
    heads = ", ".join(sorted(state.heads))
    at = ", ".join(sorted(state.revisions)) or "none (empty database)"
    standing = "current" if state.current else "run servebook db upgrade"
    lines.append(f"migration     {at} (code head {heads}: {standing})")
    revision = "none" if state.catalog_revision is None else str(state.catalog_revision)
    lines.append(f"catalog       revision {revision}, {state.models} models")
    return lines
