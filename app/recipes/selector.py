"""The device selector: "what if" estimates for catalog or self-described hardware."""

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.catalog.service import CatalogService
from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.estimate import Basis, Estimate, EstimateError, HardwareSpec, Plan, estimate
from app.models import LlmModel

PLATFORMS = ("cuda", "rocm", "metal", "vulkan", "cpu")
INTERCONNECTS = ("none", "nvlink", "nvswitch", "xgmi", "pcie")
# Estimator input names mapped to the form field a person should fix.
FIELD_FOR_ERROR = {
    "tensor_parallel": "gpu_count",
    "memory_gb_per_gpu": "memory_gb_per_gpu",
    "usable_gb_per_gpu": "usable_memory_gb",
    "gpu_count": "gpu_count",
    "runtime": "runtime",
    "format": "runtime",
    "platform": "runtime",
    "kv_dtype": "kv_cache_dtype",
    "context": "context",
    "concurrency": "concurrency",
    "model": "artifact",
}


class SelectorInput(BaseModel):
    """What the person asks about; blank form fields arrive as empty strings."""

    model_config = ConfigDict(extra="ignore")

    hardware: str = Field(default="custom", max_length=100)
    memory_gb_per_gpu: float | None = Field(default=None, gt=0, le=10_000)
    usable_memory_gb: float | None = Field(default=None, gt=0, le=1_000_000)
    gpu_count: int = Field(default=1, ge=1, le=64)
    bandwidth_gb_s_per_gpu: float | None = Field(default=None, gt=0, le=100_000)
    interconnect: Literal[INTERCONNECTS] = "none"  # type: ignore[valid-type]
    platform: Literal[PLATFORMS] = "cuda"  # type: ignore[valid-type]
    unified_memory: bool = False
    artifact: str = Field(max_length=120)
    runtime: str = Field(max_length=50)
    context: int = Field(default=4096, ge=256, le=10_000_000)
    concurrency: int = Field(default=1, ge=1, le=1024)
    kv_cache_dtype: str = Field(default="auto", max_length=20)

    @field_validator("*", mode="before")
    @classmethod
    def blank_is_none(cls, value: object, info) -> object:  # noqa: ANN001
        if value == "" and info.field_name in {
            "memory_gb_per_gpu",
            "usable_memory_gb",
            "bandwidth_gb_s_per_gpu",
        }:
            return None
        return value

    @model_validator(mode="after")
    def custom_needs_memory(self) -> "SelectorInput":
        if self.hardware == "custom" and self.memory_gb_per_gpu is None:
            raise ValueError("memory_gb_per_gpu: describe the memory per card (GB)")
        return self


@dataclass
class SelectorResult:
    input: SelectorInput | None
    errors: dict[str, str]
    estimate: Estimate | None = None
    verified: bool = False
    hardware_label: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors and self.estimate is not None

    def as_json(self) -> dict:
        if not self.ok:
            return {"errors": self.errors}
        est = self.estimate
        assert est is not None and self.input is not None
        memory = est.memory
        return {
            "hardware": self.hardware_label,
            "verdict": "fits" if memory.fits else "exceeds_memory",
            "verified_pair": self.verified,
            "estimate_only": not self.verified,
            "tensor_parallel": est.tensor_parallel,
            "memory": {
                "weights_gb": round(memory.weights.value, 2),
                "kv_cache_gb": round(memory.kv_cache.value, 2),
                "prefill_workspace_gb": round(memory.prefill_workspace.value, 2),
                "runtime_reserve_gb": round(memory.runtime_reserve.value, 2),
                "required_gb_per_gpu": round(memory.required, 2),
                "usable_gb_per_gpu": round(memory.usable.value, 2),
            },
            "max_context": est.max_context,
            "kv_bytes_per_token": est.kv_bytes_per_token,
            "decode_tokens_per_s": (
                {"low": est.decode_tokens_per_s.low, "high": est.decode_tokens_per_s.high}
                if est.decode_tokens_per_s
                else None
            ),
            "basis": est.basis.value,
            "warnings": list(est.warnings),
        }


def parse_input(data: dict) -> tuple[SelectorInput | None, dict[str, str]]:
    try:
        return SelectorInput.model_validate(data), {}
    except ValidationError as error:
        return None, field_errors(error)


def field_errors(error: ValidationError) -> dict[str, str]:
    errors: dict[str, str] = {}
    for item in error.errors():
        name = str(item["loc"][0]) if item["loc"] else ""
        message = item["msg"].removeprefix("Value error, ")
        if not name and ":" in message:
            name, message = (part.strip() for part in message.split(":", 1))
        errors.setdefault(name or "form", message)
    return errors


def custom_hardware(data: SelectorInput) -> HardwareSpec:
    memory = data.memory_gb_per_gpu or 0.0
    usable_total = data.usable_memory_gb or memory * data.gpu_count * 0.90
    assumed = {} if data.usable_memory_gb else {"usable_memory_gb": Basis.ASSUMED}
    return HardwareSpec(
        slug="custom",
        platform=data.platform,
        unified_memory=data.unified_memory,
        gpu_count=data.gpu_count,
        memory_gb_per_gpu=memory,
        usable_gb_per_gpu=usable_total / data.gpu_count,
        bandwidth_gb_s_per_gpu=data.bandwidth_gb_s_per_gpu,
        interconnect=data.interconnect,
        basis={"memory_gb_per_gpu": Basis.PUBLISHED, **assumed},
    )


def run_selector(catalog: CatalogService, model: LlmModel, raw: dict) -> SelectorResult:
    """Validate the input and estimate; every failure is a message for one field."""
    data, errors = parse_input(raw)
    if data is None:
        return SelectorResult(None, errors)
    artifact = next((a for a in model.artifacts if a.slug == data.artifact), None)
    runtime = next((r for r in catalog.repo.list_runtimes() if r.slug == data.runtime), None)
    if artifact is None:
        errors["artifact"] = f"choose one of: {', '.join(a.slug for a in model.artifacts)}"
    if runtime is None:
        errors["runtime"] = "unknown runtime"
    hardware = custom_hardware(data)
    label = "custom hardware"
    if data.hardware != "custom":
        row = catalog.repo.get_hardware(data.hardware)
        if row is None:
            errors["hardware"] = "unknown hardware; pick one from the list or 'custom'"
        else:
            hardware, label = hardware_spec(row), row.name
    if errors:
        return SelectorResult(data, errors)
    assert artifact is not None and runtime is not None
    plan = Plan(context=data.context, concurrency=data.concurrency, kv_dtype=data.kv_cache_dtype)
    try:
        result = estimate(
            model_spec(model), artifact_spec(artifact), runtime_spec(runtime), hardware, plan
        )
    except EstimateError as error:
        return SelectorResult(data, {FIELD_FOR_ERROR.get(error.field, "form"): error.message})
    verified = catalog.load_evidence(model).verified.is_verified(artifact.id, runtime.id)
    return SelectorResult(data, {}, result, verified, label)
