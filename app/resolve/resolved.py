"""What one resolution answers: a resolved recipe and the labels of its verdicts."""

import msgspec

from app.estimate import Estimate, Verdict
from app.estimate.cautions import speculative_caution
from app.estimate.messages import Message
from app.estimate.speed.load import LoadEstimate, RequestShape
from app.models import Hardware, LlmModel, Profile
from app.resolve.applied import AppliedValues
from app.resolve.commands import Command
from app.resolve.figures import Check, ContextMedian, MemoryFigure, SpeedFigure
from app.resolve.inputs import RouteChoice
from app.resolve.other_routes import RouteMeasured
from app.resolve.verification import PairEvidence

RUNNABLE = (Verdict.FITS, Verdict.FITS_REDUCED_CONTEXT, Verdict.FITS_WITH_OFFLOAD)
VERIFIED = "verified"
PENDING = "verification_pending"
VERDICT_LABELS = {
    Verdict.FITS: "fits",
    Verdict.FITS_REDUCED_CONTEXT: "fits with reduced context",
    Verdict.EXPERIMENTAL: "experimental",
    Verdict.FITS_WITH_OFFLOAD: "fits with offload to system memory",
    Verdict.EXCEEDS_MEMORY: "exceeds memory (unsupported)",
    Verdict.CANNOT_ESTIMATE: "cannot estimate",
}
# Verdicts that answer with no route to run: at most the estimated memory, never a command.
UNSUPPORTED = (Verdict.EXCEEDS_MEMORY, Verdict.CANNOT_ESTIMATE)


class ContextStep(msgspec.Struct, frozen=True):
    """One step of raising the context after the start works."""

    context: int
    required_gb: float
    fits: bool


class ResolvedRecipe(msgspec.Struct, frozen=True):
    """Everything any surface shows about one model on one hardware under one profile."""

    model: LlmModel
    hardware: Hardware
    profile: Profile
    verdict: Verdict
    reason: tuple[Message, ...]  # one message per clause
    route: RouteChoice | None
    pair: PairEvidence | None
    alternatives: tuple[str, ...]
    applied: AppliedValues | None
    estimate: Estimate | None  # the served plan's breakdown (the closest route when exceeding)
    memory: MemoryFigure | None
    start_context: int
    max_context: int | None  # the largest context one request fits, at the profile's values
    context_steps: tuple[ContextStep, ...]
    token_generation: SpeedFigure | None
    status: str
    commands: tuple[Command, ...]
    measured: tuple[ContextMedian, ...]
    decode_check: Check | None
    memory_check: Check | None
    warnings: tuple[Message, ...]
    # The step model's figures for one request and at the profile's own concurrency, at the
    # request shape asked (its blank lengths at the stated defaults); None where speed is
    # unknown.
    single: LoadEstimate | None = None
    load: LoadEstimate | None = None
    # Accepted figures of this profile here through other routes (app/resolve/other_routes).
    other_routes: tuple[RouteMeasured, ...] = ()
    # The requests the speed figures are for, blank lengths filled (`RequestShape.filled`).
    shape: RequestShape = RequestShape()

    @property
    def verdict_label(self) -> str:
        return VERDICT_LABELS[self.verdict]

    @property
    def runnable(self) -> bool:
        return self.verdict in RUNNABLE

    @property
    def estimate_only(self) -> bool:
        return not self.commands

    @property
    def unsupported(self) -> bool:
        """Exceeds memory, or cannot be estimated: the page shows the estimated memory, if
        any, and the reason, and nothing else."""
        return self.verdict in UNSUPPORTED

    @property
    def primary_command(self) -> Command | None:
        return self.commands[0] if self.commands else None


def with_speculative_caution(
    warnings: tuple[Message, ...], model: LlmModel, applied: AppliedValues
) -> tuple[Message, ...]:
    """The estimate's warnings, and the caution that MTP heads or speculative decoding can
    beat the bandwidth bound the speed figure rests on."""
    caution = speculative_caution(model.mtp_layers or 0, applied.speculative_decoding)
    return (*warnings, caution) if caution else warnings
