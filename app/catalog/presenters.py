"""Shape catalog rows for the JSON API."""

from fastapi import Request

from app.catalog.schemas import ModelOut
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
