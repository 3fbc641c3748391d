"""JSON shapes of resolved recipes: the fit row, the detail page and the estimate.

Each reads the figures a `ResolvedRecipe` already holds; none computes a number.
"""

import json
import shlex
from typing import Any

import msgspec
from fastapi import Request

from app.asking.described import KV_UNKNOWN_WARNING, ModelDescription
from app.asking.load_out import advice_out, asked_load_out, load_out, profile_line
from app.bench.stages.smoke import SMOKE_MAX_TOKENS, SMOKE_PROMPT
from app.estimate import Quantity
from app.estimate.inputs.hf_config import ModelShape
from app.estimate.inputs.specs import UNKNOWN_ATTENTION
from app.estimate.messages import Message
from app.i18n.messages import english, messages_json
from app.recipes.assumptions import assumed_out, assumptions
from app.recipes.knobs import knob_applies, knob_rows
from app.recipes.schemas import FitRowOut, LoadLineOut, MemoryOut, ProfileStatusOut, RangeOut
from app.resolve import FitRow, ResolvedRecipe
from app.resolve.advice import recipe_advice
from app.resolve.commands import HOST, PORT, shared_setup_message


def speed_out(recipe: ResolvedRecipe) -> dict[str, Any] | None:
    speed = recipe.token_generation
    return speed.as_json() if speed else None


def route_out(recipe: ResolvedRecipe) -> dict[str, Any]:
    route = recipe.route
    return {
        "artifact": route.artifact.slug if route else None,
        "runtime": route.runtime.slug if route else None,
        "verified_pair": bool(route and route.verified),
        "verified_by": verified_by(recipe),
    }


def verified_by(recipe: ResolvedRecipe) -> dict[str, Any] | None:
    pair = recipe.pair
    if pair is None or not pair.verified:
        return None
    return {
        "source": pair.source,
        "official_url": pair.official_url,
        "record_ids": pair.latest_record_ids,  # the newest few
        "records": len(pair.record_ids),
        "runtime_versions": pair.version_range(),
    }


def memory_out(recipe: ResolvedRecipe) -> dict[str, Any] | None:
    memory = recipe.memory
    if memory is None:
        return None
    out: dict[str, Any] = {
        "required_gb_per_gpu": memory.required_gb,
        "usable_gb_per_gpu": memory.usable_gb,
        "headroom_gb_per_gpu": memory.headroom_gb,
        "basis": memory.basis.value,
        "note": english(memory.note),
        "note_messages": messages_json(memory.note),
        "estimated_gb_per_gpu": memory.estimated_gb,
    }
    estimate = recipe.estimate
    if estimate is not None:
        m = estimate.memory
        out["breakdown"] = {
            "weights": quantity_out(m.weights),
            "kv_cache": quantity_out(m.kv_cache),
            "prefill_workspace": quantity_out(m.prefill_workspace),
            "runtime_reserve": quantity_out(m.runtime_reserve),
        }
        out["tensor_parallel"] = estimate.tensor_parallel
        out["estimate_basis"] = estimate.basis.value
    return out


def quantity_out(quantity: Quantity) -> dict[str, Any]:
    return {"gb": round(quantity.value, 2), "basis": quantity.basis.value, **note_out(quantity)}


def note_out(quantity: Quantity) -> dict[str, Any]:
    """A basis note in English, as ever, and as codes with their figures beside it."""
    return {"note": english(quantity.note), "note_messages": messages_json(quantity.note)}


def recipe_out(recipe: ResolvedRecipe) -> dict[str, Any]:
    """Everything the resolution says, in the shape every JSON surface starts from."""
    return {
        "model": recipe.model.slug,
        "hardware": recipe.hardware.slug,
        "hardware_name": recipe.hardware.name,
        "profile": recipe.profile.slug,
        "verdict": recipe.verdict.value,
        "verdict_label": recipe.verdict_label,
        "reason": english(recipe.reason),
        "reason_messages": messages_json(recipe.reason),
        **route_out(recipe),
        "alternative_runtimes": list(recipe.alternatives),
        "status": recipe.status,
        "start_context": recipe.start_context,
        "max_context": recipe.max_context,
        "context_steps": [msgspec.structs.asdict(step) for step in recipe.context_steps],
        "memory": memory_out(recipe),
        "token_generation": speed_out(recipe),
        "applied_values": recipe.applied.as_json() if recipe.applied else None,
        "knobs": [row.as_json() for row in knob_rows(recipe)],
        "commands": [c.as_json() for c in recipe.commands],
        "estimate_only": recipe.estimate_only,
        "can_benchmark": not recipe.unsupported,
        "measured": [msgspec.structs.asdict(point) for point in recipe.measured],
        "single_request": load_out(recipe.single, recipe.token_generation)
        if recipe.single
        else None,
        "at_profile_concurrency": load_out(recipe.load, recipe.token_generation)
        if recipe.load
        else None,
        "other_routes": [route.as_json() for route in recipe.other_routes],
        "estimate_vs_measured": {
            "decode": recipe.decode_check.as_json() if recipe.decode_check else None,
            "memory": recipe.memory_check.as_json() if recipe.memory_check else None,
        },
        **warnings_out(recipe.warnings),
    }


