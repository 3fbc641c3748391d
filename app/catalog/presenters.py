"""Shape fit rows for the JSON API (the HTML templates read the same rows)."""

from fastapi import Request

from app.catalog.schemas import (
    FitRowOut,
    MemoryOut,
    ModelOut,
    ProfileStatusOut,
    RangeOut,
)
from app.catalog.service import FitRow
from app.estimate import Verdict
from app.models import LlmModel


def model_out(request: Request, model: LlmModel) -> ModelOut:
    return ModelOut(
        slug=model.slug,
        name=model.name,
        hf_repo=model.hf_repo,
        publisher=model.publisher,
        family=model.family,
        is_moe=model.is_moe,
        params_total_b=model.params_total_b,
        params_active_b=model.params_active_b,
        native_context=model.native_context,
        attention=model.attention,
        url=str(request.url_for("catalog:model", slug=model.slug)),
        fit_url=str(request.url_for("api:model_fit", slug=model.slug)),
    )


def detail_url(request: Request, model: LlmModel, row: FitRow, profile_slug: str) -> str:
    return str(
        request.url_for(
            "recipes:detail", model=model.slug, hardware=row.hardware.slug, profile=profile_slug
        )
    )


def fit_row_out(request: Request, model: LlmModel, row: FitRow) -> FitRowOut:
    estimate = row.estimate
    speed = row.token_generation
    recommended = row.route if row.verdict != Verdict.EXCEEDS_MEMORY else None
    return FitRowOut(
        hardware=row.hardware.slug,
        hardware_name=row.hardware.name,
        platform=row.hardware.platform,
        usable_memory_gb=row.hardware.usable_memory_gb,
        gpu_count=row.hardware.gpu_count,
        verdict=row.verdict,
        verdict_label=row.verdict_label,
        reason=row.assessment.reason,
        recommended_runtime=recommended.runtime.slug if recommended else None,
        recommended_artifact=recommended.artifact.slug if recommended else None,
        alternative_runtimes=list(row.alternatives),
        profile_status=row.profile_status,
        profiles=[
            ProfileStatusOut(
                slug=p.slug,
                name=p.name,
                status=status,
                url=detail_url(request, model, row, p.slug),
            )
            for p, status in row.profile_statuses
        ],
        start_context=row.start_context,
        max_context=row.assessment.max_context,
        token_generation=RangeOut(**speed.__dict__) if speed else None,
        memory=MemoryOut(
            required_gb_per_gpu=round(estimate.memory.required, 2) if estimate else None,
            usable_gb_per_gpu=round(row.hardware.usable_gb_per_gpu, 2),
            basis=estimate.basis.value if estimate else None,
        ),
    )
