"""The unattended sentinel (`servebook worker --sentinel`): watches the version the server
it fronts reports, and when it differs from a known-good record's, queues a re-check of
that record for this worker. Each (record, version) is queued once, ever: the pair is kept
in `sentinel_checks`, whose unique key also holds when two watchers race."""

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.bench.result import ServerVersion
from app.bench.server_version import read_server_version_sync
from app.config import Settings
from app.models import Hardware, SentinelCheck
from app.records.storage.plausibility import same_version
from app.records.storage.repository import RecordRepository
from app.sentinel.jobs import enqueue_recheck

log = logging.getLogger("servebook.sentinel")


@dataclass
class SentinelWatch:
    sessions: sessionmaker[Session]
    settings: Settings
    hardware: str  # catalog slug of the hardware this worker's server runs on
    base_url: str
    label: str  # the worker's own label: only it claims the re-checks it queues
    served_model: str | None = None

    def tick(self) -> list[int]:
        """Ask the server its version; queue a re-check for every known-good record of the
        hardware that ran another version of the same runtime. The ids of the jobs queued."""
        version = read_server_version_sync(self.base_url, allowed_hosts=self.hosts())
        if version is None:
            log.info("sentinel: %s reports no runtime version; nothing to compare", self.base_url)
            return []
        queued = []
        for record_id in self.due(version):
            job_id = self.queue(record_id, version)
            if job_id is not None:
                log.info(
                    "sentinel: %s %s is new for record %s: job %s queued",
                    version.runtime,
                    version.version,
                    record_id,
                    job_id,
                )
                queued.append(job_id)
        return queued

    def hosts(self) -> list[str]:
        """What this worker measures: its label's list and the server it fronts."""
        own = urlsplit(self.base_url).hostname or ""
        return [*self.settings.worker_hosts(self.label), own]

    def due(self, version: ServerVersion) -> list[int]:
        """Known-good records of the hardware on the reported runtime at another version,
        not yet re-checked at this one."""
        with self.sessions() as session:
            hardware = session.scalars(select(Hardware).where(Hardware.slug == self.hardware))
            found = hardware.one_or_none()
            if found is None:
                raise ValueError(f"no hardware {self.hardware!r} in the catalog")
            records = RecordRepository(session)
            goods = records.get_many(records.known_good_ids_on(found.id))
            checked = set(
                session.scalars(
                    select(SentinelCheck.record_id).where(
                        SentinelCheck.runtime_version == version.version
                    )
                )
            )
            return [
                record.id
                for record in goods.values()
                if record.runtime.slug == version.runtime
                and not same_version(record.runtime_version, version.version)
                and record.id not in checked
            ]

    def queue(self, record_id: int, version: ServerVersion) -> int | None:
        """The re-check job and its (record, version) mark, together; None when another
        watcher marked the pair first."""
        form = {"base_url": self.base_url, "worker_label": self.label}
        if self.served_model:
            form["served_model"] = self.served_model
        try:
            with self.sessions.begin() as session:
                job = enqueue_recheck(
                    session, record_id, form, self.settings, "sentinel", self.hosts()
                )
                session.add(
                    SentinelCheck(
                        record_id=record_id, runtime_version=version.version, job_id=job.id
                    )
                )
                session.flush()
                return job.id
        except IntegrityError:
            return None
