"""One sentinel run, shared by `servebook sentinel`, the re-check job and the unattended
worker: the baseline's plan measured again, compared, and stored as a pending record."""

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.bench.result import BenchResult
from app.errors import NotFound
from app.jobs.to_record import kept_plan, record_from_result
from app.records.storage.repository import RecordRepository
from app.records.storage.service import NO_RECORD, submit_record
from app.sentinel.compare import compare_runs
from app.sentinel.plan import Baseline, baseline_of
from app.sentinel.points import raw_points
from app.sentinel.report import SentinelReport

TOOL = "servebook sentinel"


def load_baseline(session: Session, record_id: int) -> Baseline:
    record = RecordRepository(session).get(record_id)
    if record is None:
        raise NotFound(NO_RECORD(record=str(record_id)))
    return baseline_of(session, record)


@dataclass(frozen=True)
class SentinelOutcome:
    raw: dict[str, Any]  # the record to store, RecordIn-shaped
    report: SentinelReport

    @property
    def detail(self) -> dict[str, Any]:
        return self.report.as_json()


def judge(baseline: Baseline, result: BenchResult) -> SentinelOutcome:
    """The run as a record about the baseline's configuration, at the version the server
    reported (the baseline's own when it reported none, or another runtime: then the
    record is flagged for the mismatch), and its comparison with the baseline."""
    target = dict(baseline.target)
    reported = result.server_version
    if reported is not None and reported.runtime == baseline.runtime:
        target["runtime_version"] = reported.version
    raw = record_from_result(result, target)
    # The record's outcome: a run whose decode could not be timed is not a worse outcome;
    # its decode is left unjudged instead.
    report = compare_runs(
        baseline.id, baseline.outcome, baseline.points, raw["outcome"], raw_points(raw)
    )
    return SentinelOutcome(raw, report)


def store_sentinel(
    session: Session,
    outcome: SentinelOutcome,
    result: BenchResult,
    *,
    submitted_by: str,
    idempotency_key: str | None = None,
    extra_detail: dict[str, Any] | None = None,
) -> int:
    """The pending record with its verdict, in the caller's unit of work; its id."""
    submission = submit_record(
        session,
        outcome.raw,
        provenance="bench",
        submitted_by=submitted_by,
        idempotency_key=idempotency_key,
        provenance_detail={
            "tool": TOOL,
            "base_url": result.plan.base_url,
            "plan": kept_plan(result),
            "sentinel": outcome.detail,
            **(extra_detail or {}),
        },
    )
    return submission.record.id


def sentinel_json(result: BenchResult, outcome: SentinelOutcome, record_id: int | None) -> str:
    """What `--json` writes: the run's result, the sentinel's verdict and the record."""
    body = result.model_dump(mode="json")
    body["sentinel"] = outcome.detail
    body["record_id"] = record_id
    return json.dumps(body, indent=2)
