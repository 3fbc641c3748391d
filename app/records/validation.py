"""One validation path for every submission: the schema, then the catalog, all errors at once."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.catalog.repository import CatalogRepository
from app.errors import ServebookError
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, json_params, register
from app.i18n.validation_words import said_by_pydantic
from app.models import Artifact, Hardware, LlmModel, Profile, Runtime
from app.records.repository import RecordRepository
from app.records.schemas import FieldError, RecordIn
from app.records.store import Found, RecordStore


class RecordInvalid(ServebookError):
    status_code = 422

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors


@dataclass(frozen=True)
class Resolved:
    """The catalog rows a valid record points at."""

    model: LlmModel
    artifact: Artifact
    runtime: Runtime
    hardware: Hardware
    profile: Profile | None
    gpu_count: int


def schema_errors(error: ValidationError) -> list[FieldError]:
    """Pydantic errors as dotted field paths, e.g. measurements.0.ttft_ms, each with its
    code and limits so a page can word it in the reader's language."""
    return [schema_error(item) for item in error.errors()]


def schema_error(item: Any) -> FieldError:
    said = said_by_pydantic(item)
    return FieldError(field=".".join(str(part) for part in item["loc"]) or "record",
                      message=item["msg"].removeprefix("Value error, "),
                      code=said.code if said else None,
                      params=json_params(said.params) if said else None)


NONE_IN_CATALOG = register("record.none_in_catalog", _l("none in the catalog"))
UNKNOWN_MODEL = register("record.unknown_model",
                         _l("unknown model '%(slug)s'; choose one of: %(choices)s"))
UNKNOWN_ARTIFACT = register("record.unknown_artifact", _l("unknown artifact '%(slug)s'"))
UNKNOWN_ARTIFACT_OF = register(
    "record.unknown_artifact_of",
    _l("unknown artifact '%(slug)s' for %(model)s; choose one of: %(choices)s"))
FOREIGN_ARTIFACT = register(
    "record.foreign_artifact",
    _l("artifact '%(slug)s' is a file of %(owner)s, not of %(model)s; "
       "choose one of: %(choices)s"))
UNKNOWN_RUNTIME = register("record.unknown_runtime",
                           _l("unknown runtime '%(slug)s'; choose one of: %(choices)s"))
RUNTIME_FORMAT = register(
    "record.runtime_format",
    _l("%(runtime)s loads %(formats)s, not %(format)s (%(artifact)s); runtimes that load "
       "%(format)s: %(choices)s"))
UNKNOWN_HARDWARE = register("record.unknown_hardware",
                            _l("unknown hardware '%(slug)s'; choose one of: %(choices)s"))
UNKNOWN_PROFILE = register("record.unknown_profile",
                           _l("unknown profile '%(slug)s'; choose one of: %(choices)s"))
GPU_COUNT = register("record.gpu_count",
                     _l("must be between 1 and %(most)s, the GPUs of %(hardware)s"))
INCOMPLETE = register("record.incomplete", _l("incomplete record"))


def choices(slugs: list[str]) -> list[str] | Sentence:
    return slugs if slugs else NONE_IN_CATALOG()


def text(raw: Mapping[str, Any], name: str) -> str | None:
    value = raw.get(name)
    return value if isinstance(value, str) and value else None


