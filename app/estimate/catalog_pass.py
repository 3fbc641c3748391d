"""Estimates for the many plans of one catalog pass, sharing the work they have in common."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from app.estimate.errors import EstimateError
from app.estimate.estimator import (
    Estimate,
    Sizing,
    _estimate,
    _job_for,
    _offload,
    _prepare,
    _usable,
    route_parts,
)
from app.estimate.inputs.checked_plan import check_hardware, check_model, resolve_checked_setup
from app.estimate.inputs.specs import (
    ArtifactSpec,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    Serving,
)
from app.estimate.memory.breakdown import Job, fits_at, job_at, largest_at
from app.estimate.memory.kv import kv_basis
from app.estimate.speed.offload import OffloadPlan

T = TypeVar("T")


class SharedEstimates:
    """`estimate` and `size` for many plans that differ in context or concurrency, sharing
    what depends on neither: the checks, the resolved plan, the weights and the reserves,
    and the largest fitting context at each concurrency (it does not depend on the context
    asked). A plan the checks refuse is refused again without checking.

    Each answer equals the plain function's; one instance serves one pass over a catalog.
    Specs are told apart by identity (hashing a spec hashes every field, for every call):
    the caller builds each spec once, and this instance keeps every spec it saw alive, so
    an identity is never reused while it is remembered.

    `model_parts`, when given, is the instance of the same model's catalog pass: what
    depends on no hardware (the model's checks, the weights, the KV cache's shape) is then
    read from and kept there, so the estimates for a machine described by numbers share it.
    """

    def __init__(self, model_parts: SharedEstimates | None = None) -> None:
        # Job (at the first context and concurrency seen) or the refusal, with the largest
        # fitting context by concurrency.
        self._jobs: dict[tuple, tuple[Job | EstimateError, dict[int, int | None]]] = {}
        # What depends on the hardware alone, or the refusal.
        self._parts: dict[tuple, object] = {}
        self._specs: dict[int, object] = {}  # every spec seen, by identity, kept alive
        # Where the parts of the model, its files and runtimes alone are kept: another
        # instance's, or (None) this one's. Not a reference to itself: that cycle kept each
        # instance, and every job it holds, alive until a full collection.
        self._model_parts = model_parts

    @property
    def _model(self) -> SharedEstimates:
        return self._model_parts or self

    def estimate(
        self,
        model: ModelSpec,
        artifact: ArtifactSpec,
        runtime: RuntimeSpec,
        hardware: HardwareSpec,
        plan: Plan,
    ) -> Estimate:
        job, largest = self._job(Serving(model, artifact, runtime, hardware, plan))
        at_load = largest_at(job, largest, plan.concurrency)
        return _estimate(job_at(job, plan.context, plan.concurrency), at_load)

    def size(
        self,
        model: ModelSpec,
        artifact: ArtifactSpec,
        runtime: RuntimeSpec,
        hardware: HardwareSpec,
        plan: Plan,
    ) -> Sizing:
        job, largest = self._job(Serving(model, artifact, runtime, hardware, plan))
        return Sizing(job, plan.context, plan.concurrency, largest)

    def fits(
        self,
        model: ModelSpec,
        artifact: ArtifactSpec,
        runtime: RuntimeSpec,
        hardware: HardwareSpec,
        plan: Plan,
    ) -> bool:
        """`size(...).memory.fits`, without the largest context or the breakdown."""
        job, _ = self._job(Serving(model, artifact, runtime, hardware, plan))
        return fits_at(job, plan.context, plan.concurrency)

    def offload(
        self,
        model: ModelSpec,
        artifact: ArtifactSpec,
        runtime: RuntimeSpec,
        hardware: HardwareSpec,
        plan: Plan,
    ) -> OffloadPlan | None:
        """The estimator's `offload`, from the shared job."""
        job, _ = self._job(Serving(model, artifact, runtime, hardware, plan))
        return _offload(job_at(job, plan.context, plan.concurrency))

    def _job(self, serving: Serving) -> tuple[Job, dict[int, int | None]]:
        """The job of the plan at its first context and concurrency (the callers work out
        the plan's own from it), and its largest fitting contexts by concurrency, as far as
        they have been worked out (see `largest_at`)."""
        model, artifact, runtime, hardware, plan = serving
        if plan.context < 1 or plan.concurrency < 1:
            # Refused by the checks, in their order (a bad model is named before the
            # context), so never shared.
            return _prepare(serving), {}
        key = (
            id(model),
            id(artifact),
            id(runtime),
            id(hardware),
            plan.kv_dtype,
            plan.prefill_tokens,
            plan.tensor_parallel,
            plan.cuda_graphs,
            plan.memory_fraction,
        )
        found = self._jobs.get(key)
        if found is None:
            self._keep(model, artifact, runtime, hardware)
            self._model._keep(model, artifact, runtime)
            # Every check but the context's and the concurrency's reads only what the key
            # holds: a plan that fails them fails at every context and concurrency.
            try:
                prepared: Job | EstimateError = self._prepare(serving)
            except EstimateError as error:
                prepared = error.with_traceback(None)
            found = self._jobs[key] = (prepared, {})
        job, largest_by_concurrency = found
        if isinstance(job, EstimateError):
            raise _again(job)
        return job, largest_by_concurrency

    def _keep(self, *specs: object) -> None:
        for spec in specs:
            self._specs[id(spec)] = spec

    def _prepare(self, serving: Serving) -> Job:
        """The estimator's `_prepare`, in the same order, with the parts of one model, one
        hardware configuration or one model file worked out once."""
        model, artifact, runtime, hardware, _plan = serving
        shared = self._model  # what depends on no hardware: shared by every card
        kv = shared._part(("model", id(model)), lambda: _checked(check_model, model, kv_basis))
        usable = self._part(
            ("hardware", id(hardware)), lambda: _checked(check_hardware, hardware, _usable)
        )
        setup = resolve_checked_setup(serving)
        key = (
            id(model),
            id(artifact),
            id(runtime),
            setup.kv_dtype,
            setup.prefill_tokens,
            setup.tensor_parallel,
            setup.layer_split,
        )
        parts = shared._part(key, lambda: route_parts(model, artifact, runtime, setup))
        return _job_for(hardware, setup, parts, kv, usable)

    def _part(self, key: tuple, work: Callable[[], T]) -> T:
        found = self._parts.get(key)
        if found is None:
            try:
                found = work()
            except EstimateError as error:
                found = error.with_traceback(None)
            self._parts[key] = found
        if isinstance(found, EstimateError):
            raise _again(found)
        return found


def _again(error: EstimateError) -> EstimateError:
    """A remembered refusal, to raise once more. A new error each time: raising the kept
    one would hang this raise's frames (and through them this instance) on it, a cycle
    that only the collector's full pass could free."""
    again = BaseException.__new__(type(error), *error.args)  # its kind kept, not re-made
    again.__dict__.update(error.__dict__)
    return again


def _checked(check: Callable[[T], None], spec: T, part: Callable[[T], object]):
    check(spec)
    return part(spec)
