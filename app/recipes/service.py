"""Profile detail: one model x hardware x profile, with commands only for verified pairs."""

import json
import shlex
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from app.catalog.service import CatalogService, FitRow, RouteChoice, fit_row
from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.errors import NotFound
from app.estimate import Estimate, EstimateError, Verdict, estimate
from app.models import Hardware, LlmModel, Profile
from app.recipes import commands as command_builders
from app.recipes.applied import AppliedValues, resolve
from app.recipes.commands import HOST, PORT, Command
from app.recipes.verification import PairEvidence
from app.records.evidence import DetailEvidence, load_detail_evidence

RUNNABLE = (Verdict.FITS, Verdict.FITS_REDUCED_CONTEXT)


@dataclass
class ProfileDetail:
    model: LlmModel
    hardware: Hardware
    profile: Profile
    profiles: list[Profile]
    row: FitRow
    applied: AppliedValues | None
    estimate: Estimate | None
    commands: list[Command]
    evidence: PairEvidence | None
    reason: str
    warnings: list[str] = field(default_factory=list)
    records: DetailEvidence | None = None

    @property
    def route(self) -> RouteChoice | None:
        return self.row.route

    @property
    def estimate_only(self) -> bool:
        return not self.commands

    @property
    def served_model_name(self) -> str:
        route = self.route
        if route is None:
            return self.model.hf_repo
        if route.runtime.slug == "ollama":
            return f"hf.co/{route.artifact.repo}:{route.artifact.quant.upper()}"
        return route.artifact.repo

    def smoke_test(self) -> str:
        """A streaming request that proves the server answers and streams."""
        body = {
            "model": self.served_model_name,
            "messages": [{"role": "user", "content": "Say hello in five words."}],
            "max_tokens": 32,
            "stream": True,
        }
        return shlex.join(
            [
                "curl",
                "-N",
                f"http://{HOST}:{PORT}/v1/chat/completions",
                "-H",
                "Content-Type: application/json",
                "-d",
                json.dumps(body),
            ]
        )

    def memory_check(self) -> str:
        platform = self.hardware.platform
        if platform == "cuda":
            return "nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv"
        if platform == "rocm":
            return "rocm-smi --showmeminfo vram"
        if platform == "metal":
            return "sysctl iogpu.wired_limit_mb && memory_pressure"
        return "free -g"

    def shared_setup(self) -> str | None:
        return command_builders.shared_setup(self.route.runtime) if self.route else None


class DetailService:
    def __init__(self, session: Session) -> None:
        self.catalog = CatalogService(session)

    def load(self, model_slug: str, hardware_slug: str, profile_slug: str) -> ProfileDetail:
        model = self.catalog.get_model(model_slug)
        hardware = self.catalog.repo.get_hardware(hardware_slug)
        if hardware is None:
            raise NotFound(f"No hardware '{hardware_slug}' in the catalog.")
        evidence = self.catalog.load_evidence(model)
        profile = next((p for p in evidence.profiles if p.slug == profile_slug), None)
        if profile is None:
            known = ", ".join(p.slug for p in evidence.profiles)
            raise NotFound(f"No profile '{profile_slug}'. Profiles: {known}.")
        row = fit_row(evidence, hardware, profile)
        detail = ProfileDetail(
            model,
            hardware,
            profile,
            list(evidence.profiles),
            row,
            None,
            None,
            [],
            None,
            row.assessment.reason,
        )
        if row.route is None:
            return attach_records(self.catalog.repo.session, detail)
        balanced = next((p for p in evidence.profiles if p.slug == "balanced"), profile)
        detail.evidence = evidence.verified.evidence(row.route.artifact.id, row.route.runtime.id)
        self.apply_route(detail, balanced, evidence.runtimes, evidence.verified)
        return attach_records(self.catalog.repo.session, detail)

    def apply_route(self, detail: ProfileDetail, balanced: Profile, runtimes, verified) -> None:
        route = detail.route
        assert route is not None
        detail.applied = resolve(
            detail.profile, detail.model, route.artifact, route.runtime, detail.hardware
        )
        detail.estimate = estimate_at(detail, detail.applied)
        if detail.estimate is not None:
            detail.warnings = list(detail.estimate.warnings)
        if detail.row.verdict not in RUNNABLE:
            detail.reason = not_runnable_reason(detail)
            return
        for runtime in runtimes:
            if not verified.is_verified(route.artifact.id, runtime.id):
                continue
            if runtime.slug not in (route.runtime.slug, *detail.row.alternatives):
                continue
            values = resolve(detail.profile, detail.model, route.artifact, runtime, detail.hardware)
            defaults = resolve(balanced, detail.model, route.artifact, runtime, detail.hardware)
            command = command_builders.build_command(runtime, route.artifact, values, defaults)
            if command is not None:
                detail.commands.append(command)


def estimate_at(detail: ProfileDetail, applied: AppliedValues) -> Estimate | None:
    route = detail.route
    assert route is not None
    try:
        return estimate(
            model_spec(detail.model),
            artifact_spec(route.artifact),
            runtime_spec(route.runtime),
            hardware_spec(detail.hardware),
            applied.plan(),
        )
    except EstimateError:
        return None


def not_runnable_reason(detail: ProfileDetail) -> str:
    route = detail.route
    assert route is not None
    if detail.row.verdict == Verdict.EXPERIMENTAL:
        return (
            f"{route.artifact.name} with {route.runtime.name} is not verified yet: no "
            "official source and no accepted reproduction record. The memory estimate is "
            "shown; submit a record once you have tried it."
        )
    return detail.row.assessment.reason


def attach_records(session: Session, detail: ProfileDetail) -> ProfileDetail:
    """The accepted evidence behind this page: records, last known-good, estimate error."""
    route = (detail.route.artifact, detail.route.runtime) if detail.route else None
    context = detail.applied.context if detail.applied else None
    detail.records = load_detail_evidence(
        session, detail.model, detail.hardware, detail.profile, route, detail.estimate, context
    )
    return detail