def warnings_out(warnings: tuple[Message, ...]) -> dict[str, Any]:
    """Warnings in English, as ever, and as codes with their figures beside them."""
    return {
        "warnings": [english(warning) for warning in warnings],
        "warning_messages": messages_json(warnings),
    }


def estimate_out(
    recipe: ResolvedRecipe,
    description: ModelDescription | None = None,
    hardware_name: str | None = None,
    concurrency: int | None = None,
) -> dict[str, Any]:
    """The flat shape of `servebook estimate --json` and `POST /api/estimate`.

    The speed figures at the top are for the concurrency asked (one request when none is):
    per-request decode, total throughput, first token, where the time goes and what the
    range held; a measured or reported figure stands for one request's decode.

    A model known only by its parameter counts has no KV size: `kv_cache` says "unknown",
    and the KV figures and the largest context are null rather than a silent zero.
    """
    estimate, memory, speed = recipe.estimate, recipe.memory, recipe.token_generation
    kv_known = recipe.model.attention != UNKNOWN_ATTENTION
    out = {
        **recipe_out(recipe),
        "context": recipe.start_context,
        "required_gb_per_gpu": memory.required_gb if memory else None,
        "usable_gb_per_gpu": memory.usable_gb
        if memory
        else round(recipe.hardware.usable_gb_per_gpu, 1),
        "headroom_gb_per_gpu": memory.headroom_gb if memory else None,
        "weights_gb": round(estimate.weights_gb.value, 2) if estimate else None,
        "kv_bytes_per_token": estimate.kv_bytes_per_token if estimate and kv_known else None,
        "kv_cache": "estimated" if kv_known else "unknown",
        "tensor_parallel": estimate.tensor_parallel if estimate else None,
        "decode_tokens_per_s": speed.as_json() if speed else None,
        **asked_load_out(recipe, concurrency),
        "basis": estimate.basis.value if estimate else None,
        **assumed_out(assumptions(recipe, description)),
        "described": described_out(description),
    }
    if not kv_known:
        out["max_context"] = None
        out["context_steps"] = []
        out.update(warnings_out((KV_UNKNOWN_WARNING, *recipe.warnings)))
    if hardware_name:
        out["hardware_name"] = hardware_name
    return out


def described_out(description: ModelDescription | None) -> dict[str, Any] | None:
    """What a described model was read as: its source, counts, quant and shape."""
    if description is None:
        return None
    quant = description.quant
    out: dict[str, Any] = {
        "name": description.name,
        "name_message": description.name_words.as_json() if description.name_words else None,
        "source": description.source,
        "params_total_b": round(description.params_total_b, 3),
        "params_active_b": round(description.params_active_b, 3),
        "is_moe": description.moe,
        "quant": quant.name,
        "quant_bits": quant.bits,
        "quant_source": quant.source,
        "weights": _bytes_out(description.weights_quantity()),
    }
    shape = description.shape
    if shape is not None:
        out["shape"] = shape_fields(shape)
    return out


def _bytes_out(quantity: Quantity) -> dict[str, Any]:
    gb = round(quantity.value / 1e9, 2)
    return {"gb": gb, "basis": quantity.basis.value, **note_out(quantity)}


def shape_fields(shape: ModelShape) -> dict[str, Any]:
    """The shape fields that size the KV cache and the speed: enough to carry in a URL."""
    fields = {
        "attention": shape.attention,
        "num_layers": shape.num_layers,
        "num_kv_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim,
        "native_context": shape.native_context,
        "kv_lora_rank": shape.kv_lora_rank,
        "qk_rope_head_dim": shape.qk_rope_head_dim,
        "sliding_window": shape.sliding_window,
        "sliding_window_layers": shape.sliding_window_layers,
        "full_attention_layers": shape.full_attention_layers,
        "linear_state_bytes_per_seq": shape.linear_state_bytes_per_seq,
        "experts": shape.experts,
        "active_experts": shape.active_experts,
    }
    return {key: value for key, value in fields.items() if value not in (None, 0)}


def detail_url(request: Request, recipe: ResolvedRecipe, profile_slug: str | None = None) -> str:
    return str(
        request.url_for(
            "recipes:detail",
            model=recipe.model.slug,
            hardware=recipe.hardware.slug,
            profile=profile_slug or recipe.profile.slug,
        )
    )


def load_line_out(recipe: ResolvedRecipe) -> LoadLineOut | None:
    """The fit table's line for a profile at its concurrency: the detail JSON's own figures."""
    line = profile_line(recipe)
    return LoadLineOut.model_validate(line) if line else None


