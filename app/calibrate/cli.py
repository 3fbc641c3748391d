"""`servebook calibrate`: probe a running server for a few minutes, fit that hardware's and
runtime's coefficients, and store them as a calibration profile.

Exit codes: 0 when the profile is stored with status "ok"; 1 when the probe was stored as
failed (its points did not fit, or contradicted each other); 3 when nothing answered.
"""

from __future__ import annotations

import getpass
import json
import os
from typing import Any

import click

from app.asking.custom import INTERCONNECTS, PLATFORMS, HardwareDescription
from app.bench.transport.hosts import HostNotAllowedError
from app.calibrate.account import account_lines
from app.calibrate.probe import BATCHES, BUDGET_S, DEPTHS, ProbeError, ProbePlan, run_probe_sync
from app.config import get_settings

EXIT_FAILED = 1
EXIT_UNREACHABLE = 3
API_KEY_ENV = "SERVEBOOK_BENCH_API_KEY"


class Unreachable(click.ClickException):
    exit_code = EXIT_UNREACHABLE


def _numbers(value: str) -> tuple[int, ...]:
    try:
        found = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError as error:
        raise click.BadParameter("give comma-separated whole numbers, e.g. 1,2,4,8") from error
    if not found or min(found) < 1:
        raise click.BadParameter("give whole numbers of 1 or more")
    return found


def _batches(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[int, ...]:
    if not value:
        return BATCHES
    found = _numbers(value)
    if len(set(found)) < 2:
        raise click.BadParameter("give at least two batch sizes")
    return found


def _depths(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[int, ...]:
    return _numbers(value) if value else DEPTHS


@click.command("calibrate")
@click.option("--base-url", required=True, help="the server, e.g. http://127.0.0.1:8000/v1")
@click.option(
    "--model",
    "model_slug",
    required=True,
    help="the served model: a catalog slug, a Hub repository id (org/name) or a config.json",
)
@click.option("--hardware", required=True, help="catalog slug, or a new name with its figures")
@click.option("--runtime", default=None, help="runtime slug (default: what the server says)")
@click.option("--served-model", default=None, help="default: the only model the server lists")
@click.option("--budget-s", type=click.FloatRange(30, 3600), default=BUDGET_S, show_default=True)
@click.option("--batches", callback=_batches, default=None, help="default 1,2,4,8,16")
@click.option(
    "--depths",
    callback=_depths,
    default=None,
    help="KV tokens per request, default 128,1024,4096 (cut to the server's context)",
)
@click.option("--output-tokens", type=click.IntRange(8, 1024), default=48, show_default=True)
@click.option("--by", "run_by", default=None, help="who ran it (default: this user)")
@click.option("--memory-gb", type=click.FloatRange(min=0.1), default=None, help="new hardware")
@click.option("--bandwidth-gb-s", type=click.FloatRange(min=0.1), default=None)
@click.option("--tflops", type=click.FloatRange(min=0.01), default=None, help="dense BF16")
@click.option("--gpus", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--platform", type=click.Choice(PLATFORMS), default="cuda", show_default=True)
@click.option("--interconnect", type=click.Choice(INTERCONNECTS), default="none")
@click.option("--unified-memory", is_flag=True, default=False)
@click.option("--json", "as_json", is_flag=True, help="print the stored profile as JSON")
def calibrate(**options: object) -> None:
    """Fit this hardware's coefficients on a running server (ten minutes by default)."""
    from app.calibrate.service import CalibrationRefused, find_target, store_calibration
    from app.db import session_scope
    from app.errors import ServebookError

    settings = get_settings()
    described = _described(options)
    run_by = str(options["run_by"] or _user())

    # The catalog names are checked before minutes of probing are spent.
    # What cannot run is refused before a request is timed: the runtime given, else the one
    # the server names (asked first), on the hardware given.
    def check(hinted: str | None) -> None:
        runtime = options["runtime"] or hinted or "vllm"
        with session_scope(settings) as session:
            find_target(session, *_names(options), str(runtime), described, add=False)

    try:
        check(None) if options["runtime"] else _check_names(
            session_scope, settings, options, described
        )
    except ServebookError as error:
        raise click.ClickException(error.message) from error
    plan = ProbePlan(
        base_url=str(options["base_url"]),
        served_model=options["served_model"],  # type: ignore[arg-type]
        api_key=os.environ.get(API_KEY_ENV),
        allowed_hosts=list(settings.bench_allowed_hosts),
        batches=options["batches"],  # type: ignore[arg-type]
        depths=options["depths"],  # type: ignore[arg-type]
        output_tokens=int(options["output_tokens"]),  # type: ignore[arg-type]
        budget_s=float(options["budget_s"]),  # type: ignore[arg-type]
    )
    try:
        probe = run_probe_sync(plan, _progress, check)
    except HostNotAllowedError as error:
        raise click.ClickException(str(error)) from error
    except ServebookError as error:
        raise click.ClickException(error.message) from error
    except ProbeError as error:
        if error.kind == "unreachable":
            raise Unreachable(f"{error} (nothing was measured or stored)") from error
        raise click.ClickException(str(error)) from error
    runtime = options["runtime"] or probe.runtime_hint
    try:
        with session_scope(settings) as session:
            target = find_target(session, *_names(options), runtime, described)  # type: ignore[arg-type]
            assert target is not None
            profile, _fit = store_calibration(session, target, probe, run_by)
            lines = account_lines(profile, target.hardware.slug)
            out = {"id": profile.id, "status": profile.status, "reason": profile.reason or None}
            out |= {"fit_error": profile.fit_error, "figures": profile.figures}
            ok = profile.status == "ok"
    except CalibrationRefused as error:
        raise click.ClickException(error.message) from error
    except ServebookError as error:
        raise click.ClickException(error.message) from error
    click.echo(json.dumps(out, indent=2) if options["as_json"] else "\n".join(lines))
    if not ok:
        click.get_current_context().exit(EXIT_FAILED)


def _check_names(session_scope: Any, settings: Any, options: dict, described: Any) -> None:
    """The model and hardware names, before the server says which runtime it is."""
    from app.calibrate.service import CalibrationRefused, probed_model
    from app.calibrate.words import UNKNOWN_HARDWARE
    from app.catalog.repository import CatalogRepository

    with session_scope(settings) as session:
        probed_model(session, str(options["model_slug"]))
        repo = CatalogRepository(session)
        if repo.get_hardware(str(options["hardware"])) is None and described is None:
            known = ", ".join(h.slug for h in repo.list_hardware())
            raise CalibrationRefused(UNKNOWN_HARDWARE(slug=options["hardware"], known=known))


def _names(options: dict) -> tuple[str, str]:
    return str(options["model_slug"]), str(options["hardware"])


def _described(options: dict) -> HardwareDescription | None:
    """New hardware, when its memory and bandwidth are given."""
    if options["memory_gb"] is None or options["bandwidth_gb_s"] is None:
        return None
    return HardwareDescription(
        memory_gb_per_gpu=float(options["memory_gb"]),
        gpu_count=int(options["gpus"]),
        platform=str(options["platform"]),
        bandwidth_gb_s_per_gpu=float(options["bandwidth_gb_s"]),
        interconnect=str(options["interconnect"]),
        unified_memory=bool(options["unified_memory"]),
        bf16_tflops_per_gpu=options["tflops"],  # type: ignore[arg-type]
    )


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "local"


def _progress(step: str, done: int, total: int) -> None:
    click.echo(f"{step} {done}/{total}", err=True)
