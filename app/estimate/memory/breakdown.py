"""A prepared job and the memory it needs: what every figure of an estimate is summed from.

A job holds the checked inputs of one plan and every part of the memory that does not grow
with context; the KV cache is added per context and concurrency, so one job serves every
context and concurrency of its plan (`job_at`), and the largest context that fits is solved
from it in closed form.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from app.estimate.basis import Basis, Quantity
from app.estimate.inputs.attention import kv_unknown
from app.estimate.inputs.checked_plan import Setup
from app.estimate.inputs.specs import ArtifactSpec, HardwareSpec, ModelSpec, RuntimeSpec
from app.estimate.memory.kv import KvShape, checked_largest_context_within
from app.estimate.messages import Code, Notes, message
from app.estimate.units import GB, bytes_to_gb

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


class Job(msgspec.Struct, frozen=True):
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


def memory_at(job: Job, context: int, concurrency: int | None = None) -> MemoryBreakdown:
    """Memory per GPU at a context length and the plan's (or another) concurrency."""
    return MemoryBreakdown(
        weights=job.weights_per_gpu,
        kv_cache=kv_per_gpu(job, context, concurrency or job.setup.concurrency),
        prefill_workspace=job.prefill,
        runtime_reserve=job.reserve,
        usable=job.usable,
    )


def kv_bytes_per_gpu(job: Job, context: int, concurrency: int | None = None) -> int:
    """KV cache bytes on one GPU for all concurrent sequences (the plan's, or as many as
    given: a job serves every concurrency of its plan)."""
    return job.kv.bytes_at(context) * (concurrency or job.setup.concurrency)


def kv_per_gpu(job: Job, context: int, concurrency: int) -> Quantity:
    """The KV cache of each GPU, in GB."""
    gb = bytes_to_gb(kv_bytes_per_gpu(job, context, concurrency))
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


def fits_at(job: Job, context: int, concurrency: int | None = None) -> bool:
    """Whether the plan fits at a context length: the same sum as `MemoryBreakdown.fits`,
    without building the breakdown."""
    return required_gb(job, context, concurrency) <= job.usable.value


def required_gb(job: Job, context: int, concurrency: int | None = None) -> float:
    """`MemoryBreakdown.required` at a context length, without building the breakdown."""
    kv_gb = bytes_to_gb(kv_bytes_per_gpu(job, context, concurrency))
    # Summed in the breakdown's order, so a boundary case falls the same way.
    return job.weights_per_gpu.value + kv_gb + job.prefill.value + job.reserve.value


def largest_at(job: Job, largest: dict[int, int | None], concurrency: int) -> int | None:
    """The largest fitting context at a concurrency, kept in `largest` once worked out: the
    plans of one job (every context at every concurrency) share it, and a route that is
    not chosen may never be asked."""
    if concurrency not in largest:
        largest[concurrency] = largest_fitting_context(job, concurrency)
    return largest[concurrency]


def largest_fitting_context(job: Job, concurrency: int | None = None) -> int | None:
    """The largest multiple of 256 that fits, or the native context itself where it fits;
    None when 256 does not.

    The KV cache is the only part that grows with context, and it grows linearly (with one
    bend at a capped sliding window), so the boundary is solved in closed form and then
    confirmed against the same memory sum every other figure uses.
    """
    steps = job.model.native_context // CONTEXT_STEP
    concurrency = concurrency or job.setup.concurrency
    if steps < 1 or not fits_at(job, CONTEXT_STEP, concurrency):
        return None
    setup = job.setup
    # Each card holds its share of the layers' cache: the whole sequence's budget is the
    # cards' together (the summed check below settles the rounding of that share).
    per_sequence = (job.usable.value - job.fixed_gb) * GB / concurrency * setup.layer_split
    solved = checked_largest_context_within(
        job.model, per_sequence, setup.kv_dtype, setup.caps_sliding_window, setup.tensor_parallel
    )
    # `solved` is infinite when the cache stops growing (capped windows only).
    step = steps if solved >= steps * CONTEXT_STEP else max(int(solved // CONTEXT_STEP), 1)
    # Float rounding may put the solved boundary a step off the summed one: walk to it.
    while step < steps and fits_at(job, (step + 1) * CONTEXT_STEP, concurrency):
        step += 1
    while step > 1 and not fits_at(job, step * CONTEXT_STEP, concurrency):
        step -= 1
    native = job.model.native_context
    if step == steps and native % CONTEXT_STEP and fits_at(job, native, concurrency):
        # A native context between steps is itself the largest: rounding it down would
        # answer a context that fits as one that does not.
        return native
    return step * CONTEXT_STEP


def job_at(job: Job, context: int, concurrency: int) -> Job:
    """The same job at another context and concurrency: nothing else in it depends on them."""
    setup = job.setup
    if setup.context == context and setup.concurrency == concurrency:
        return job
    at = msgspec.structs.replace(setup, context=context, concurrency=concurrency)
    return msgspec.structs.replace(job, setup=at)
