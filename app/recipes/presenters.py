"""JSON shape of a profile detail page."""

from dataclasses import asdict
from typing import Any

from fastapi import Request

from app.estimate import Quantity
from app.recipes.service import ProfileDetail
from app.records.evidence import evidence_out


def quantity_out(quantity: Quantity) -> dict[str, Any]:
    return {"gb": round(quantity.value, 2), "basis": quantity.basis.value, "note": quantity.note}


def detail_out(request: Request, detail: ProfileDetail) -> dict[str, Any]:
    estimate = detail.estimate
    memory = None
    if estimate is not None:
        m = estimate.memory
        memory = {
            "weights": quantity_out(m.weights),
            "kv_cache": quantity_out(m.kv_cache),
            "prefill_workspace": quantity_out(m.prefill_workspace),
            "runtime_reserve": quantity_out(m.runtime_reserve),
            "usable": quantity_out(m.usable),
            "required_gb_per_gpu": round(m.required, 2),
            "headroom_gb_per_gpu": round(m.headroom, 2),
            "tensor_parallel": estimate.tensor_parallel,
        }
    route = detail.route
    return {
        "model": detail.model.slug,
        "hardware": detail.hardware.slug,
        "profile": detail.profile.slug,
        "verdict": detail.row.verdict.value,
        "reason": detail.reason,
        "artifact": route.artifact.slug if route else None,
        "runtime": route.runtime.slug if route else None,
        "verified_pair": bool(route and route.verified),
        "memory": memory,
        "applied_values": detail.applied.as_json() if detail.applied else None,
        "commands": [c.as_json() for c in detail.commands],
        "estimate_only": detail.estimate_only,
        "smoke_test": detail.smoke_test() if not detail.estimate_only else None,
        "memory_check": detail.memory_check(),
        "stop_conditions": detail.profile.stop_conditions,
        "measurement_order": detail.profile.measurement_order,
        "warnings": detail.warnings,
        "record_url": str(
            request.url_for("records:new").include_query_params(**record_prefill(detail))
        ),
        "token_generation": asdict(detail.row.token_generation)
        if detail.row.token_generation
        else None,
        "records": evidence_out(request, detail.records),
    }


def benchmark_prefill(detail: ProfileDetail) -> dict[str, str]:
    """Query parameters that pre-fill the benchmark page for this recipe's server."""
    params = record_prefill(detail)
    params.update(base_url="http://127.0.0.1:8000/v1", served_model=detail.served_model_name)
    primary = next((c for c in detail.commands if c.runtime == params.get("runtime")), None)
    if primary is not None:
        params["command"] = primary.shell
    return params


def record_prefill(detail: ProfileDetail) -> dict[str, str]:
    """Query parameters that pre-fill the record form from this page."""
    params = {
        "model": detail.model.slug,
        "hardware": detail.hardware.slug,
        "profile": detail.profile.slug,
    }
    if detail.route:
        params.update(artifact=detail.route.artifact.slug, runtime=detail.route.runtime.slug)
    return params
