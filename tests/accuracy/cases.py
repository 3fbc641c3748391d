"""The calibration rows, turned into the estimator's own inputs and run through it.

Hardware comes from the GPU table by name (the path a user's "RTX 4090" takes), runtimes
from the seed catalog, models from the architecture listed beside the rows; the estimate
is `app.estimate.estimate`, unchanged. Nothing here adjusts a figure.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import yaml

from app.asking.custom import custom_hardware
from app.asking.gpu_table import lookup_gpu
from app.catalog.seed_schema import DEFAULT_SEED_DIR, load_catalog
from app.estimate import (
    ArtifactSpec,
    Assessment,
    BudgetRule,
    HardwareSpec,
    ModelSpec,
    Plan,
    Route,
    RuntimeSpec,
    assess,
    estimate,
)
from app.estimate.speed.load import load_estimate

CALIBRATION = Path(__file__).with_name("calibration.yaml")
GIB = 1024**3
FORMATS = {"llama-cpp": "gguf", "ollama": "gguf", "mlx-lm": "mlx", "vllm": "safetensors"}


@dataclass(frozen=True)
class Case:
    """One measured decode speed and what it was measured on."""

    source: str
    gpu: str
    runtime: str
    model: ModelSpec
    artifact: ArtifactSpec
    hardware: HardwareSpec
    context: int
    measured: float
    fitting: bool
    platform: str

    @property
    def label(self) -> str:
        return f"{self.model.slug} {self.artifact.quant} on {self.gpu} ({self.runtime})"

    @property
    def family(self) -> str:
        return "MoE" if self.model.is_moe else "dense"


@dataclass(frozen=True)
class Outcome:
    """The estimator's answer for one case."""

    case: Case
    low: float
    high: float
    point: float | None = None  # tokens/s before the class's spread, where the step model ran

    @property
    def center(self) -> float:
        return (self.low + self.high) / 2

    @property
    def error(self) -> float:
        """Relative error of the point estimate against the measurement."""
        return abs(self.center - self.case.measured) / self.case.measured

    @property
    def ratio(self) -> float:
        return self.case.measured / self.center

    @property
    def covered(self) -> bool:
        return self.low <= self.case.measured <= self.high


@cache
def _data() -> dict:
    return yaml.safe_load(CALIBRATION.read_text())


@cache
def _runtimes() -> dict[str, RuntimeSpec]:
    catalog = load_catalog(DEFAULT_SEED_DIR)
    found = {}
    for runtime in catalog.runtimes:
        budget = runtime.budget
        found[runtime.slug] = RuntimeSpec(
            slug=runtime.slug,
            platforms=frozenset(runtime.platforms),
            formats=frozenset(runtime.formats),
            budget=BudgetRule(budget.kind, budget.fraction, budget.margin_gb or 0.0),
            tensor_parallel=runtime.tensor_parallel,
            kv_dtypes=tuple(runtime.kv_dtypes),
            caps_sliding_window=runtime.caps_sliding_window,
            cuda_graphs=runtime.cuda_graphs,
            default_prefill_tokens=runtime.default_prefill_tokens,
        )
    return found


def runtime(slug: str) -> RuntimeSpec:
    return _runtimes()[slug]


def _model(slug: str) -> ModelSpec:
    facts = _data()["models"][slug]
    active = facts.get("active_params_b", facts["params_b"])
    return ModelSpec(
        slug=slug,
        params_total_b=facts["params_b"],
        params_active_b=active,
        is_moe="active_params_b" in facts,
        native_context=facts["native_context"],
        num_layers=facts["layers"],
        num_attention_heads=facts["heads"],
        num_kv_heads=facts["kv_heads"],
        head_dim=facts["head_dim"],
        sliding_window=facts.get("sliding_window"),
        sliding_window_layers=facts.get("sliding_window_layers", 0),
    )


def _artifact(row: dict, model: ModelSpec) -> ArtifactSpec:
    fmt = FORMATS[row["runtime"]]
    if "file_gib" in row:
        size = int(row["file_gib"] * GIB)
        bits = size * 8 / (model.params_total_b * 1e9)
        return ArtifactSpec(f"{model.slug}-{row['quant']}", fmt, row["quant"], bits, size)
    return ArtifactSpec(f"{model.slug}-{row['quant']}", fmt, row["quant"], row["bits_per_weight"])


def _hardware(row: dict) -> HardwareSpec:
    description = lookup_gpu(row["gpu"])
    if "platform" in row:
        description = replace(description, platform=row["platform"])
    hardware = custom_hardware(description)
    return HardwareSpec(
        slug=row["gpu"],
        platform=hardware.platform,
        unified_memory=hardware.unified_memory,
        gpu_count=1,
        memory_gb_per_gpu=hardware.memory_gb_per_gpu,
        usable_gb_per_gpu=hardware.usable_memory_gb,
        bandwidth_gb_s_per_gpu=hardware.bandwidth_gb_s_per_gpu,
    )


def _case(row: dict) -> Case:
    model = _model(row["model"])
    hardware = _hardware(row)
    return Case(
        source=_data()["sources"][row["source"]],
        gpu=row["gpu"],
        runtime=row["runtime"],
        model=model,
        artifact=_artifact(row, model),
        hardware=hardware,
        context=row["context"],
        measured=row["measured"],
        fitting=row.get("set") == "fit",
        platform=hardware.platform,
    )


def cases() -> list[Case]:
    """Every calibration row (all weights on the GPU), in file order."""
    return [_case(row) for row in _data()["rows"]]


def offload_cases() -> list[Case]:
    """The measured runs with part of the weights in system memory."""
    return [_case(row) for row in _data().get("offload_rows", [])]


def outcome(case: Case) -> Outcome:
    """The estimator's decode range for a case, at its context, one request."""
    found = estimate(
        case.model, case.artifact, runtime(case.runtime), case.hardware, Plan(case.context)
    )
    speed = found.decode_tokens_per_s
    point = load_estimate(found.speed_model).decode_point if found.speed_model else None
    return Outcome(case, speed.low, speed.high, point)


def assessment(case: Case) -> Assessment:
    """The fit verdict for the measured setup (the route it ran on, at its context)."""
    route = Route(case.artifact, runtime(case.runtime), verified=True)
    return assess(case.model, case.hardware, [route], context=max(case.context, 1))


@dataclass(frozen=True)
class Summary:
    count: int
    median_error: float
    within_30: float
    within_50: float
    coverage: float


def summarize(outcomes: Iterable[Outcome]) -> Summary:
    found = list(outcomes)
    errors = [o.error for o in found]
    return Summary(
        count=len(found),
        median_error=statistics.median(errors),
        within_30=sum(e <= 0.30 for e in errors) / len(found),
        within_50=sum(e <= 0.50 for e in errors) / len(found),
        coverage=sum(o.covered for o in found) / len(found),
    )
