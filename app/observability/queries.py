"""The few reads observability needs: schema revision, and rows counted by state."""

from functools import lru_cache

from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import func, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import InstrumentedAttribute, Session

from app.db import migrations_config
from app.models import BenchJob, Record


@lru_cache(maxsize=1)
def migration_heads() -> frozenset[str]:
    """The newest revisions the code ships (read once: they change only with the code)."""
    return frozenset(ScriptDirectory.from_config(migrations_config()).get_heads())


def database_revisions(connection: Connection) -> set[str]:
    """The revisions the database says it is at (empty before the first upgrade)."""
    return set(MigrationContext.configure(connection).get_current_heads())


def _count_by(session: Session, column: InstrumentedAttribute[str]) -> dict[str, int]:
    statement = select(column, func.count()).group_by(column)
    return dict(session.execute(statement).all())


def jobs_by_state(session: Session) -> dict[str, int]:
    return _count_by(session, BenchJob.status)


def records_by_review_state(session: Session) -> dict[str, int]:
    return _count_by(session, Record.review_state)