def fit_row_out(request: Request, row: FitRow) -> FitRowOut:
    shown = row.shown
    hardware = row.hardware
    memory = shown.memory
    route = shown.route if not shown.unsupported else None
    return FitRowOut(
        hardware=hardware.slug,
        hardware_name=hardware.name,
        platform=hardware.platform,
        usable_memory_gb=hardware.usable_memory_gb,
        gpu_count=hardware.gpu_count,
        profile=shown.profile.slug,
        verdict=shown.verdict,
        verdict_label=shown.verdict_label,
        reason=english(shown.reason),
        reason_messages=messages_json(shown.reason),
        recommended_runtime=route.runtime.slug if route else None,
        recommended_artifact=route.artifact.slug if route else None,
        verified_pair=bool(route and route.verified),
        alternative_runtimes=list(shown.alternatives),
        profile_status=shown.status,  # type: ignore[arg-type]
        profiles=[
            ProfileStatusOut(
                slug=r.profile.slug,
                name=r.profile.name,
                status=r.status,  # type: ignore[arg-type]
                url=detail_url(request, r),
                token_generation=RangeOut(**r.token_generation.as_json())
                if r.token_generation
                else None,
                at_profile_concurrency=load_line_out(r),
            )
            for r in row.recipes
        ],
        start_context=shown.start_context,
        max_context=shown.max_context,
        token_generation=RangeOut(**shown.token_generation.as_json())
        if shown.token_generation
        else None,
        at_profile_concurrency=load_line_out(shown),
        memory=MemoryOut(
            required_gb_per_gpu=memory.required_gb if memory else None,
            usable_gb_per_gpu=memory.usable_gb if memory else round(hardware.usable_gb_per_gpu, 1),
            headroom_gb_per_gpu=memory.headroom_gb if memory else None,
            basis=memory.basis.value if memory else None,
        ),
    )


def served_model_name(recipe: ResolvedRecipe) -> str:
    route = recipe.route
    if route is None:
        return recipe.model.hf_repo
    if route.runtime.slug == "ollama":
        return f"hf.co/{route.artifact.repo}:{route.artifact.quant.upper()}"
    return route.artifact.repo


def smoke_test(recipe: ResolvedRecipe) -> str:
    """A streaming request that proves the server answers and streams."""
    body = {
        "model": served_model_name(recipe),
        "messages": [{"role": "user", "content": SMOKE_PROMPT}],
        "max_tokens": SMOKE_MAX_TOKENS,
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


MEMORY_CHECKS = {
    "cuda": "nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv",
    "rocm": "rocm-smi --showmeminfo vram",
    "metal": "sysctl iogpu.wired_limit_mb && memory_pressure",
}


def memory_check(recipe: ResolvedRecipe) -> str:
    return MEMORY_CHECKS.get(recipe.hardware.platform, "free -g")


def exposure_note(recipe: ResolvedRecipe) -> Message | None:
    return shared_setup_message(recipe.route.runtime) if recipe.route else None


def record_prefill(recipe: ResolvedRecipe) -> dict[str, str]:
    """Query parameters that pre-fill the record form from this page: what runs, the
    command as the page gives it, and the values it applies."""
    params = {
        "model": recipe.model.slug,
        "hardware": recipe.hardware.slug,
        "profile": recipe.profile.slug,
    }
    if recipe.route:
        params.update(artifact=recipe.route.artifact.slug, runtime=recipe.route.runtime.slug)
    primary = recipe.primary_command
    if primary is not None:
        params["command"] = primary.shell
    if recipe.applied is not None and not recipe.estimate_only:
        applied = recipe.applied.as_json()
        shown = {k: v for k, v in applied.items() if knob_applies(k, recipe.hardware.platform)}
        params["applied_values"] = applied_values_text(shown)
    return params


def applied_values_text(applied: dict[str, Any]) -> str:
    """The record form's `name = value` lines for the knobs the command sets (those it leaves
    to the runtime are not applied values)."""
    skipped = {"why", "why_messages", "left_at_default", *applied.get("left_at_default", ())}
    return "\n".join(
        f"{name} = {value if isinstance(value, str) else json.dumps(value)}"
        for name, value in applied.items()
        if name not in skipped and value is not None
    )


def benchmark_prefill(recipe: ResolvedRecipe) -> dict[str, str]:
    """Query parameters that pre-fill the benchmark page for this recipe's server."""
    params = record_prefill(recipe)
    params.pop("applied_values", None)
    params.update(base_url=f"http://{HOST}:{PORT}/v1", served_model=served_model_name(recipe))
    return params


def detail_out(request: Request, recipe: ResolvedRecipe, records: dict | None) -> dict[str, Any]:
    """The detail page's content: the recipe, the page's checks and the records behind it."""
    runnable = not recipe.estimate_only
    return {
        **recipe_out(recipe),
        "smoke_test": smoke_test(recipe) if runnable else None,
        "memory_check": memory_check(recipe),
        "stop_conditions": recipe.profile.stop_conditions,
        "measurement_order": recipe.profile.measurement_order,
        "record_url": str(
            request.url_for("records:new").include_query_params(**record_prefill(recipe))
        ),
        "records": records,
        "advice": advice_out(recipe_advice(recipe)),
    }
