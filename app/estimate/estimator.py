"""Memory per GPU, the largest context that fits, and speed, for one serving setup."""

from __future__ import annotations

from functools import lru_cache

import msgspec

from app.estimate.basis import Basis, Quantity, weakest
from app.estimate.budget import prefill_workspace, runtime_reserve
from app.estimate.cautions import setup_warnings
from app.estimate.kv import (
    KvShape,
    checked_kv_growth_bytes_per_token,
    checked_largest_context_within,
    kv_basis,
    kv_shape,
    kv_unknown,
)
from app.estimate.messages import Code, Message, Notes, message
from app.estimate.offload import OffloadInputs, OffloadPlan, plan_offload
from app.estimate.setup import Setup, resolve_setup
from app.estimate.specs import ArtifactSpec, HardwareSpec, ModelSpec, Plan, RuntimeSpec
from app.estimate.speed import DecodeLoad, SpeedRange, decode_range, prefill_range
from app.estimate.units import GB, bytes_to_gb
from app.estimate.weights import active_params, active_weight_bytes, weights_bytes

CONTEXT_STEP = 256


class MemoryBreakdown(msgspec.Struct, frozen=True):
    """Memory per GPU in decimal GB: what the setup needs against what it can get."""

    weights: Quantity
    kv_cache: Quantity
    prefill_workspace: Quantity
    runtime_reserve: Quantity
    usable: Quantity

    @property
    def required(self) -> float:
        """GB per GPU the setup needs."""
        # Added left to right, as `sum` would: read for every route of every assessment.
        return (
            self.weights.value
            + self.kv_cache.value
            + self.prefill_workspace.value
            + self.runtime_reserve.value
        )

    @property
    def headroom(self) -> float:
        """GB per GPU left over (negative when it does not fit)."""
        return self.usable.value - self.required

    @property
    def fits(self) -> bool:
        """Whether the setup fits in the usable memory of each GPU."""
        return self.required <= self.usable.value


class Estimate(msgspec.Struct, frozen=True):
    """Everything the estimator says about one model file on one runtime and hardware."""

    weights_gb: Quantity
    kv_bytes_per_token: int
    kv_bytes_per_token_per_gpu: int
    tensor_parallel: int
    memory: MemoryBreakdown
    max_context: int | None
    decode_tokens_per_s: SpeedRange | None
    prefill_tokens_per_s: SpeedRange | None
    warnings: tuple[Message, ...]
    basis: Basis


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
        self, job: _Job, context: int, concurrency: int, largest: dict[int, int | None]
    ) -> None:
        """`largest`: the job's largest fitting contexts by concurrency (see `_largest_at`)."""
        self._job, self._context, self._concurrency = job, context, concurrency
        self._largest = largest
        self._memory: MemoryBreakdown | None = None
        self._estimate: Estimate | None = None

    @property
    def max_context(self) -> int | None:
        return _largest_at(self._job, self._largest, self._concurrency)

    @property
    def memory(self) -> MemoryBreakdown:
        if self._memory is None:
            self._memory = _memory_at(self._job, self._context, self._concurrency)
        return self._memory

    @property
    def full_estimate(self) -> Estimate:
        """The full estimate of the same plan, the one `estimate` gives."""
        if self._estimate is None:
            job = _at(self._job, self._context, self._concurrency)
            self._estimate = _estimate(job, self.max_context)
        return self._estimate

    @property
    def fits(self) -> bool:
        """`memory.fits`, summed without the breakdown."""
        return _fits_at(self._job, self._context, self._concurrency)

    @property
    def headroom(self) -> float:
        """`memory.headroom`, summed without the breakdown."""
        return self._job.usable.value - _required_gb(self._job, self._context, self._concurrency)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sizing):
            return NotImplemented
        return (self.memory, self.max_context) == (other.memory, other.max_context)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sizing(memory={self.memory!r}, max_context={self.max_context!r})"


class _Job(msgspec.Struct, frozen=True):
    """Checked inputs of one estimate, with the plan resolved, the weights sized, and every
    part of the memory that does not depend on context worked out once (with its basis):
    the largest-context search only adds the KV cache to them."""

    model: ModelSpec
    artifact: ArtifactSpec
    runtime: RuntimeSpec
    hardware: HardwareSpec
    setup: Setup
    weights: Quantity
    weights_per_gpu: Quantity
    prefill: Quantity
    reserve: Quantity
    usable: Quantity
    kv_basis: Basis
    kv: KvShape  # one sequence's cache on one GPU at the plan's dtype

    @property
    def fixed_gb(self) -> float:
        """Memory per GPU that does not grow with context."""
        return self.weights_per_gpu.value + self.prefill.value + self.reserve.value