class ReferenceCheck:
    """Looks up the slugs a submission names and says what is wrong with each; rows already
    `found` together are taken as they are, so a valid submission costs one query."""

    def __init__(self, catalog: CatalogRepository, records: RecordRepository,
                 found: Found | None = None) -> None:
        self.catalog = catalog
        self.records = records
        self.found = found
        self.errors: list[FieldError] = []

    def fail(self, field: str, said: Sentence) -> None:
        self.errors.append(FieldError.of(field, said))

    def model(self, slug: str | None) -> LlmModel | None:
        if slug is None:
            return None
        if self.found is not None:
            return self.found.model
        model = self.catalog.get_model(slug)
        if model is None:
            known = [m.slug for m in self.catalog.list_models()]
            self.fail("model", UNKNOWN_MODEL(slug=slug, choices=choices(known)))
        return model

    def artifact(self, slug: str | None, model: LlmModel | None) -> Artifact | None:
        if slug is None:
            return None
        if self.found is not None:
            return self.found.artifact
        if model is not None:
            found = next((a for a in model.artifacts if a.slug == slug), None)
            if found is None:
                self.fail("artifact", self.foreign_artifact_message(slug, model))
            return found
        artifact = self.records.artifact_owner(slug)
        if artifact is None:
            self.fail("artifact", UNKNOWN_ARTIFACT(slug=slug))
        return artifact

    def foreign_artifact_message(self, slug: str, model: LlmModel) -> Sentence:
        owner = self.records.artifact_owner(slug)
        valid = choices([a.slug for a in model.artifacts])
        if owner is not None:
            return FOREIGN_ARTIFACT(slug=slug, owner=owner.model.slug, model=model.slug,
                                    choices=valid)
        return UNKNOWN_ARTIFACT_OF(slug=slug, model=model.slug, choices=valid)

    def runtime(self, slug: str | None, artifact: Artifact | None) -> Runtime | None:
        if slug is None:
            return None
        runtime = self.found.runtime if self.found else self.catalog.find_by(Runtime, slug=slug)
        if runtime is None:
            known = [r.slug for r in self.catalog.list_runtimes()]
            self.fail("runtime", UNKNOWN_RUNTIME(slug=slug, choices=choices(known)))
        elif artifact is not None and artifact.format not in runtime.formats:
            runtimes = self.catalog.list_runtimes()
            loaders = [r.slug for r in runtimes if artifact.format in r.formats]
            self.fail("runtime", RUNTIME_FORMAT(runtime=runtime.name, formats=list(runtime.formats),
                                                format=artifact.format, artifact=artifact.slug,
                                                choices=choices(loaders)))
        return runtime

    def hardware(self, slug: str | None) -> Hardware | None:
        if slug is None:
            return None
        hardware = self.found.hardware if self.found else self.catalog.get_hardware(slug)
        if hardware is None:
            known = [h.slug for h in self.catalog.list_hardware()]
            self.fail("hardware", UNKNOWN_HARDWARE(slug=slug, choices=choices(known)))
        return hardware

    def profile(self, slug: str | None) -> Profile | None:
        if slug is None:
            return None
        profile = self.found.profile if self.found else self.catalog.get_profile(slug)
        if profile is None:
            known = [p.slug for p in self.catalog.list_profiles()]
            self.fail("profile", UNKNOWN_PROFILE(slug=slug, choices=choices(known)))
        return profile

    def gpu_count(self, value: Any, hardware: Hardware | None) -> int | None:
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


def check_references(catalog: CatalogRepository, records: RecordRepository,
                     raw: Mapping[str, Any]) -> tuple[Resolved | None, list[FieldError]]:
    """Resolve every slug that was given; a bad one is reported with the valid choices."""
    check = ReferenceCheck(catalog, records, find_together(records, raw))
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


def find_together(records: RecordRepository, raw: Mapping[str, Any]) -> Found | None:
    names = [text(raw, name) for name in ("model", "artifact", "runtime", "hardware")]
    if not all(names):
        return None
    model, artifact, runtime, hardware = (str(name) for name in names)
    return RecordStore(records.session).find(model, artifact, runtime, hardware,
                                             text(raw, "profile"))


REFERENCE_FIELDS = ("model", "artifact", "runtime", "hardware", "profile", "gpu_count")


def validate_record(catalog: CatalogRepository, records: RecordRepository,
                    raw: Mapping[str, Any] | RecordIn,
                    extra_errors: list[FieldError] | None = None) -> tuple[RecordIn, Resolved]:
    """The record and its catalog rows, or RecordInvalid listing every problem found."""
    errors = list(extra_errors or [])
    data: RecordIn | None = raw if isinstance(raw, RecordIn) else None
    if data is None:
        try:
            data = RecordIn.model_validate(raw)
        except ValidationError as error:
            errors += schema_errors(error)
    # The references only: dumping the whole record (its measurements too) costs more.
    lookup = {name: getattr(data, name) for name in REFERENCE_FIELDS} if data is not None else raw
    resolved, reference_errors = check_references(catalog, records, lookup)
    errors += reference_errors
    if errors or data is None or resolved is None:
        raise RecordInvalid(errors or [FieldError.of("record", INCOMPLETE())])
    return data, resolved
