"""JSON shapes of the fit table (the HTML templates read the same resolved recipes)."""

from typing import Literal

from pydantic import BaseModel

from app.catalog.schemas import ModelOut
from app.estimate import Verdict

Status = Literal["verified", "verification_pending"]


class RangeOut(BaseModel):
    low: float
    high: float
    basis: Literal["measured", "reported", "estimated"]
    note: str
    source: str | None = None
    records: int = 0


class MemoryOut(BaseModel):
    required_gb_per_gpu: float | None
    usable_gb_per_gpu: float
    headroom_gb_per_gpu: float | None
    basis: Literal["measured", "estimated"] | None


class ProfileStatusOut(BaseModel):
    slug: str
    name: str
    status: Status
    url: str
    token_generation: RangeOut | None


class FitRowOut(BaseModel):
    hardware: str
    hardware_name: str
    platform: str
    usable_memory_gb: float
    gpu_count: int
    profile: str  # the profile the row's figures come from (balanced)
    verdict: Verdict
    verdict_label: str
    reason: str
    recommended_runtime: str | None
    recommended_artifact: str | None
    verified_pair: bool
    alternative_runtimes: list[str]
    profile_status: Status
    profiles: list[ProfileStatusOut]
    start_context: int
    max_context: int | None
    token_generation: RangeOut | None
    memory: MemoryOut


class FitTableOut(BaseModel):
    model: ModelOut
    filters: dict[str, str]
    page: int
    pages: int
    total: int  # rows that pass the filters, over every page
    rows: list[FitRowOut]