def estimate(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> Estimate:
    """Estimate memory per GPU, the largest fitting context and speed for a serving plan."""
    job = _prepare(model, artifact, runtime, hardware, plan)
    return _estimate(job, _largest_fitting_context(job))


def _estimate(job: _Job, largest: int | None) -> Estimate:
    model, hardware, setup = job.model, job.hardware, job.setup
    return Estimate(
        weights_gb=Quantity(bytes_to_gb(job.weights.value), job.weights.basis, job.weights.note),
        kv_bytes_per_token=_kv_growth(job, tensor_parallel=1),
        kv_bytes_per_token_per_gpu=_kv_growth(job, setup.tensor_parallel),
        tensor_parallel=setup.tensor_parallel,
        memory=_memory_at(job, setup.context),
        max_context=largest,
        decode_tokens_per_s=_decode(job),
        prefill_tokens_per_s=prefill_range(active_params(model), hardware, setup.tensor_parallel),
        warnings=setup_warnings(model, job.runtime, hardware, setup),
        basis=_input_basis(job),
    )


def size(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> Sizing:
    """The memory and the largest fitting context of `estimate`, and nothing else."""
    job = _prepare(model, artifact, runtime, hardware, plan)
    return Sizing(job, job.setup.context, job.setup.concurrency, {})


def max_context(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> int | None:
    """Largest context (a multiple of 256, up to native) that fits at the plan's concurrency."""
    return _largest_fitting_context(_prepare(model, artifact, runtime, hardware, plan))


def offload(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> OffloadPlan | None:
    """The split of the weights between GPU and system memory that lets the plan run when it
    does not fit on the GPU; None when it fits, or when offloading cannot help."""
    return _offload(_prepare(model, artifact, runtime, hardware, plan))


def _offload(job: _Job) -> OffloadPlan | None:
    """`offload` of a prepared job."""
    model, artifact, runtime, hardware, setup = (
        job.model,
        job.artifact,
        job.runtime,
        job.hardware,
        job.setup,
    )
    kv_bytes = _kv_bytes_per_gpu(job, setup.context)
    room = job.usable.value - bytes_to_gb(kv_bytes) - job.prefill.value - job.reserve.value
    inputs = OffloadInputs(
        runtime=runtime.slug,
        unified_memory=hardware.unified_memory,
        gpu_count=hardware.gpu_count,
        num_layers=model.num_layers,
        is_moe=model.is_moe,
        params_total_b=model.params_total_b,
        params_active_b=model.params_active_b,
        weights_gb=bytes_to_gb(job.weights.value),
        active_weights_gb=bytes_to_gb(active_weight_bytes(model, artifact, job.weights)),
        gpu_room_gb=room,
        kv_bytes=kv_bytes,
        context=setup.context,
    )
    return plan_offload(inputs, hardware)


def _prepare(
    model: ModelSpec,
    artifact: ArtifactSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    plan: Plan,
) -> _Job:
    """Check the inputs, resolve the plan and size the weights."""
    setup = resolve_setup(model, artifact, runtime, hardware, plan)
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
    return RouteParts(
        model,
        artifact,
        runtime,
        weights,
        _weights_per_gpu(weights, tp),
        prefill_workspace(model, runtime, setup),
        kv_shape(model, setup.kv_dtype, setup.caps_sliding_window, tp),
    )


def _job_for(
    hardware: HardwareSpec, setup: Setup, parts: RouteParts, kv: Basis, usable: Quantity
) -> _Job:
    """The job of a resolved setup, from the parts that depend on the model, the model
    file or the hardware alone (worked out by the caller, once where it can)."""
    return _Job(
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


def _memory_at(job: _Job, context: int, concurrency: int | None = None) -> MemoryBreakdown:
    """Memory per GPU at a context length and the plan's (or another) concurrency."""
    return MemoryBreakdown(
        weights=job.weights_per_gpu,
        kv_cache=_kv_per_gpu(job, context, concurrency or job.setup.concurrency),
        prefill_workspace=job.prefill,
        runtime_reserve=job.reserve,
        usable=job.usable,
    )


def _weights_per_gpu(weights: Quantity, tensor_parallel: int) -> Quantity:
    """The weights' share of each GPU under tensor parallelism."""
    across = tensor_parallel > 1
    split = (message(Code.WEIGHTS_SPLIT_OVER, count=tensor_parallel),) if across else ()
    value = bytes_to_gb(weights.value) / tensor_parallel
    return Quantity(value, weights.basis, weights.note + split)


def _kv_bytes_per_gpu(job: _Job, context: int, concurrency: int | None = None) -> int:
    """KV cache bytes on one GPU for all concurrent sequences (the plan's, or as many as
    given: a job serves every concurrency of its plan)."""
    return job.kv.bytes_at(context) * (concurrency or job.setup.concurrency)


def _kv_per_gpu(job: _Job, context: int, concurrency: int) -> Quantity:
    """The KV cache of each GPU, in GB."""
    gb = bytes_to_gb(_kv_bytes_per_gpu(job, context, concurrency))
    notes = _kv_notes(concurrency, context, job.setup.kv_dtype, kv_unknown(job.model))
    return Quantity(gb, job.kv_basis, notes)


@lru_cache(maxsize=4096, typed=True)
def _kv_notes(requests: int, tokens: int, kv_dtype: str, unknown: bool) -> Notes:
    """How the KV cache was sized: asked for every route at every context tried, so each
    distinct note is made once."""
    note = message(Code.KV_AT, requests=requests, tokens=tokens, kv_dtype=kv_dtype)
    if unknown:  # weights-only mode: no architecture, so no KV size to add
        note = message(Code.KV_NOT_COUNTED, kv=note)
    return (note,)


def _kv_growth(job: _Job, tensor_parallel: int) -> int:
    """Per-token KV growth of one sequence at the plan's dtype."""
    setup = job.setup
    return checked_kv_growth_bytes_per_token(
        job.model, setup.kv_dtype, setup.caps_sliding_window, tensor_parallel
    )


def _usable(hardware: HardwareSpec) -> Quantity:
    """What a runtime can get on each GPU; on unified memory the GPU's share, not all RAM."""
    note = message(Code.USABLE_UNIFIED if hardware.unified_memory else Code.USABLE_PER_GPU)
    return Quantity(hardware.usable_gb_per_gpu, hardware.basis_of("usable_gb_per_gpu"), (note,))


def _fits_at(job: _Job, context: int, concurrency: int | None = None) -> bool:
    """Whether the plan fits at a context length: the same sum as `MemoryBreakdown.fits`,
    without building the breakdown."""
    return _required_gb(job, context, concurrency) <= job.usable.value


def _required_gb(job: _Job, context: int, concurrency: int | None = None) -> float:
    """`MemoryBreakdown.required` at a context length, without building the breakdown."""
    kv_gb = bytes_to_gb(_kv_bytes_per_gpu(job, context, concurrency))
    # Summed in the breakdown's order, so a boundary case falls the same way.
    return job.weights_per_gpu.value + kv_gb + job.prefill.value + job.reserve.value


def _largest_at(job: _Job, largest: dict[int, int | None], concurrency: int) -> int | None:
    """The largest fitting context at a concurrency, kept in `largest` once worked out: the
    plans of one job (every context at every concurrency) share it, and a route that is
    not chosen may never be asked."""
    if concurrency not in largest:
        largest[concurrency] = _largest_fitting_context(job, concurrency)
    return largest[concurrency]


def _largest_fitting_context(job: _Job, concurrency: int | None = None) -> int | None:
    """The largest multiple of 256 (up to native) that fits; None when 256 does not.

    The KV cache is the only part that grows with context, and it grows linearly (with one
    bend at a capped sliding window), so the boundary is solved in closed form and then
    confirmed against the same memory sum every other figure uses.
    """
    steps = job.model.native_context // CONTEXT_STEP
    concurrency = concurrency or job.setup.concurrency
    if steps < 1 or not _fits_at(job, CONTEXT_STEP, concurrency):
        return None
    setup = job.setup
    per_sequence = (job.usable.value - job.fixed_gb) * GB / concurrency
    solved = checked_largest_context_within(
        job.model, per_sequence, setup.kv_dtype, setup.caps_sliding_window, setup.tensor_parallel
    )
    # `solved` is infinite when the cache stops growing (capped windows only).
    step = steps if solved >= steps * CONTEXT_STEP else max(int(solved // CONTEXT_STEP), 1)
    # Float rounding may put the solved boundary a step off the summed one: walk to it.
    while step < steps and _fits_at(job, (step + 1) * CONTEXT_STEP, concurrency):
        step += 1
    while step > 1 and not _fits_at(job, step * CONTEXT_STEP, concurrency):
        step -= 1
    return step * CONTEXT_STEP


def _decode(job: _Job) -> SpeedRange | None:
    """Decode speed per request at the plan's context and concurrency: each token reads the
    active weights and every concurrent sequence's KV cache at that context."""
    setup = job.setup
    weights_read = active_weight_bytes(job.model, job.artifact, job.weights) / setup.tensor_parallel
    load = DecodeLoad(
        gpu_bytes=weights_read + _kv_bytes_per_gpu(job, setup.context),
        layers=job.model.num_layers,
        context=setup.context,
        is_moe=job.model.is_moe,
        runtime=job.runtime.slug,
    )
    return decode_range(load, job.hardware, setup.tensor_parallel)


def _input_basis(job: _Job) -> Basis:
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


def _at(job: _Job, context: int, concurrency: int) -> _Job:
    """The same job at another context and concurrency: nothing else in it depends on them.
    (Built field by field: a general replace costs more than the estimate's arithmetic.)"""
    s = job.setup
    if s.context == context and s.concurrency == concurrency:
        return job
    setup = Setup(
        context,
        concurrency,
        s.kv_dtype,
        s.prefill_tokens,
        s.tensor_parallel,
        s.cuda_graphs,
        s.caps_sliding_window,
        s.memory_fraction,
    )
    return _Job(
        job.model,
        job.artifact,
        job.runtime,
        job.hardware,
        setup,
        job.weights,
        job.weights_per_gpu,
        job.prefill,
        job.reserve,
        job.usable,
        job.kv_basis,
        job.kv,
    )
