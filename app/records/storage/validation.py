"""One validation path for every submission: the schema, then the catalog, all errors at once."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.catalog.references import (
    ArtifactRef,
    CatalogReferences,
    HardwareRef,
    ModelRef,
    ProfileRef,
    RuntimeRef,
    catalog_references,
    held_references,
)
from app.errors import ServebookError, refusal_status
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, json_params, register
from app.i18n.validation_words import (
    MAX_MESSAGE,
    MORE_ERRORS,
    clipped,
    first_errors,
    said_by_pydantic,
)
from app.records.schemas import FieldError, RecordIn
from app.security.json_input import GATE_CODES


class RecordInvalid(ServebookError):
    """Every field at fault: 422, or 409 where the fields only contradict each other or the
    catalog (app.errors.FIELD_CONFLICTS)."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors
        self.status_code = refusal_status(e.code for e in errors)

    def __reduce__(self) -> tuple[type, tuple[list[FieldError]]]:
        # Raised in the submission process, answered by the app
        # (app.records.endpoints.submission_process).
        return (RecordInvalid, (self.errors,))


@dataclass(frozen=True)
class Resolved:
    """The catalog entries a valid record points at."""

    model: ModelRef
    artifact: ArtifactRef
    runtime: RuntimeRef
    hardware: HardwareRef
    profile: ProfileRef | None
    gpu_count: int


def schema_errors(error: ValidationError) -> list[FieldError]:
    """Pydantic errors as dotted field paths, e.g. measurements.0.ttft_ms, each with its
    code and limits so a page can word it in the reader's language: the first MAX_ERRORS,
    then one saying how many more there were."""
    items, total = first_errors(error)
    errors = [schema_error(item) for item in items]
    if total > len(items):
        said = MORE_ERRORS(more=total - len(items), listed=len(items))
        errors.append(FieldError.of("body", said))
    return errors


def schema_error(item: Any) -> FieldError:
    said = said_by_pydantic(item)
    located = clipped(".".join(str(part) for part in item["loc"]) or "record")
    if item["type"] in GATE_CODES:  # found by a walk of the whole record
        located = str(item["ctx"]["field"])
    return FieldError(
        field=located,
        message=clipped(item["msg"].removeprefix("Value error, "), MAX_MESSAGE),
        code=said.code if said else None,
        params=json_params(said.params) if said else None,
    )


NONE_IN_CATALOG = register("record.none_in_catalog", _l("none in the catalog"))
UNKNOWN_MODEL = register(
    "record.unknown_model", _l("unknown model '%(slug)s'; choose one of: %(choices)s")
)
UNKNOWN_ARTIFACT = register("record.unknown_artifact", _l("unknown artifact '%(slug)s'"))
UNKNOWN_ARTIFACT_OF = register(
    "record.unknown_artifact_of",
    _l("unknown artifact '%(slug)s' for %(model)s; choose one of: %(choices)s"),
)
FOREIGN_ARTIFACT = register(
    "record.foreign_artifact",
    _l("artifact '%(slug)s' is a file of %(owner)s, not of %(model)s; choose one of: %(choices)s"),
)
UNKNOWN_RUNTIME = register(
    "record.unknown_runtime", _l("unknown runtime '%(slug)s'; choose one of: %(choices)s")
)
RUNTIME_FORMAT = register(
    "record.runtime_format",
    _l(
        "%(runtime)s loads %(formats)s, not %(format)s (%(artifact)s); runtimes that load "
        "%(format)s: %(choices)s"
    ),
)
UNKNOWN_HARDWARE = register(
    "record.unknown_hardware", _l("unknown hardware '%(slug)s'; choose one of: %(choices)s")
)
UNKNOWN_PROFILE = register(
    "record.unknown_profile", _l("unknown profile '%(slug)s'; choose one of: %(choices)s")
)
GPU_COUNT = register(
    "record.gpu_count", _l("must be between 1 and %(most)s, the GPUs of %(hardware)s")
)
INCOMPLETE = register("record.incomplete", _l("incomplete record"))


def choices(slugs: list[str]) -> list[str] | Sentence:
    return slugs if slugs else NONE_IN_CATALOG()


def text(raw: Mapping[str, Any], name: str) -> str | None:
    value = raw.get(name)
    return value if isinstance(value, str) and value else None


