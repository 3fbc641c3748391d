"""The catalog's reference data as a submission is checked against it: every model, file,
runtime, hardware and profile by slug, with the few columns validation, the plausibility
flags and the record row read.

Loading them costs more than the rest of a submission, so each process keeps one immutable
snapshot, keyed on the catalog definition (app.catalog.revision): a number that moves only
when a seed or a catalog edit commits, not with every record as the catalog revision does.
A reader that asks for the current snapshot reads that number (one scalar query) and
reloads on a change, so a seed in one process is seen by every other at its next request,
on SQLite or a shared PostgreSQL. A record is checked against the snapshot held, with no
query, and written only while the catalog is still at its number (app.records.storage.store): a
change in between sends it back to be checked again. The snapshot holds plain frozen
values, never ORM rows, so threads and sessions share it.
"""

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.revision import current_definition
from app.catalog.specs import artifact_spec, model_spec
from app.estimate import ArtifactSpec, ModelSpec
from app.models import Artifact, Hardware, LlmModel, Profile, Runtime


@dataclass(frozen=True)
class ModelName:
    """The model a file belongs to, as a foreign-file error names it."""

    id: int
    slug: str


@dataclass(frozen=True)
class ArtifactRef:
    id: int
    slug: str
    format: str
    model: ModelName
    spec: ArtifactSpec


@dataclass(frozen=True)
class ModelRef:
    id: int
    slug: str
    spec: ModelSpec
    artifacts: tuple[ArtifactRef, ...]  # in catalog order, as the error lists them


@dataclass(frozen=True)
class RuntimeRef:
    id: int
    slug: str
    name: str
    formats: tuple[str, ...]
    platforms: tuple[str, ...]
    tensor_parallel: bool
    min_version: str | None


@dataclass(frozen=True)
class HardwareRef:
    id: int
    slug: str
    name: str
    platform: str
    gpu_count: int
    memory_gb_per_gpu: float
    bandwidth_gb_s_per_gpu: float | None
    bandwidth_basis: str  # published | measured | assumed ...


@dataclass(frozen=True)
class ProfileRef:
    id: int
    slug: str


@dataclass(frozen=True)
class CatalogReferences:
    """Everything by slug, each mapping in the catalog's display order (the order an
    unknown-slug error lists the choices in)."""

    definition: int
    models: Mapping[str, ModelRef]
    artifacts: Mapping[str, ArtifactRef]
    runtimes: Mapping[str, RuntimeRef]
    hardware: Mapping[str, HardwareRef]
    profiles: Mapping[str, ProfileRef]


def model_ref(model: LlmModel) -> ModelRef:
    name = ModelName(model.id, model.slug)
    artifacts = tuple(artifact_ref(artifact, name) for artifact in model.artifacts)
    return ModelRef(model.id, model.slug, model_spec(model), artifacts)


def artifact_ref(artifact: Artifact, model: ModelName) -> ArtifactRef:
    return ArtifactRef(artifact.id, artifact.slug, artifact.format, model, artifact_spec(artifact))


def runtime_ref(runtime: Runtime) -> RuntimeRef:
    return RuntimeRef(
        runtime.id,
        runtime.slug,
        runtime.name,
        tuple(runtime.formats),
        tuple(runtime.platforms),
        runtime.tensor_parallel,
        runtime.min_version,
    )


def hardware_ref(hardware: Hardware) -> HardwareRef:
    basis = hardware.basis.get("bandwidth_gb_s_per_gpu", {}).get("basis", "published")
    return HardwareRef(
        hardware.id,
        hardware.slug,
        hardware.name,
        hardware.platform,
        hardware.gpu_count,
        hardware.memory_gb_per_gpu,
        hardware.bandwidth_gb_s_per_gpu,
        basis,
    )


def profile_ref(profile: Profile) -> ProfileRef:
    return ProfileRef(profile.id, profile.slug)


Ref = TypeVar("Ref", ModelRef, ArtifactRef, RuntimeRef, HardwareRef, ProfileRef)


def by_slug(refs: Iterable[Ref]) -> Mapping[str, Ref]:
    return MappingProxyType({ref.slug: ref for ref in refs})


def load_references(session: Session, definition: int) -> CatalogReferences:
    """Read the catalog as it stands in the session's transaction."""
    catalog = CatalogRepository(session)
    models = [model_ref(model) for model in catalog.list_models_with_artifacts()]
    return CatalogReferences(
        definition=definition,
        models=by_slug(models),
        artifacts=by_slug(artifact for model in models for artifact in model.artifacts),
        runtimes=by_slug(runtime_ref(runtime) for runtime in catalog.list_runtimes()),
        hardware=by_slug(hardware_ref(hardware) for hardware in catalog.list_hardware()),
        profiles=by_slug(profile_ref(profile) for profile in catalog.list_profiles()),
    )


class ReferenceCache:
    """The latest snapshot. The definition is read before the rows, in the same
    transaction, so a snapshot is never older than the number it is kept under; a database
    with another definition (another file, a test's copy) simply reloads."""

    def __init__(self) -> None:
        self._latest: CatalogReferences | None = None
        self._loading = threading.Lock()

    def get(self, session: Session, definition: int | None = None) -> CatalogReferences:
        """The snapshot for `definition` (read in the session's transaction by a caller that
        read it with something else), or for the definition read now."""
        if definition is None:
            definition = current_definition(session)
        latest = self._latest
        if latest is not None and latest.definition == definition:
            return latest
        with self._loading:  # one load when many requests see the change at once
            latest = self._latest
            if latest is None or latest.definition != definition:
                latest = load_references(session, definition)
                self._latest = latest
        return latest

    def held(self, session: Session) -> CatalogReferences:
        """The latest snapshot as it is, with no query (one is read when there is none):
        for a writer that checks the definition when it writes."""
        return self._latest or self.get(session)

    def clear(self) -> None:
        self._latest = None


REFERENCES = ReferenceCache()  # one per process


def catalog_references(session: Session, definition: int | None = None) -> CatalogReferences:
    return REFERENCES.get(session, definition)


def held_references(session: Session) -> CatalogReferences:
    return REFERENCES.held(session)
