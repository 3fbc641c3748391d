"""Every record that ran a task, across models and hardware, and the comparison of two.

One place computes each figure the task page and `GET /api/tasks/{id}/results` show: the
pass rate and its 95 % Wilson band, the speed measured on the task's prompts, the time the
task ran, the cost per solved task at a price per GPU-hour, and for two records Fisher's
exact test with the prompts each would need to tell the two rates apart.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, joinedload

from app.errors import NotFound
from app.estimate.costs import cost_per_solved_task
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register
from app.models import Measurement, Record, Task
from app.records.comparison.statistics import (
    ALPHA,
    CONFIDENCE,
    POWER,
    fisher_exact,
    prompts_per_arm,
    wilson_interval,
)
from app.records.schemas import FieldError
from app.records.storage.service import NO_RECORD
from app.records.storage.validation import RecordInvalid

BAND_METHOD = "wilson"
TEST_METHOD = "fisher_exact_two_sided"
SAMPLE_SIZE_METHOD = "normal_approximation_two_proportions"
# Without the time a task ran, its answers came one after another: the median request's
# time, once per answer, stands for it.
MEASURED = "measured"
FROM_MEDIAN = "estimated: median request time x answers"

COMPARE_FORMAT = register(
    "task.compare.format", _l("give two record ids separated by a comma, e.g. 12,15")
)
COMPARE_SAME = register("task.compare.same", _l("give two different records"))
COMPARE_NOT_RUN = register(
    "task.compare.not_run", _l("record %(record)s did not run task %(task)s")
)
SIGNIFICANT = register(
    "task.compare.significant",
    _l(
        "%(a)s passed %(a_passed)s/%(a_total)s, %(b)s %(b_passed)s/%(b_total)s: the "
        "difference is significant at 95%% (Fisher's exact test, p %(p)s)."
    ),
)
NOT_SIGNIFICANT = register(
    "task.compare.not_significant",
    _l(
        "%(a)s passed %(a_passed)s/%(a_total)s, %(b)s %(b_passed)s/%(b_total)s: the "
        "difference is not significant at %(prompts)s prompts (Fisher's exact test, "
        "p %(p)s); run %(needed)s to tell %(rate_a)s%% from %(rate_b)s%%."
    ),
)
SAME_RATE = register(
    "task.compare.same_rate",
    _l(
        "%(a)s passed %(a_passed)s/%(a_total)s, %(b)s %(b_passed)s/%(b_total)s: the same "
        "pass rate, which no number of prompts tells apart."
    ),
)
COSTS = register(
    "task.compare.costs",
    _l(
        "At %(price)s per GPU-hour each solved task costs %(a_cost)s with %(a)s and "
        "%(b_cost)s with %(b)s."
    ),
)
NOTHING_SOLVED = register("task.cost.nothing_solved", _l("nothing solved"))


class CompareRefused(RecordInvalid):
    """422 naming `compare`; a page says why in the reader's language."""

    def __init__(self, said: Sentence) -> None:
        super().__init__([FieldError.of("compare", said)])
        self.said = said


@dataclass(frozen=True)
class TaskResult:
    """One record's run of the task."""

    record: Record
    score: dict[str, Any]  # the record's details.task
    point: Measurement

    @property
    def passed(self) -> int:
        return int(self.score.get("passed") or 0)

    @property
    def total(self) -> int:
        return int(self.score.get("total") or 0)

    def duration(self) -> tuple[float | None, str | None]:
        """Seconds the task ran, and on what basis."""
        kept = self.score.get("duration_s")
        if isinstance(kept, int | float) and kept >= 0:
            return float(kept), MEASURED
        if self.point.e2e_latency_ms is not None and self.total:
            return round(self.point.e2e_latency_ms * self.total / 1000, 3), FROM_MEDIAN
        return None, None


def ran_task(session: Session, task: Task) -> list[TaskResult]:
    """Every record whose measurements keep this task's score, newest first. A record
    kept without the task's id (a task read from a file) counts by name and version."""
    task_json = Measurement.details["task"]
    statement = (
        select(Measurement, Record)
        .join(Record, Record.id == Measurement.record_id)
        .where(
            or_(
                task_json["id"].as_integer() == task.id,
                and_(
                    task_json["id"].as_integer().is_(None),
                    task_json["name"].as_string() == task.name,
                    task_json["version"].as_integer() == task.version,
                ),
            )
        )
        .options(
            joinedload(Record.model),
            joinedload(Record.hardware),
            joinedload(Record.runtime),
        )
        .order_by(Record.created_at.desc(), Record.id.desc(), Measurement.id)
    )
    found: dict[int, TaskResult] = {}
    for point, record in session.execute(statement).unique():
        score = point.details.get("task")
        if record.id not in found and isinstance(score, dict) and score.get("total"):
            found[record.id] = TaskResult(record, score, point)
    return list(found.values())


def result_out(result: TaskResult, price: float | None) -> dict[str, Any]:
    record = result.record
    band = wilson_interval(result.passed, result.total)
    seconds, basis = result.duration()
    cost = None
    if price is not None and seconds is not None:
        cost = cost_per_solved_task(price, record.gpu_count, seconds, result.passed)
    created = record.created_at.replace(tzinfo=record.created_at.tzinfo or UTC)
    return {
        "record_id": record.id,
        "review_state": record.review_state,
        "outcome": record.outcome,
        "model": {"slug": record.model.slug, "name": record.model.name},
        "hardware": {"slug": record.hardware.slug, "name": record.hardware.name},
        "gpu_count": record.gpu_count,
        "runtime": {
            "slug": record.runtime.slug,
            "name": record.runtime.name,
            "version": record.runtime_version,
        },
        "passed": result.passed,
        "total": result.total,
        "pass_rate": round(result.passed / result.total, 4),
        "band": {
            "low": round(band.low, 4) if band else None,
            "high": round(band.high, 4) if band else None,
            "confidence": CONFIDENCE,
            "method": BAND_METHOD,
        },
        "decode_tokens_per_s": result.point.decode_tokens_per_s,
        "ttft_ms": result.point.ttft_ms,
        "duration_s": seconds,
        "duration_basis": basis,
        "date": created.isoformat(),
        "cost_per_solved_task": cost,
    }


