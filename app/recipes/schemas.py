"""JSON shapes of the fit table (the HTML templates read the same resolved recipes)."""

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from app.catalog.schemas import ModelOut
from app.estimate import Verdict

Status = Literal["verified", "verification_pending"]


class RangeOut(BaseModel):
    low: float
    high: float
    basis: Literal["measured", "reported", "calibrated", "estimated"]
    note: str  # English; note_messages carries the same as codes
    note_messages: list["MessageOut"]
    source: str | None = None
    records: int = 0
    contradicted: "MessageOut | None" = Field(
        default=None,
        description="a reported figure that the roofline or a measurement contradicts: why",
    )


class MemoryOut(BaseModel):
    required_gb_per_gpu: float | None
    usable_gb_per_gpu: float
    headroom_gb_per_gpu: float | None
    basis: Literal["measured", "estimated"] | None


class BandOut(BaseModel):
    low: float
    high: float
    basis: Literal["measured", "reported", "calibrated", "estimated"]


class LoadLineOut(BaseModel):
    """A profile's figures at its own concurrency: each request's decode, the total output
    and the first token (estimated, except one request's decode where it was measured)."""

    concurrency: int
    decode_tokens_per_s: BandOut  # per request
    throughput_tokens_per_s: BandOut  # all requests together
    ttft_ms: BandOut


class ProfileStatusOut(BaseModel):
    slug: str
    name: str
    status: Status
    url: str
    token_generation: RangeOut | None  # one request
    at_profile_concurrency: LoadLineOut | None = None


class MessageOut(BaseModel):
    """A reason's clause or a warning: its code and figures, and its English wording."""

    code: str
    params: dict[str, Any]
    text: str


class RowLoadOut(BaseModel):
    """With the fit table's load filter: whether this configuration, as one replica, carries
    every user at the speed asked; if not, what stops it and how many replicas would."""

    users: int
    carries: bool
    limited_by: Literal["memory", "decode", "ttft"] | None
    replicas: int | None  # replicas that carry the load; None where no number would
    limited_at_any_count: Literal["memory", "decode", "ttft"] | None
    concurrency_per_replica: int
    decode_tokens_per_s: BandOut | None  # each request's, at those replicas


class FitRowOut(BaseModel):
    hardware: str
    hardware_name: str
    platform: str
    usable_memory_gb: float
    gpu_count: int
    profile: str  # the profile the row's figures come from (balanced)
    verdict: Verdict
    verdict_label: str
    reason: str  # English; reason_messages carries the same as codes
    reason_messages: list[MessageOut]
    recommended_runtime: str | None
    recommended_artifact: str | None
    verified_pair: bool
    alternative_runtimes: list[str]
    profile_status: Status
    profiles: list[ProfileStatusOut]
    start_context: int
    max_context: int | None
    token_generation: RangeOut | None
    at_profile_concurrency: LoadLineOut | None = None
    memory: MemoryOut
    load: RowLoadOut | None = None  # with the load filter (users, min_decode_tokens_per_s)


class FitTableOut(BaseModel):
    model: ModelOut
    filters: dict[str, str]
    page: int
    pages: int
    total: int  # rows that pass the filters, over every page
    rows: list[FitRowOut]


class SpeedOut(BaseModel):
    low: float
    high: float
    basis: str
    note: str  # English; note_messages carries the same as codes
    note_messages: list[MessageOut]


class EstimateOut(BaseModel):
    """The recipe's flat shape (a few of its fields; every field is in the answer)."""

    model_config = ConfigDict(extra="allow")
    model: str
    hardware: str
    verdict: Verdict
    reason: str  # English; reason_messages carries the same as codes
    reason_messages: list[MessageOut]
    required_gb_per_gpu: float | None
    usable_gb_per_gpu: float
    max_context: int | None
    # One request's, with its note; at a concurrency above one, each request's at that load.
    decode_tokens_per_s: SpeedOut | BandOut | None
    kv_cache: Literal["estimated", "unknown"]
    assumed: list[str]  # English; assumed_messages carries the same as codes
    assumed_messages: list[MessageOut]
    described: dict[str, Any] | None
