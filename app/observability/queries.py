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


def sentinel_runs_by_verdict(session: Session) -> dict[str, int]:
    """Sentinel runs that still speak for their version (not rejected or retracted)."""
    statement = (
        select(Record.sentinel_verdict, func.count())
        .where(
            Record.sentinel_verdict.is_not(None),
            Record.review_state.in_(("pending", "accepted")),
        )
        .group_by(Record.sentinel_verdict)
    )
    return {str(verdict): count for verdict, count in session.execute(statement).all()}
