"""The unattended sentinel: a new version reported by the server queues one re-check per
known-good record of the hardware, run by the worker, and never again for that version;
a regressed version never replaces the known-good record."""

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.i18n.labels import stage_label
from app.i18n.messages import in_locale
from app.jobs.worker import Worker
from app.models import BenchJob, Record, SentinelCheck
from app.records.evidence.known_good import KnownGood, known_good_for
from app.records.review.steps import review_record
from app.records.storage.repository import RecordRepository
from app.sentinel.watch import SentinelWatch
from tests.sentinel.servers import BASELINE_TIMING, SLOW_DECODE_TIMING, timed_server
from tests.sentinel.test_sentinel_cli import baseline_record, invoke

LABEL = "gpu-box-1"
HARDWARE = "rtx-4090-24gb"


pytestmark = pytest.mark.usefixtures("cli_database")


def accept(settings: Settings, record_id: int) -> None:
    sessions = make_sessionmaker(make_engine(settings))
    with sessions.begin() as session:
        review = {"action": "accept", "reason": "checked on the box", "confirm_flags": True}
        review_record(session, record_id, review, "maintainer")


def accepted_baseline(settings: Settings) -> tuple[int, sessionmaker[Session], Worker]:
    """An accepted record of version 0.24.0 at the baseline speed, and a worker of LABEL."""
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as server:
        good = baseline_record(server.base_url, "0.24.0")
    accept(settings, good)
    sessions = make_sessionmaker(make_engine(settings))
    return good, sessions, Worker(sessions, poll_s=0.05, label=LABEL)


def known_good_now(session: Session, record_id: int) -> KnownGood | None:
    """The known-good configuration of the record's own, as the database holds it now."""
    session.expire_all()
    record = RecordRepository(session).get(record_id)
    assert record is not None
    return known_good_for(session, record)


def test_worker_rechecks_once_per_new_version(settings: Settings, session: Session) -> None:
    good, sessions, worker = accepted_baseline(settings)

    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as same:
        watch = SentinelWatch(sessions, settings, HARDWARE, same.base_url, LABEL)
        assert watch.tick() == []  # the known-good version itself: nothing new

    with timed_server(SLOW_DECODE_TIMING, {"version": "0.25.0"}) as upgraded:
        watch = SentinelWatch(sessions, settings, HARDWARE, upgraded.base_url, LABEL)
        first = watch.tick()
        assert len(first) == 1
        assert worker.run_once() is True
        # The first run found a regression: nothing is stored until a second run finds it.
        job = session.get(BenchJob, first[0])
        assert job is not None and job.status == "queued" and job.record_id is None
        assert [f[0] for f in job.target["sentinel_first"]["seen"]] == ["decode_tokens_per_s"]
        assert session.scalar(select(func.count()).select_from(Record)) == 1
        assert worker.run_once() is True
        assert watch.tick() == []  # the same version again: not re-run
        assert worker.run_once() is False

    session.expire_all()
    job = session.get(BenchJob, first[0])
    assert job is not None and job.status == "succeeded", job and job.error
    rechecked = session.get(Record, job.record_id)
    assert rechecked is not None
    assert rechecked.sentinel_verdict == "regressed"
    assert rechecked.provenance_detail["sentinel"]["runs"] == 2
    assert rechecked.runtime_version == "0.25.0"
    assert rechecked.provenance_detail["sentinel"]["baseline_record"] == good
    checks = session.scalars(select(SentinelCheck)).all()
    assert [(c.record_id, c.runtime_version) for c in checks] == [(good, "0.25.0")]

    # Accepted or not, a regressed version never becomes the known-good configuration.
    accept(settings, rechecked.id)
    session.expire_all()
    loaded = RecordRepository(session).get(rechecked.id)
    assert loaded is not None and loaded.review_state == "accepted"
    found = known_good_for(session, loaded)
    assert found is not None and found.record.id == good
    assert [bad.id for bad in found.regressions] == [rechecked.id]
    # Nor does another record of that version: the version is part of the key. A record of
    # a version no sentinel found regressed does.
    with timed_server(BASELINE_TIMING, {"version": "0.25.0"}) as again:
        same_version = baseline_record(again.base_url, "0.25.0")
    accept(settings, same_version)
    found = known_good_now(session, rechecked.id)
    assert found is not None and found.record.id == good
    with timed_server(BASELINE_TIMING, {"version": "0.24.1"}) as fixed:
        other_version = baseline_record(fixed.base_url, "0.24.1")
    accept(settings, other_version)
    found = known_good_now(session, rechecked.id)
    assert found is not None and found.record.id == other_version

    with timed_server(BASELINE_TIMING, {"version": "0.26.0"}) as newer:
        watch = SentinelWatch(sessions, settings, HARDWARE, newer.base_url, LABEL)
        assert len(watch.tick()) == 1  # another new version: checked again, once
        assert watch.tick() == []


def test_worker_command_runs_the_recheck_once(settings: Settings, session: Session) -> None:
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as server:
        good = baseline_record(server.base_url, "0.24.0")
    accept(settings, good)
    with timed_server(BASELINE_TIMING, {"version": "0.25.0"}) as upgraded:
        args = ["worker", "--sentinel", "--once", "--base-url", upgraded.base_url]
        args += ["--hardware", HARDWARE, "--label", LABEL]
        for _ in range(2):
            result = invoke(args)
            assert result.exit_code == 0, result.output
    verdicts = session.scalars(select(Record.sentinel_verdict).where(Record.id > good)).all()
    assert verdicts == ["no_regression"]
    missing = invoke(["worker", "--sentinel", "--base-url", "http://127.0.0.1:1/v1"])
    assert missing.exit_code == 2
    assert "--sentinel needs --base-url, --hardware and --label" in missing.output


def test_a_regression_the_second_run_does_not_find_is_not_one(
    settings: Settings, session: Session
) -> None:
    """The unattended worker confirms as `servebook sentinel` does: a re-check whose first
    run reads slow runs again, and a second run at the known-good speed stores
    no_regression, saying two runs were made."""
    good, sessions, worker = accepted_baseline(settings)
    with timed_server(SLOW_DECODE_TIMING, {"version": "0.25.0"}) as slow:
        [job_id] = SentinelWatch(sessions, settings, HARDWARE, slow.base_url, LABEL).tick()
        assert worker.run_once() is True
    with sessions.begin() as writing:
        job = writing.get(BenchJob, job_id)
        assert job is not None and job.status == "queued" and "sentinel_first" in job.target
        assert job.progress["step"] == "confirming"  # a stage the job page names
        with in_locale("ko"):
            assert stage_label("confirming") == "회귀를 확인하려고 다시 대기열에 넣음"
    # The same server, recovered: the job's second run measures it at the known-good speed.
    with timed_server(BASELINE_TIMING, {"version": "0.25.0"}) as recovered:
        with sessions.begin() as writing:
            job = writing.get(BenchJob, job_id)
            assert job is not None
            job.plan = {**job.plan, "base_url": recovered.base_url}
        assert worker.run_once() is True
    session.expire_all()
    job = session.get(BenchJob, job_id)
    assert job is not None and job.status == "succeeded", job and job.error
    rechecked = session.get(Record, job.record_id)
    assert rechecked is not None and rechecked.sentinel_verdict == "no_regression"
    assert rechecked.provenance_detail["sentinel"]["runs"] == 2
    # Nothing counts: the second run matches the known-good record.
    changes = rechecked.provenance_detail["sentinel"]["changes"]
    assert not [c for c in changes if c["significant"]]
