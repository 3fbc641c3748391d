"""The bodies remote benchmark workers and the dashboard exchange under /api/worker/."""

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.bench.result import BenchResult
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.validation_words import refusal
from app.jobs.schemas import WorkerLabel

LeaseToken = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
# Long enough to survive a slow network, short enough that a dead worker's job moves on.
LeaseSeconds = Annotated[float, Field(ge=1, le=3600, allow_inf_nan=False)]


MAX_STEPS = 1_000_000  # far more steps than any plan has
DONE_OVER_TOTAL = register(
    "worker.done_over_total", _l("done (%(done)s) is more than total (%(total)s)")
)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimIn(Strict):
    worker: str = Field(min_length=1, max_length=100, description="the worker's name, for people")
    label: WorkerLabel | None = Field(
        default=None, description="also take jobs pinned to this label"
    )
    lease_s: LeaseSeconds = 60.0


class ClaimOut(Strict):
    """One claimed job: what to run, and the lease token every later call must name."""

    job_id: int
    kind: str = Field(description="benchmark, calibration or sentinel: how the worker runs it")
    lease_token: LeaseToken
    attempt: int
    lease_s: float
    lease_expires_at: datetime
    plan: dict[str, Any]
    target: dict[str, Any]
    needs_api_key: bool


class ProgressIn(Strict):
    step: str = Field(min_length=1, max_length=100)
    # JSON Schema cannot compare two fields: `x-at-most` names the one `done` may not pass,
    # and passing it is a conflict between the fields (409, app.errors.FIELD_CONFLICTS).
    done: int = Field(
        ge=0,
        le=MAX_STEPS,
        description="steps done, at most `total` (409 where it is more)",
        json_schema_extra={"x-at-most": "total"},
    )
    total: int = Field(ge=1, le=MAX_STEPS)

    @model_validator(mode="after")
    def done_within_total(self) -> "ProgressIn":
        if self.done > self.total:
            raise refusal(DONE_OVER_TOTAL, done=self.done, total=self.total)
        return self


class RenewIn(Strict):
    lease_token: LeaseToken
    lease_s: LeaseSeconds = 60.0
    progress: ProgressIn | None = None


class RenewOut(Strict):
    job_id: int
    lease_expires_at: datetime


class ResultIn(Strict):
    lease_token: LeaseToken
    result: BenchResult


class ResultOut(Strict):
    job_id: int
    record_id: int | None = Field(
        description="null while a re-check that found a regression waits for its second run"
    )
    record_url: str | None
    created: bool = Field(description="False when this claim's result was already stored")
    confirming: bool = Field(
        default=False,
        description="a re-check found a regression: the job is queued for a second run, "
        "which stores the record, and this result is kept only as what the first run found",
    )


class FailIn(Strict):
    lease_token: LeaseToken
    error: str = Field(min_length=1, max_length=5000)


class FailOut(Strict):
    job_id: int
    status: str
