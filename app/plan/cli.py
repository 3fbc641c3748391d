"""`servebook plan`: the plan for a load, as `POST /api/plan` answers it."""

import json
import sys

import click

from app.config import get_settings
from app.db import session_scope


@click.command("plan")
@click.option("--model", "model_slug", required=True, help="A catalog model slug.")
@click.option("--users", type=int, required=True, help="Concurrent requests to serve.")
@click.option("--min-decode", type=float, required=True, help="Each request's least tok/s.")
@click.option("--max-ttft-ms", type=float, default=None, help="First token within (ms).")
@click.option("--prompt-tokens", type=int, default=None)
@click.option("--output-tokens", type=int, default=None)
@click.option("--hardware", "hardware", multiple=True, help="A catalog slug to weigh (repeatable).")
@click.option("--gpu", "gpus", multiple=True, help='A card as "NAME" or "NAME:COUNT".')
@click.option("--price", type=float, default=None, help="Price per GPU-hour, for all.")
@click.option("--profile", "profile_slug", default="balanced", show_default=True)
@click.option("--runtime", default=None, help="Plan on this runtime only (vllm, sglang, ...).")
@click.option(
    "--include-experimental",
    is_flag=True,
    help="An unverified model file and runtime may be named cheapest or smallest.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def plan(
    model_slug: str,
    users: int,
    min_decode: float,
    max_ttft_ms: float | None,
    prompt_tokens: int | None,
    output_tokens: int | None,
    hardware: tuple[str, ...],
    gpus: tuple[str, ...],
    price: float | None,
    profile_slug: str,
    runtime: str | None,
    include_experimental: bool,
    as_json: bool,
) -> None:
    """Which hardware serves USERS concurrent requests at a speed and first-token target,
    with how many replicas, which command and at what cost (every configuration that fits
    when none is named)."""
    from pydantic import ValidationError

    from app.asking.errors import dotted_errors
    from app.plan.presenters import plan_out
    from app.plan.schemas import PlanRequest
    from app.plan.service import PlanRefused, plan_load
    from app.plan.text import format_plan
    from app.resolve import RecipeService

    body: dict = {
        "model": model_slug,
        "users": users,
        "min_decode_tokens_per_s": min_decode,
        "max_ttft_ms": max_ttft_ms,
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "price_per_gpu_hour": price,
        "profile": profile_slug,
        "runtime": runtime,
        "include_experimental": include_experimental or None,
    }
    named = [*hardware, *(_card(gpu) for gpu in gpus)]
    if named:
        body["hardware"] = named
    try:
        request = PlanRequest.model_validate({k: v for k, v in body.items() if v is not None})
    except ValidationError as error:
        raise click.ClickException(_problems(dotted_errors(error))) from error
    settings = get_settings()
    with session_scope(settings) as session:
        try:
            out = plan_out(plan_load(RecipeService(session), request, settings))
        except PlanRefused as refusal:
            raise click.ClickException(_problems(refusal.errors)) from refusal
    if as_json:
        json.dump(out, sys.stdout, indent=2)
        click.echo()
        return
    click.echo(format_plan(out))


def _card(text: str) -> dict:
    name, _, count = text.rpartition(":")
    if name and count.isdigit():
        return {"gpu": name, "count": int(count)}
    return {"gpu": text}


def _problems(errors: dict[str, str]) -> str:
    return "; ".join(f"{field}: {message}" for field, message in errors.items())
