"""Memory per GPU, the largest context that fits, and speed, for one serving setup."""

from __future__ import annotations

import msgspec

from app.estimate.basis import Basis, Quantity, weakest
from app.estimate.cautions import setup_warnings
from app.estimate.inputs.checked_plan import Setup, resolve_setup
from app.estimate.inputs.specs import (
    ArtifactSpec,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    Serving,
)
from app.estimate.memory.breakdown import (
    Job,
    MemoryBreakdown,
    fits_at,
    job_at,
    kv_bytes_per_gpu,
    largest_at,
    largest_fitting_context,
    memory_at,
    required_gb,
)
from app.estimate.memory.budget import prefill_workspace, runtime_reserve
from app.estimate.memory.kv import (
    KvShape,
    checked_kv_growth_bytes_per_token,
    kv_basis,
    kv_shape,
    layer_share,
)
from app.estimate.memory.weights import active_weight_bytes, weights_bytes
from app.estimate.messages import Code, Message, message
from app.estimate.ranges.classes import class_key, pool_keys
from app.estimate.ranges.from_records import RangeBook
from app.estimate.speed.llama_constants import SpeedRange
from app.estimate.speed.load import SpeedModel, with_ranges
from app.estimate.speed.model import decode_at_plan, speed_model
from app.estimate.speed.offload import OffloadInputs, OffloadPlan, plan_offload
from app.estimate.units import bytes_to_gb


class Estimate(msgspec.Struct, frozen=True):
    """Everything the estimator says about one model file on one runtime and hardware."""

    weights_gb: Quantity
    kv_bytes_per_token: int
    kv_bytes_per_token_per_gpu: int
    tensor_parallel: int
    memory: MemoryBreakdown
    max_context: int | None
    decode_tokens_per_s: SpeedRange | None  # per request at the plan's concurrency
    warnings: tuple[Message, ...]
    basis: Basis
    # What the step model needs to answer at any concurrency (`app/estimate/speed/load.py`);
    # None when the hardware's bandwidth is unknown.
    speed_model: SpeedModel | None = None


class Sizing:
    """The memory part of an estimate: the breakdown at the plan's context and the largest
    context that fits. Choosing a route or fitting a concurrency reads nothing else, so it
    skips the speed, warnings and basis a full estimate works out.

    Choosing reads whether each route fits and by how much, the same sums the breakdown
    makes; the breakdown itself (each part with its basis and notes) is built when first
    read, which is for the chosen route alone.
    """

    __slots__ = ("_job", "_context", "_concurrency", "_largest", "_memory", "_estimate")

    def __init__(
        self, job: Job, context: int, concurrency: int, largest: dict[int, int | None]
    ) -> None:
        """`largest`: the job's largest fitting contexts by concurrency (see `largest_at`)."""
        self._job, self._context, self._concurrency = job, context, concurrency
        self._largest = largest
        self._memory: MemoryBreakdown | None = None
        self._estimate: Estimate | None = None

    @property
    def max_context(self) -> int | None:
        return largest_at(self._job, self._largest, self._concurrency)

    @property
    def memory(self) -> MemoryBreakdown:
        if self._memory is None:
            self._memory = memory_at(self._job, self._context, self._concurrency)
        return self._memory

    @property
    def full_estimate(self) -> Estimate:
        """The full estimate of the same plan, the one `estimate` gives."""
        if self._estimate is None:
            job = job_at(self._job, self._context, self._concurrency)
            self._estimate = _estimate(job, self.max_context)
        return self._estimate

    @property
    def fits(self) -> bool:
        """`memory.fits`, summed without the breakdown."""
        return fits_at(self._job, self._context, self._concurrency)

    @property
    def headroom(self) -> float:
        """`memory.headroom`, summed without the breakdown."""
        return self._job.usable.value - required_gb(self._job, self._context, self._concurrency)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sizing):
            return NotImplemented
        return (self.memory, self.max_context) == (other.memory, other.max_context)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sizing(memory={self.memory!r}, max_context={self.max_context!r})"


