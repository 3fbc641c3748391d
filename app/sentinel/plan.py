"""The plan a sentinel re-runs: the baseline record's own, with the same lengths, seeds,
concurrency, needle and task, pointed at another server.

A record stored by the benchmark client keeps its plan (``provenance_detail.plan``); for an
older or hand-made record the plan is read back from its measured points: the lengths of
its single-request points, its ramp's levels, its needle lengths and its task.
"""

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.bench.plan import BenchPlan
from app.errors import NotFound
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.models import Record
from app.records.schemas import FieldError
from app.records.storage.configuration import Configuration
from app.records.storage.validation import schema_errors
from app.sentinel.points import Point, stored_points
from app.sentinel.spread import RUNS_KEPT, with_kept_runs
from app.tasks.service import get_task, task_spec


@dataclass(frozen=True)
class Baseline:
    """What the sentinel needs of the known-good record, read while the session is open."""

    id: int
    outcome: str
    points: list[Point]
    plan: dict[str, Any]
    target: dict[str, Any]
    runtime: str
    runtime_version: str


class NoPlan(ValueError):
    """The record holds nothing a run can repeat (no measured length)."""


def baseline_of(session: Session, record: Record) -> Baseline:
    points = stored_points(record)
    points = with_kept_runs(points, record.provenance_detail.get(RUNS_KEPT))
    plan = dict(record.provenance_detail.get("plan") or {}) or derived_plan(points)
    task = plan.pop("task", None)
    if isinstance(task, dict) and task.get("id") is not None:
        try:
            plan["task"] = task_spec(get_task(session, int(task["id"]))).model_dump(mode="json")
        except NotFound:
            pass  # the task was deleted: the rest of the plan still runs
    return Baseline(
        record.id,
        record.outcome,
        points,
        plan,
        target_of(record),
        record.runtime.slug,
        record.runtime_version,
    )


def derived_plan(points: list[Point]) -> dict[str, Any]:
    singles = sorted({p.context_length for p in points if p.kind == "single"})
    ramp = [p for p in points if p.kind == "ramp"]
    needles = sorted({p.context_length for p in points if p.kind == "needle"})
    lengths = sorted({*singles, *needles})
    if not lengths:
        raise NoPlan("the record measured no context length to run again")
    plan: dict[str, Any] = {"lengths": lengths, "add_long_length": False}
    repeats = [len(p.samples.get("ttft_ms", [])) for p in points if p.kind == "single"]
    plan["repeat"] = max([r for r in repeats if r] or [3])
    if ramp:
        plan["concurrency_levels"] = sorted({p.concurrency for p in ramp})
        plan["concurrency_length"] = ramp[0].context_length
    else:
        plan["concurrency_levels"] = [1]
    plan["needle"] = "auto" if needles else False
    if needles:
        plan["needle_min_length"] = needles[0] - 1
        depths = sorted({float(c["depth"]) for p in points for c in p.needle if "depth" in c})
        plan["needle_depths"] = depths or [0.1, 0.5, 0.9]
    task = next((p.task for p in points if p.task is not None), None)
    if task is not None and task.get("id") is not None:
        plan["task"] = {"id": task["id"]}
    plan["max_tokens"] = min(128, lengths[0] - 1)
    return plan


def target_of(record: Record) -> dict[str, Any]:
    """What the sentinel's record is about: the baseline's configuration as it ran."""
    return Configuration.of(record).as_json()


def sentinel_plan(
    baseline: Baseline,
    *,
    base_url: str,
    model: str,
    api_key: str | None,
    allowed_hosts: list[str],
    metrics_url: str | None = None,
    request_timeout_s: float | None = None,
) -> BenchPlan:
    """The baseline's plan against ``base_url``; raises PlanNotRepeatable (a ValueError)
    naming each field of the record's plan that no longer makes a valid run."""
    values = {
        **baseline.plan,
        "base_url": base_url,
        "model": model,
        "api_key": api_key,
        "allowed_hosts": allowed_hosts,
        "metrics_url": metrics_url,
        "add_long_length": False,  # the kept lengths already hold the long one
    }
    if request_timeout_s is not None:
        values["request_timeout_s"] = request_timeout_s
    try:
        return BenchPlan.model_validate(values)
    except ValidationError as error:
        raise PlanNotRepeatable(baseline.id, schema_errors(error)) from error


NOT_REPEATABLE = register(
    "sentinel.not_repeatable",
    _l("record %(record)s cannot be run again as measured: %(field)s: %(reason)s"),
)


class PlanNotRepeatable(ValueError):
    """The plan read back from a record does not make a valid run (a concurrency past the
    client's bound, a length too short for any output): one error per field, in words."""

    def __init__(self, record_id: int, problems: list[FieldError]) -> None:
        self.errors = [
            FieldError.of(
                problem.field,
                NOT_REPEATABLE(
                    record=str(record_id), field=problem.field, reason=reason_of(problem)
                ),
            )
            for problem in problems
        ]
        super().__init__("; ".join(error.message for error in self.errors))


def reason_of(problem: FieldError) -> Sentence | str:
    """A field error's reason as a sentence where it has a code (words for each reader)."""
    if problem.code is not None:
        return Sentence(problem.code, problem.params or {})
    return problem.message