class ReferenceCheck:
    """Looks up the slugs a submission names in the catalog's reference data (a snapshot
    kept per process, so a submission costs no catalog query) and says what is wrong with
    each."""

    def __init__(self, catalog: CatalogReferences) -> None:
        self.catalog = catalog
        self.errors: list[FieldError] = []

    def fail(self, field: str, said: Sentence) -> None:
        self.errors.append(FieldError.of(field, said))

    def model(self, slug: str | None) -> ModelRef | None:
        if slug is None:
            return None
        model = self.catalog.models.get(slug)
        if model is None:
            known = list(self.catalog.models)
            self.fail("model", UNKNOWN_MODEL(slug=slug, choices=choices(known)))
        return model

    def artifact(self, slug: str | None, model: ModelRef | None) -> ArtifactRef | None:
        if slug is None:
            return None
        if model is not None:
            found = next((a for a in model.artifacts if a.slug == slug), None)
            if found is None:
                self.fail("artifact", self.foreign_artifact_message(slug, model))
            return found
        artifact = self.catalog.artifacts.get(slug)
        if artifact is None:
            self.fail("artifact", UNKNOWN_ARTIFACT(slug=slug))
        return artifact

    def foreign_artifact_message(self, slug: str, model: ModelRef) -> Sentence:
        owner = self.catalog.artifacts.get(slug)
        valid = choices([a.slug for a in model.artifacts])
        if owner is not None:
            return FOREIGN_ARTIFACT(
                slug=slug, owner=owner.model.slug, model=model.slug, choices=valid
            )
        return UNKNOWN_ARTIFACT_OF(slug=slug, model=model.slug, choices=valid)

    def runtime(self, slug: str | None, artifact: ArtifactRef | None) -> RuntimeRef | None:
        if slug is None:
            return None
        runtime = self.catalog.runtimes.get(slug)
        if runtime is None:
            known = list(self.catalog.runtimes)
            self.fail("runtime", UNKNOWN_RUNTIME(slug=slug, choices=choices(known)))
        elif artifact is not None and artifact.format not in runtime.formats:
            runtimes = self.catalog.runtimes.values()
            loaders = [r.slug for r in runtimes if artifact.format in r.formats]
            self.fail(
                "runtime",
                RUNTIME_FORMAT(
                    runtime=runtime.name,
                    formats=list(runtime.formats),
                    format=artifact.format,
                    artifact=artifact.slug,
                    choices=choices(loaders),
                ),
            )
        return runtime

    def hardware(self, slug: str | None) -> HardwareRef | None:
        if slug is None:
            return None
        hardware = self.catalog.hardware.get(slug)
        if hardware is None:
            known = list(self.catalog.hardware)
            self.fail("hardware", UNKNOWN_HARDWARE(slug=slug, choices=choices(known)))
        return hardware

    def profile(self, slug: str | None) -> ProfileRef | None:
        if slug is None:
            return None
        profile = self.catalog.profiles.get(slug)
        if profile is None:
            known = list(self.catalog.profiles)
            self.fail("profile", UNKNOWN_PROFILE(slug=slug, choices=choices(known)))
        return profile

    def gpu_count(self, value: Any, hardware: HardwareRef | None) -> int | None:
        if hardware is None:
            return None
        if value is None:
            return hardware.gpu_count
        if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
            value = int(value)
        if isinstance(value, bool):
            return None  # the schema says why
        if isinstance(value, int) and not 1 <= value <= hardware.gpu_count:
            self.fail("gpu_count", GPU_COUNT(most=hardware.gpu_count, hardware=hardware.name))
        return value if isinstance(value, int) else None


def check_references(
    catalog: CatalogReferences, raw: Mapping[str, Any]
) -> tuple[Resolved | None, list[FieldError]]:
    """Resolve every slug that was given; a bad one is reported with the valid choices."""
    check = ReferenceCheck(catalog)
    model = check.model(text(raw, "model"))
    artifact = check.artifact(text(raw, "artifact"), model)
    runtime = check.runtime(text(raw, "runtime"), artifact)
    hardware = check.hardware(text(raw, "hardware"))
    profile = check.profile(text(raw, "profile"))
    gpu_count = check.gpu_count(raw.get("gpu_count"), hardware)
    parts = (model, artifact, runtime, hardware, gpu_count)
    if check.errors or any(part is None for part in parts):
        return None, check.errors
    assert model and artifact and runtime and hardware and gpu_count
    return Resolved(model, artifact, runtime, hardware, profile, gpu_count), []


REFERENCE_FIELDS = ("model", "artifact", "runtime", "hardware", "profile", "gpu_count")


def validate_record(
    session: Session,
    raw: Mapping[str, Any] | RecordIn,
    extra_errors: list[FieldError] | None = None,
    definition: int | None = None,
    references: CatalogReferences | None = None,
) -> tuple[RecordIn, Resolved]:
    """The record and its catalog rows, or RecordInvalid listing every problem found;
    `definition`, the catalog definition when the caller has read it already, or
    `references`, the catalog snapshot to check against."""
    errors = list(extra_errors or [])
    data: RecordIn | None = raw if isinstance(raw, RecordIn) else None
    if data is None:
        try:
            data = RecordIn.model_validate(raw)
        except ValidationError as error:
            errors += schema_errors(error)
    # The references only: dumping the whole record (its measurements too) costs more.
    lookup = {name: getattr(data, name) for name in REFERENCE_FIELDS} if data is not None else raw
    catalog = references or catalog_references(session, definition)
    resolved, reference_errors = check_references(catalog, lookup)
    errors += reference_errors
    if errors or data is None or resolved is None:
        raise RecordInvalid(errors or [FieldError.of("record", INCOMPLETE())])
    return data, resolved


def validate_at_held_catalog(
    session: Session,
    raw: Mapping[str, Any] | RecordIn,
    extra_errors: list[FieldError] | None = None,
) -> tuple[RecordIn, Resolved, int]:
    """As validate_record, against the catalog snapshot this process holds, with no query;
    the catalog definition it stands for comes back, for the write to check that the
    catalog has not moved since. A record that snapshot refuses is checked again against
    the catalog as it is now when that has moved (a file added by another process)."""
    held = held_references(session)
    try:
        return (*validate_record(session, raw, extra_errors, references=held), held.definition)
    except RecordInvalid:
        current = catalog_references(session)
        if current.definition == held.definition:
            raise
        return (
            *validate_record(session, raw, extra_errors, references=current),
            current.definition,
        )