def estimate(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> Estimate:
    """Estimate memory per GPU, the largest fitting context and speed for a serving plan."""
    job = _prepare(Serving(model, artifact, runtime, hardware, plan))
    return _estimate(job, largest_fitting_context(job))


def _estimate(job: Job, largest: int | None) -> Estimate:
    model, hardware, setup = job.model, job.hardware, job.setup
    speed = speed_model(job)
    return Estimate(
        weights_gb=Quantity(bytes_to_gb(job.weights.value), job.weights.basis, job.weights.note),
        kv_bytes_per_token=_kv_growth(job, tensor_parallel=1),
        kv_bytes_per_token_per_gpu=job.kv.growth_bytes_per_token(),
        tensor_parallel=setup.tensor_parallel,
        memory=memory_at(job, setup.context),
        max_context=largest,
        decode_tokens_per_s=decode_at_plan(speed),
        warnings=setup_warnings(model, job.runtime, hardware, setup),
        basis=_input_basis(job),
        speed_model=speed,
    )


def with_ranges_of(found: Estimate, book: RangeBook | None) -> Estimate:
    """The same estimate with its speed ranges from `book`: the classes accepted records
    updated (`app/estimate/ranges/from_records.py`); None or an unchanged book keeps it as it is."""
    speed = found.speed_model
    if book is None or not book.updated or speed is None:
        return found
    ranged = with_ranges(speed, book)
    key = class_key(speed.family, speed.platform, speed.gpus, speed.concurrency)
    if key not in book.updated and not book.updated.intersection(pool_keys(key)):
        # The plan's own figure keeps its range; other loads read the book from the model.
        return msgspec.structs.replace(found, speed_model=ranged)
    return msgspec.structs.replace(
        found, speed_model=ranged, decode_tokens_per_s=decode_at_plan(ranged)
    )


def size(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> Sizing:
    """The memory and the largest fitting context of `estimate`, and nothing else."""
    job = _prepare(Serving(model, artifact, runtime, hardware, plan))
    return Sizing(job, job.setup.context, job.setup.concurrency, {})


def max_context(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> int | None:
    """Largest context (a multiple of 256, up to native) that fits at the plan's concurrency."""
    return largest_fitting_context(_prepare(Serving(model, artifact, runtime, hardware, plan)))


def offload(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> OffloadPlan | None:
    """The split of the weights between GPU and system memory that lets the plan run when it
    does not fit on the GPU; None when it fits, or when offloading cannot help."""
    return _offload(_prepare(Serving(model, artifact, runtime, hardware, plan)))


def _offload(job: Job) -> OffloadPlan | None:
    """`offload` of a prepared job."""
    model, artifact, runtime, hardware, setup = (
        job.model,
        job.artifact,
        job.runtime,
        job.hardware,
        job.setup,
    )
    kv_bytes = kv_bytes_per_gpu(job, setup.context)
    room = job.usable.value - bytes_to_gb(kv_bytes) - job.prefill.value - job.reserve.value
    inputs = OffloadInputs(
        runtime=runtime.slug,
        unified_memory=hardware.unified_memory,
        gpu_count=hardware.gpu_count,
        num_layers=model.num_layers,
        is_moe=model.is_moe,
        params_total_b=model.params_total_b,
        params_active_b=model.params_active_b,
        cards=setup.layer_split,
        weights_gb=bytes_to_gb(job.weights.value),
        active_weights_gb=bytes_to_gb(active_weight_bytes(model, artifact, job.weights)),
        gpu_room_gb=room,
    )
    return plan_offload(inputs)


def _prepare(serving: Serving) -> Job:
    """Check the inputs, resolve the plan and size the weights."""
    setup = resolve_setup(serving)
    model, artifact, runtime, hardware, _plan = serving
    parts = route_parts(model, artifact, runtime, setup)
    return _job_for(hardware, setup, parts, kv_basis(model), _usable(hardware))


class RouteParts(msgspec.Struct, frozen=True):
    """What a job needs of the model, its file, the runtime and the plan, on no hardware:
    worked out once per model and shared by every card where the caller can."""

    model: ModelSpec
    artifact: ArtifactSpec
    runtime: RuntimeSpec
    weights: Quantity
    weights_per_gpu: Quantity
    prefill: Quantity
    kv: KvShape


def route_parts(
    model: ModelSpec, artifact: ArtifactSpec, runtime: RuntimeSpec, setup: Setup
) -> RouteParts:
    weights = weights_bytes(model, artifact)
    tp = setup.tensor_parallel
    kv = kv_shape(model, setup.kv_dtype, setup.caps_sliding_window, tp)
    return RouteParts(
        model,
        artifact,
        runtime,
        weights,
        _weights_per_gpu(weights, tp, setup.layer_split),
        prefill_workspace(model, runtime, setup),
        layer_share(kv, setup.layer_split),
    )


def _job_for(
    hardware: HardwareSpec, setup: Setup, parts: RouteParts, kv: Basis, usable: Quantity
) -> Job:
    """The job of a resolved setup, from the parts that depend on the model, the model
    file or the hardware alone (worked out by the caller, once where it can)."""
    return Job(
        parts.model,
        parts.artifact,
        parts.runtime,
        hardware,
        setup,
        parts.weights,
        weights_per_gpu=parts.weights_per_gpu,
        prefill=parts.prefill,
        reserve=runtime_reserve(parts.runtime, hardware, setup),
        usable=usable,
        kv_basis=kv,
        kv=parts.kv,
    )


def _weights_per_gpu(weights: Quantity, tensor_parallel: int, layer_split: int = 1) -> Quantity:
    """The weights' share of each GPU: split by tensors, or by whole layers over the cards
    (an even share: llama.cpp divides the layers in proportion to each card's free memory)."""
    split: tuple[Message, ...] = ()
    if tensor_parallel > 1:
        split = (message(Code.WEIGHTS_SPLIT_OVER, count=tensor_parallel),)
    elif layer_split > 1:
        split = (message(Code.WEIGHTS_SPLIT_BY_LAYER, count=layer_split),)
    value = bytes_to_gb(weights.value) / (tensor_parallel * layer_split)
    return Quantity(value, weights.basis, weights.note + split)


def _kv_growth(job: Job, tensor_parallel: int) -> int:
    """Per-token KV growth of one sequence at the plan's dtype."""
    setup = job.setup
    return checked_kv_growth_bytes_per_token(
        job.model, setup.kv_dtype, setup.caps_sliding_window, tensor_parallel
    )


def _usable(hardware: HardwareSpec) -> Quantity:
    """What a runtime can get on each GPU; on unified memory the GPU's share, not all RAM."""
    note = message(Code.USABLE_UNIFIED if hardware.unified_memory else Code.USABLE_PER_GPU)
    return Quantity(hardware.usable_gb_per_gpu, hardware.basis_of("usable_gb_per_gpu"), (note,))


def _input_basis(job: Job) -> Basis:
    """Weakest basis of the data that went in; the estimator's own rules carry theirs."""
    model, hardware = job.model, job.hardware
    bases = [
        job.weights.basis,
        job.kv_basis,
        model.basis_of("native_context"),
        hardware.basis_of("usable_gb_per_gpu"),
        hardware.basis_of("memory_gb_per_gpu"),
    ]
    if hardware.bandwidth_gb_s_per_gpu is not None:
        bases.append(hardware.basis_of("bandwidth_gb_s_per_gpu"))
    if hardware.bf16_tflops_per_gpu is not None:
        bases.append(hardware.basis_of("bf16_tflops_per_gpu"))
    bases.append(model.basis_of("params_active_b" if model.is_moe else "params_total_b"))
    return weakest(*bases)
