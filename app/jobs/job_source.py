"""Where a worker gets its jobs and sends its results: one small interface, two sources.

`DatabaseJobSource` reaches the dashboard's own database (the worker beside the web app,
or `servebook worker` given DATABASE_URL); `HttpJobSource` (app/jobs/remote.py)
reaches a dashboard over its worker API, for a GPU host that keeps its model server on
loopback. Both apply the same lease rules, from app/jobs/leases.py.
"""

from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy.orm import Session, sessionmaker

from app.jobs.leases import Claim, claim_job, fail_job, finish_job, renew_lease


class SourceRefused(Exception):
    """The source will not serve this worker (a bad token, a wrong address): retrying the
    same request cannot help, so the worker stops and says why."""


class JobSource(Protocol):
    name: str
    lease_s: float

    def claim(self) -> Claim | None:
        """The next job this worker may run, now held under a fresh lease; None if none."""
        ...

    def renew(self, claim: Claim, progress: dict[str, Any] | None = None) -> bool:
        """Extend the lease (noting progress); False once the job is no longer held."""
        ...

    def finish(self, claim: Claim, outcome: Any) -> None:
        """Store the outcome as the job's kind stores one; raises LeaseLost if the job was
        taken over."""
        ...

    def fail(self, claim: Claim, message: str) -> None:
        """Mark the job failed with the reason (nothing happens if it was taken over)."""
        ...


class DatabaseJobSource:
    """Jobs straight from the dashboard's database, one transaction per step."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        name: str,
        lease_s: float = 60.0,
        label: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.name = name
        self.lease_s = lease_s
        self.label = label

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.lease_s)

    def claim(self) -> Claim | None:
        with self.sessions.begin() as session:
            return claim_job(session, self.name, self.label, self.lease)

    def renew(self, claim: Claim, progress: dict[str, Any] | None = None) -> bool:
        with self.sessions.begin() as session:
            expires = renew_lease(session, claim.job_id, claim.lease_token, self.lease, progress)
        return expires is not None

    def finish(self, claim: Claim, outcome: Any) -> None:
        with self.sessions.begin() as session:
            finish_job(session, claim.job_id, claim.lease_token, outcome)

    def fail(self, claim: Claim, message: str) -> None:
        with self.sessions.begin() as session:
            fail_job(session, claim.job_id, claim.lease_token, message)