def parse_compare(raw: Sequence[str] | None) -> tuple[int, int] | None:
    """`A,B` (or the parameter given twice) as two record ids; 422 naming `compare`."""
    if not raw:
        return None
    parts = [part.strip() for item in raw for part in item.split(",") if part.strip()]
    if not parts:
        return None
    if len(parts) != 2 or not all(part.isascii() and part.isdigit() for part in parts):
        raise CompareRefused(COMPARE_FORMAT())
    first, second = int(parts[0]), int(parts[1])
    if first == second:
        raise CompareRefused(COMPARE_SAME())
    return first, second


def pick(session: Session, task: Task, results: list[TaskResult], record_id: int) -> TaskResult:
    """The result of a record asked for: 404 when no such record, 422 when it did not run
    the task."""
    found = next((r for r in results if r.record.id == record_id), None)
    if found is not None:
        return found
    if session.get(Record, record_id) is None:
        raise NotFound(NO_RECORD(record=str(record_id)))
    raise CompareRefused(COMPARE_NOT_RUN(record=str(record_id), task=str(task.id)))


def labels(a: TaskResult, b: TaskResult) -> tuple[str, str]:
    """What the sentence calls each record: its model, then the hardware, then the id,
    as far as it takes to tell them apart."""
    for label in (
        lambda r: r.record.model.name,
        lambda r: f"{r.record.model.name} ({r.record.hardware.name})",
        lambda r: f"{r.record.model.name} ({r.record.hardware.name}, #{r.record.id})",
    ):
        left, right = label(a), label(b)
        if left != right:
            return left, right
    return f"#{a.record.id}", f"#{b.record.id}"


def percent(rate: float) -> int:
    return round(100 * rate)


def comparison(a: TaskResult, b: TaskResult, price: float | None) -> dict[str, Any]:
    rate_a, rate_b = a.passed / a.total, b.passed / b.total
    p_value = fisher_exact(a.passed, a.total, b.passed, b.total)
    significant = p_value < ALPHA
    needed = prompts_per_arm(rate_a, rate_b)
    name_a, name_b = labels(a, b)
    counts = {
        "a": name_a,
        "b": name_b,
        "a_passed": a.passed,
        "a_total": a.total,
        "b_passed": b.passed,
        "b_total": b.total,
    }
    shown_p = "< 0.001" if p_value < 0.001 else f"= {p_value:.2g}"
    verdict: Sentence
    if significant:
        verdict = SIGNIFICANT(**counts, p=shown_p)
    elif needed is None:
        verdict = SAME_RATE(**counts)
    else:
        prompts = a.total if a.total == b.total else [a.total, b.total]
        verdict = NOT_SIGNIFICANT(
            **counts,
            p=shown_p,
            prompts=prompts,
            needed=needed,
            rate_a=percent(rate_a),
            rate_b=percent(rate_b),
        )
    out_a, out_b = result_out(a, price), result_out(b, price)
    said = [verdict]
    cost_a, cost_b = out_a["cost_per_solved_task"], out_b["cost_per_solved_task"]
    if price is not None and (cost_a is not None or cost_b is not None):
        nothing = NOTHING_SOLVED()
        said.append(
            COSTS(
                price=price,
                a=name_a,
                b=name_b,
                a_cost=nothing if cost_a is None else f"{cost_a:.4g}",
                b_cost=nothing if cost_b is None else f"{cost_b:.4g}",
            )
        )
    return {
        "a": out_a["record_id"],
        "b": out_b["record_id"],
        "test": TEST_METHOD,
        "p_value": p_value,
        "alpha": ALPHA,
        "significant": significant,
        "prompts_needed": {
            "per_arm": needed,
            "alpha": ALPHA,
            "power": POWER,
            "method": SAMPLE_SIZE_METHOD,
            "rates": [round(rate_a, 4), round(rate_b, 4)],
        },
        "cost_per_solved_task": {"a": cost_a, "b": cost_b},
        "text": " ".join(english(sentence) for sentence in said),
        "messages": [sentence.as_json() for sentence in said],
        "said": said,
    }


def task_results(
    session: Session,
    task: Task,
    price: float | None = None,
    compare: tuple[int, int] | None = None,
    higher_first: bool = False,
) -> dict[str, Any]:
    """The rows and, for two records, their comparison: in the order asked, or with
    `higher_first` the higher pass rate first (a page's picks come in the table's order).
    `said` (the comparison's sentences) is for the page; JSON drops it."""
    results = ran_task(session, task)
    out: dict[str, Any] = {
        "task": {"id": task.id, "name": task.name, "version": task.version},
        "price_per_gpu_hour": price,
        "results": [result_out(result, price) for result in results],
        "comparison": None,
    }
    if compare is not None:
        a, b = (pick(session, task, results, record_id) for record_id in compare)
        if higher_first and b.passed * a.total > a.passed * b.total:
            a, b = b, a
        out["comparison"] = comparison(a, b, price)
    return out


def as_json(results: dict[str, Any]) -> dict[str, Any]:
    comparison = results["comparison"]
    if comparison is None:
        return results
    return {**results, "comparison": {k: v for k, v in comparison.items() if k != "said"}}
