"""Inputs and JSON shapes of the catalog pages and API."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.estimate import Verdict


class FitFilters(BaseModel):
    """Filters of the fit table; kept in the URL so a filtered table can be shared."""

    model_config = ConfigDict(extra="ignore")

    platform: str | None = Field(default=None, max_length=20)
    min_memory: float | None = Field(default=None, ge=0, le=100_000)
    verdict: Verdict | None = None

    @field_validator("*", mode="before")
    @classmethod
    def blank_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    def query(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.model_dump(mode="json").items() if v is not None}


class ModelOut(BaseModel):
    slug: str
    name: str
    hf_repo: str
    publisher: str
    family: str
    is_moe: bool
    params_total_b: float
    params_active_b: float
    native_context: int
    attention: str
    url: str
    fit_url: str


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
    basis: str | None


class ProfileStatusOut(BaseModel):
    slug: str
    name: str
    status: Literal["verified", "verification_pending"]
    url: str


class FitRowOut(BaseModel):
    hardware: str
    hardware_name: str
    platform: str
    usable_memory_gb: float
    gpu_count: int
    verdict: Verdict
    verdict_label: str
    reason: str
    recommended_runtime: str | None
    recommended_artifact: str | None
    alternative_runtimes: list[str]
    profile_status: Literal["verified", "verification_pending"]
    profiles: list[ProfileStatusOut]
    start_context: int
    max_context: int | None
    token_generation: RangeOut | None
    memory: MemoryOut


class FitTableOut(BaseModel):
    model: ModelOut
    filters: dict[str, str]
    rows: list[FitRowOut]
