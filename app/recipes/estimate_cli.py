"""`servebook estimate`: one question asked from the terminal (a catalog model or a
described one, on catalog hardware or a card by name), answered as the API answers it."""

import json
import sys
from pathlib import Path

import click

from app.asking.custom import INTERCONNECTS, PLATFORMS
from app.config import get_settings
from app.db import session_scope
from app.estimate.speed.load import MAX_CONCURRENCY

FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command()
@click.option("--model", "model_slug", default=None, help="A catalog model slug.")
@click.option("--hf-config", type=FILE, default=None, help="Describe the model: a config.json.")
@click.option("--gguf", "gguf_file", type=FILE, default=None, help="Describe it: a GGUF file.")
@click.option(
    "--safetensors-index", type=FILE, default=None, help="A model.safetensors.index.json."
)
@click.option("--repo", default=None, help="A Hub repository id (fetched and cached).")
@click.option("--params-b", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--active-params-b", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--quant", default=None, help="A quant name (Q4_K_M, FP8, AWQ, MLX-4BIT, ...).")
@click.option("--hardware", "hardware_slug", default=None, help="A catalog hardware slug.")
@click.option("--gpu", default=None, help='A card by name ("RTX 4090"); with --gpu-count.')
@click.option("--profile", "profile_slug", default="balanced", show_default=True)
@click.option("--artifact", "artifact_slug", default=None)
@click.option("--runtime", "runtime_slug", default=None)
@click.option("--context", type=click.IntRange(min=1), default=None)
@click.option(
    "--memory-gb-per-gpu",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Describe hardware instead of --hardware: memory per card (GB).",
)
@click.option(
    "--usable-memory-gb",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Usable memory over all cards (default 90% of the memory).",
)
@click.option(
    "--bandwidth-gb-s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Memory bandwidth per card (GB/s); without it no speed is estimated.",
)
@click.option("--gpu-count", type=click.IntRange(min=1, max=64), default=1, show_default=True)
@click.option("--platform", type=click.Choice(PLATFORMS), default="cuda", show_default=True)
@click.option("--interconnect", type=click.Choice(INTERCONNECTS), default="none", show_default=True)
@click.option("--unified-memory", is_flag=True, help="The GPU shares the machine's memory.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1, max=MAX_CONCURRENCY),
    default=None,
    help="Requests served at once: per-request decode, total throughput and first token.",
)
@click.option(
    "--prompt-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Each request's prompt; 1,024 when not given (the stated default request).",
)
@click.option(
    "--output-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Each request's output; 256 when not given.",
)
@click.option(
    "--ignore-evidence",
    is_flag=True,
    help="The estimator's figures only, even where records exist.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def estimate(
    model_slug: str | None,
    hf_config: Path | None,
    gguf_file: Path | None,
    safetensors_index: Path | None,
    repo: str | None,
    params_b: float | None,
    active_params_b: float | None,
    quant: str | None,
    hardware_slug: str | None,
    gpu: str | None,
    profile_slug: str,
    artifact_slug: str | None,
    runtime_slug: str | None,
    context: int | None,
    memory_gb_per_gpu: float | None,
    usable_memory_gb: float | None,
    bandwidth_gb_s: float | None,
    gpu_count: int,
    platform: str,
    interconnect: str,
    unified_memory: bool,
    concurrency: int | None,
    prompt_tokens: int | None,
    output_tokens: int | None,
    ignore_evidence: bool,
    as_json: bool,
) -> None:
    """Resolve a model's recipe on catalog or described hardware: fit, memory, speed.

    The figures are the fit table's and the detail page's own (one resolution).
    """
    from app.asking.ask import parse_request, run_estimate
    from app.errors import ServebookError
    from app.estimate import EstimateError
    from app.recipes.estimate_answer import answer_out
    from app.recipes.estimate_text import format_estimate
    from app.resolve import RecipeService

    if sum(x is not None for x in (hardware_slug, gpu, memory_gb_per_gpu)) != 1:
        raise click.UsageError(
            "give --hardware SLUG, --gpu NAME, or describe it with --memory-gb-per-gpu"
        )
    body: dict = {
        "model": model_body(
            model_slug,
            hf_config,
            safetensors_index,
            repo,
            params_b,
            active_params_b,
            quant,
            gguf_file,
        ),
        "hardware": {"gpu": gpu, "count": gpu_count} if gpu else hardware_slug or "custom",
        "memory_gb_per_gpu": memory_gb_per_gpu,
        "usable_memory_gb": usable_memory_gb,
        "bandwidth_gb_s_per_gpu": bandwidth_gb_s,
        "platform": platform,
        "interconnect": interconnect,
        "unified_memory": unified_memory,
        "profile": profile_slug,
        "artifact": artifact_slug,
        "runtime": runtime_slug,
        "context": context,
        "concurrency": concurrency,
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "evidence": "ignore" if ignore_evidence else None,
    }
    if not gpu:
        body["gpu_count"] = gpu_count
    settings = get_settings()
    with session_scope(settings) as session:
        try:
            description = None
            if gguf_file is not None:
                from app.asking.model_sources import from_gguf

                description = from_gguf(gguf_file)
            parsed = parse_request({k: v for k, v in body.items() if v is not None})
            if isinstance(parsed, dict):
                raise click.ClickException(problems(parsed))
            answer = run_estimate(RecipeService(session), parsed, settings, description)
            if not answer.result.ok:
                raise click.ClickException(problems(answer.result.errors))
            assert answer.result.recipe is not None
            out = answer_out(answer, parsed.concurrency)
        except EstimateError as error:
            raise click.ClickException(f"{error.field}: {error.message}") from error
        except ServebookError as error:
            raise click.ClickException(error.message) from error
    if as_json:
        json.dump(out, sys.stdout, indent=2)
        click.echo()
        return
    click.echo(format_estimate(out))


def model_body(
    slug: str | None,
    hf_config: Path | None,
    safetensors_index: Path | None,
    repo: str | None,
    params_b: float | None,
    active_params_b: float | None,
    quant: str | None,
    gguf_file: Path | None,
) -> object:
    """The request's model: a slug, or the one description given (a GGUF is read apart)."""
    given = [x for x in (slug, hf_config, safetensors_index, repo, params_b, gguf_file) if x]
    if len(given) != 1:
        raise click.UsageError(
            "give one of --model, --hf-config, --gguf, --safetensors-index, --repo, --params-b"
        )
    if slug or gguf_file:
        return slug or "gguf"
    if repo:
        return {"repo": repo, "quant": quant}
    if params_b:
        if not quant:
            raise click.UsageError("--params-b needs --quant")
        return {"params_b": params_b, "active_params_b": active_params_b, "quant": quant}
    described: dict = {"quant": quant}
    if safetensors_index:
        described["safetensors_index"] = read_json(safetensors_index)
    if hf_config:
        described["hf_config"] = read_json(hf_config)
    return {k: v for k, v in described.items() if v is not None}


def read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise click.ClickException(f"{path}: not a JSON file ({error})") from error


def problems(errors: dict[str, str]) -> str:
    return "; ".join(f"{field}: {message}" for field, message in errors.items())
