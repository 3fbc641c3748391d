"""The "Calibrate this hardware" page, a calibration job's status, and the worker API that
hands a probe's points back."""

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from app.calibrate.account import account
from app.calibrate.jobs import enqueue_calibration, parse_calibration_job
from app.calibrate.probe import ProbeResult
from app.calibrate.probe_schema import ProbePointsIn
from app.calibrate.service import latest_profiles
from app.catalog.choices import form_choices
from app.catalog.repository import CatalogRepository
from app.db import SessionDep
from app.jobs.leases import finish_job
from app.jobs.service import JobInvalid, get_job
from app.jobs.worker_routes import HELD_REFUSALS, body_doc, parse
from app.records.endpoints.json_body import BodyDep
from app.records.schemas import FieldError
from app.records.storage.validation import RecordInvalid
from app.security import SubmitterDep, WorkerDep, verify_csrf
from app.web import RowIdPath, page_responses, redirect, render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
worker_api = APIRouter(prefix="/api/worker", tags=["workers"])
PREFILL = ("model", "hardware", "runtime", "base_url", "served_model")


def page_context(session, values: dict[str, Any], errors: dict[str, str]) -> dict[str, Any]:  # noqa: ANN001
    choices = form_choices(session, values.get("model"), None, values.get("runtime"), keep=True)
    hardware = CatalogRepository(session).get_hardware(values.get("hardware") or "")
    profiles = latest_profiles(session, hardware.id) if hardware is not None else []
    return {
        "values": values,
        "errors": errors,
        "models": choices.models,
        "hardware": choices.hardware,
        "runtimes": choices.runtimes,
        "profiles": [(p, account(p, hardware.slug)) for p in profiles] if hardware else [],
    }


@router.get("/calibrate", name="calibrate:index", responses=page_responses(400))
def index(request: Request, session: SessionDep) -> Response:
    """The form, pre-filled from a detail page, and the hardware's calibrations so far."""
    values = {k: v for k, v in request.query_params.items() if k in PREFILL}
    return render(request, "calibrate/index.html", page_context(session, values, {}))


@router.post(
    "/calibrate",
    name="calibrate:create",
    dependencies=[Depends(verify_csrf)],
    responses=page_responses(303, 401, 403, 413),
)
async def create(request: Request, session: SessionDep, principal: SubmitterDep) -> Response:
    """Queue a calibration; invalid input re-renders the form with each error by its field."""
    submitted = dict(await request.form())
    submitted.pop("csrf_token", None)
    form: dict[str, Any] = {k: v for k, v in submitted.items() if v != ""}
    try:
        data = parse_calibration_job(form)
        job = enqueue_calibration(session, data, request.state.settings, principal.name)
    except JobInvalid as error:
        errors = {e.field.split(".")[0]: e.text() for e in error.errors}
        form.pop("api_key", None)
        context = page_context(session, form, errors)
        return render(request, "calibrate/index.html", context, block="calibrate_form")
    if data.api_key is not None:  # memory only, for the in-process worker
        request.app.state.bench_api_keys[job.id] = data.api_key.get_secret_value()
    return redirect(request, str(request.url_for("calibrate:job", job_id=job.id)))


@router.get("/calibrate/jobs/{job_id}", name="calibrate:job", responses=page_responses(404))
def job_page(request: Request, job_id: RowIdPath, session: SessionDep) -> Response:
    """A calibration job's progress; htmx polls until it is done, then its account."""
    job = get_job(session, job_id)
    said: list = []
    found = (job.result or {}).get("calibration_id")
    if found is not None:
        hardware = job.target.get("hardware", "")
        hardware_row = CatalogRepository(session).get_hardware(hardware)
        profiles = latest_profiles(session, hardware_row.id) if hardware_row else []
        profile = next((p for p in profiles if p.id == found), None)
        said = account(profile, hardware) if profile is not None else []
    context = {"job": job, "account": said}
    return render(request, "calibrate/job.html", context, block="calibration_status")


class ProbeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lease_token: str = Field(min_length=1, max_length=64)
    probe: ProbePointsIn


class CalibrationOut(BaseModel):
    job_id: int
    calibration_id: int
    status: str


@worker_api.post(
    "/jobs/{job_id}/calibration",
    name="api:worker_calibration",
    status_code=201,
    response_model=CalibrationOut,
    openapi_extra=body_doc(ProbeIn),
    responses=HELD_REFUSALS,
)
def probe_result(
    job_id: RowIdPath, session: SessionDep, _principal: WorkerDep, body: BodyDep
) -> Response:
    """Fit a calibration job's probe points, store the profile and mark the job succeeded."""
    data = parse(ProbeIn, body)
    try:
        probe = ProbeResult.from_json(data.probe.model_dump(mode="json"))
    except (ValueError, KeyError, TypeError) as error:
        problem = FieldError(field="probe", message=f"not a probe's points: {error}"[:500])
        raise RecordInvalid([problem]) from error
    profile = finish_job(session, job_id, data.lease_token, probe, outcome_path="calibration")
    out = CalibrationOut(job_id=job_id, calibration_id=profile.id, status=profile.status)
    return JSONResponse(out.model_dump(), status_code=201)
