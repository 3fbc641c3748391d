"""Fit a probe's points and store the calibration profile (the caller commits).

The estimator stays pure: this loads the catalog rows, builds the probed model's step
inputs on the hardware with the shipped coefficients (the fit's starting point), fits, and
stores the fitted coefficients. The catalog then hands them to every estimate on that
hardware and runtime (`app/catalog/specs.py`), for every model; a stored "ok" profile
bumps the catalog revision so cached recipes are resolved again with them.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.asking.custom import HardwareDescription, custom_hardware
from app.asking.described import described_model
from app.asking.hub import REPO_ID, describe_repo
from app.asking.model_sources import from_hf_config
from app.calibrate.probe import ProbeResult
from app.calibrate.words import (
    CANNOT_ESTIMATE,
    CANNOT_RUN,
    NO_ARTIFACT,
    NO_BANDWIDTH,
    UNKNOWN_HARDWARE,
    UNKNOWN_MODEL_SOURCE,
    UNKNOWN_RUNTIME,
    UNREADABLE_CONFIG,
    UNREADABLE_MODEL,
    refusal_sentence,
)
from app.catalog.repository import CatalogRepository
from app.catalog.revision import bump_definition, bump_revision
from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.config import get_settings
from app.errors import NotFound, ServebookError
from app.estimate import Plan, estimate
from app.estimate.calibration import CalibrationFit, fit_calibration
from app.estimate.errors import EstimateError
from app.estimate.speed.load import SpeedModel
from app.estimate.speed.step import communication_s, decode_step
from app.i18n.sentences import Sentence, english
from app.models import Artifact, CalibrationProfile, Hardware, LlmModel, Runtime

PROBE_CONTEXT = 4096  # the plan the probed model's step inputs are built at (memory only)


class CalibrationRefused(ServebookError):
    """The calibration cannot start: a bad argument, named as a sentence."""

    status_code = 422

    def __init__(self, said: Sentence) -> None:
        super().__init__(english(said))
        self.said = said


@dataclass(frozen=True)
class Target:
    """What a probe calibrates: catalog rows, and the runtime as the catalog names it."""

    model: LlmModel
    hardware: Hardware
    runtime: Runtime


def find_target(
    session: Session,
    model: str,
    hardware: str,
    runtime: str | None,
    described: HardwareDescription | None = None,
    add: bool = True,
) -> Target | None:
    """The catalog rows a calibration is about; hardware not in the catalog is added when
    described by its numbers (with `add` False, nothing is added and None is the answer).
    `runtime` None is refused: the probe names it when it can."""
    repo = CatalogRepository(session)
    found_model = probed_model(session, model)
    runtimes = list(repo.list_runtimes())
    found_runtime = next((r for r in runtimes if r.slug == runtime), None)
    if found_runtime is None:
        raise CalibrationRefused(UNKNOWN_RUNTIME(known=", ".join(r.slug for r in runtimes)))
    found_hardware = repo.get_hardware(hardware)
    if found_hardware is None:
        if described is None:
            known = ", ".join(h.slug for h in repo.list_hardware())
            raise CalibrationRefused(UNKNOWN_HARDWARE(slug=hardware, known=known))
        if not add:
            # Checked as the row it would become, without adding it.
            unsaved = custom_hardware(described)
            unsaved.slug = unsaved.name = hardware
            refuse_what_cannot_run(Target(found_model, unsaved, found_runtime))
            return None
        found_hardware = add_hardware(session, hardware, described)
    found = Target(found_model, found_hardware, found_runtime)
    refuse_what_cannot_run(found)
    return found


def probed_model(session: Session, model: str) -> LlmModel:
    """The model a probe serves, as people name it: a catalog slug, a Hub repository id
    (the catalog's own entry when it has one, else read from the Hub or its cache) or the
    path of a config.json."""
    repo = CatalogRepository(session)
    found = repo.get_model(model)
    if found is not None:
        return found
    models = list(repo.list_models())
    by_repo = next((m for m in models if m.hf_repo and m.hf_repo.lower() == model.lower()), None)
    if by_repo is not None:
        return repo.get_model(by_repo.slug) or by_repo
    path = Path(model).expanduser()
    if model.endswith(".json") or path.is_file():
        return described_model(_config_description(path))
    if REPO_ID.match(model):
        try:
            return described_model(describe_repo(model, get_settings()))
        except EstimateError as error:
            raise CalibrationRefused(UNREADABLE_MODEL(model=model, reason=error.message)) from error
    known = ", ".join(m.slug for m in models)
    raise NotFound(UNKNOWN_MODEL_SOURCE(model=model, known=known))


def _config_description(path: Path) -> Any:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(config, dict):
            raise ValueError("it holds no JSON object")
        return from_hf_config(config, name=str(config.get("_name_or_path") or path.parent.name))
    except (OSError, ValueError, EstimateError) as error:
        reason = error.message if isinstance(error, EstimateError) else str(error)
        raise CalibrationRefused(UNREADABLE_CONFIG(path=str(path), reason=reason)) from error


def refuse_what_cannot_run(target: Target) -> None:
    """A runtime that does not run on the hardware's platform, or loads no file of the
    model, is refused before anything is probed."""
    runtime = runtime_spec(target.runtime)
    platform = hardware_spec(target.hardware).platform
    if platform not in runtime.platforms:
        raise CalibrationRefused(
            CANNOT_RUN(
                runtime=target.runtime.slug,
                platform=platform,
                hardware=target.hardware.slug or target.hardware.name,
                runs_on=", ".join(sorted(runtime.platforms)),
            )
        )
    _artifact(target.model, target.runtime)


def add_hardware(session: Session, slug: str, described: HardwareDescription) -> Hardware:
    """A catalog row for hardware described by its numbers, named by the person who
    calibrates it; its figures are theirs, and say so."""
    row = custom_hardware(described)
    row.slug, row.name, row.device = slug, slug, slug
    row.notes = "added by servebook calibrate with the figures its owner gave"
    row.basis = {
        **row.basis,
        "memory_bandwidth_gb_s": {"basis": "published", "note": "as given"},
    }
    row.sort = 1000
    session.add(row)
    session.flush()
    bump_definition(session)  # a new catalog row: every cached view of the catalog goes
    return row


def step_model(target: Target) -> SpeedModel:
    """The probed model's step inputs on the hardware, with the shipped coefficients."""
    runtime = runtime_spec(target.runtime)
    artifact = _artifact(target.model, target.runtime)
    machine = dataclasses.replace(hardware_spec(target.hardware), calibrated={})
    if machine.bandwidth_gb_s_per_gpu is None:
        raise CalibrationRefused(NO_BANDWIDTH(hardware=target.hardware.slug))
    spec = model_spec(target.model)
    plan = Plan(context=min(PROBE_CONTEXT, spec.native_context))
    try:
        found = estimate(spec, artifact_spec(artifact), runtime, machine, plan)
    except EstimateError as error:  # said in words, never a traceback
        raise CalibrationRefused(
            CANNOT_ESTIMATE(model=target.model.slug, reason=error.message)
        ) from error
    assert found.speed_model is not None  # the bandwidth is known
    return found.speed_model


def _artifact(model: LlmModel, runtime: Runtime) -> Artifact:
    """The file the runtime most likely serves: official first, then the widest."""
    files = [a for a in model.artifacts if a.format in runtime.formats]
    if not files:
        raise CalibrationRefused(NO_ARTIFACT(model=model.slug, runtime=runtime.slug))
    return min(files, key=lambda a: (not a.is_official, -a.bits_per_weight))


def store_calibration(
    session: Session, target: Target, probe: ProbeResult, run_by: str
) -> tuple[CalibrationProfile, CalibrationFit]:
    """Fit the probe's points and store the profile; an "ok" one bumps the revision."""
    speed = step_model(target)
    fit = fit_calibration(speed.step, probe.decode, probe.prefill, speed.prefill_chunk)
    refusal = msgspec.to_builtins(fit.refusal) if fit.refusal is not None else None
    profile = CalibrationProfile(
        hardware_id=target.hardware.id,
        runtime=target.runtime.slug,
        runtime_version=probe.runtime_version,
        model=target.model.slug,
        served_model=probe.served_model[:200],
        run_by=run_by[:100],
        status="ok" if fit.ok else "failed",
        reason=english(refusal_sentence(refusal)) if refusal else "",
        refusal=refusal,
        coefficients=msgspec.to_builtins(fit.coefficients),
        fit_error=_finite(fit.error),
        prefill_error=_finite(fit.prefill_error),
        figures=fit_figures(speed, fit),
        points=probe.points_json(),
    )
    session.add(profile)
    session.flush()
    if fit.ok:
        bump_revision(session)  # every estimate on this hardware and runtime changes
    return profile, fit


def store_failed_probe(
    session: Session, target: Target, probe_error: str, run_by: str, served: str
) -> CalibrationProfile:
    """A probe whose requests all failed: kept with the reason, changing nothing."""
    refusal = {"kind": "failed_requests", "figures": {"errors": probe_error[:500]}}
    profile = CalibrationProfile(
        hardware_id=target.hardware.id,
        runtime=target.runtime.slug,
        runtime_version=None,
        model=target.model.slug,
        served_model=served[:200],
        run_by=run_by[:100],
        status="failed",
        reason=english(refusal_sentence(refusal)),
        refusal=refusal,
        coefficients={},
        fit_error=None,
        prefill_error=None,
        figures={},
        points={},
    )
    session.add(profile)
    session.flush()
    return profile


def _finite(value: float | None) -> float | None:
    return round(value, 4) if value is not None and value < float("inf") else None


def fit_figures(speed: SpeedModel, fit: CalibrationFit) -> dict[str, Any]:
    """The fitted figures beside the datasheet's and the shipped ones, for the account."""
    step, fitted, shipped = speed.step, fit.coefficients, speed.step.coefficients
    moe = step.experts > 1
    share = fitted.bandwidth_share_moe if moe else fitted.bandwidth_share_dense
    fitted_step = msgspec.structs.replace(step, coefficients=fitted)
    out: dict[str, Any] = {
        "datasheet_bandwidth_tb_s": round(step.bandwidth_b_s / 1e12, 3),
        "effective_bandwidth_tb_s": round(share * step.bandwidth_b_s / 1e12, 3),
        "bandwidth_share": round(share, 3),
        "layer_us": round(1e6 * _layer(fitted, step.cuda_graphs), 1),
        "shipped_layer_us": round(1e6 * _layer(shipped, step.cuda_graphs), 1),
        "prefill_utilisation": round(sum(fitted.prefill_utilisation) / 2, 3),
        # Fitted only where first tokens were timed on hardware with a FLOPs figure.
        "prefill_fitted": fit.prefill_error is not None and step.flops is not None,
        "shipped_prefill_utilisation": list(shipped.prefill_utilisation),
        "first_token_ms": round(1e3 * fitted.first_token_s, 1),
        "shipped_first_token_ms": round(1e3 * shipped.first_token_s, 1),
        "gpus": step.tensor_parallel,
        "single_step_ms": round(1e3 * decode_step(fitted_step, 1, PROBE_CONTEXT).total, 3),
    }
    if step.tensor_parallel > 1:
        out["communication_ms"] = round(1e3 * communication_s(fitted_step, 1), 3)
        out["shipped_communication_ms"] = round(1e3 * communication_s(step, 1), 3)
    return out


def _layer(coefficients: Any, cuda_graphs: bool) -> float:
    return coefficients.layer_s if cuda_graphs else coefficients.layer_eager_s


def latest_profiles(session: Session, hardware_id: int) -> list[CalibrationProfile]:
    """The hardware's calibration profiles, newest first (ok and failed)."""
    statement = (
        select(CalibrationProfile)
        .where(CalibrationProfile.hardware_id == hardware_id)
        .order_by(CalibrationProfile.id.desc())
        .limit(20)
    )
    return list(session.scalars(statement))
