"""Load the YAML catalog into the database, idempotently.

A second run with unchanged files changes nothing; an edited file updates its rows.
Validation happens before the first write, and the caller's transaction makes the
load all-or-nothing.
"""

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.revision import bump_definition
from app.catalog.seed_schema import Prose, SeedCatalog, SeedError, Sourced
from app.models import (
    Artifact,
    Hardware,
    LlmModel,
    OfficialPairing,
    Profile,
    ReportedFigure,
    Runtime,
)


@dataclass
class SeedReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.removed)

    def summary(self) -> str:
        if not self.changed:
            return "catalog already up to date"
        return (
            f"{len(self.created)} created, {len(self.updated)} updated, {len(self.removed)} removed"
        )


def split_sourced(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Separate plain values from the basis of each sourced number."""
    plain: dict[str, Any] = {}
    basis: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Sourced):
            plain[name] = value.value
            basis[name] = {"basis": value.basis, "note": value.note}
        else:
            plain[name] = value
    return plain, basis


def split_prose(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The English of every prose field, and its other languages by field.

    A list of texts keeps, per language, the whole list with English where an item has no
    translation, so a page shows every step in order.
    """
    plain: dict[str, Any] = {}
    translations: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Prose):
            plain[name] = value.en
            if value.translations():
                translations[name] = value.translations()
        elif isinstance(value, list) and value and all(isinstance(v, Prose) for v in value):
            plain[name] = [item.en for item in value]
            languages = {lang for item in value for lang in item.translations()}
            if languages:
                translations[name] = {
                    lang: [item.translations().get(lang, item.en) for item in value]
                    for lang in sorted(languages)
                }
        else:
            plain[name] = value
    return plain, translations


def split_seed(values: dict[str, Any]) -> dict[str, Any]:
    """A seed entry's values as its row stores them: plain numbers with their basis, English
    prose with its translations."""
    values, translations = split_prose(values)
    values, basis = split_sourced(values)
    return {**values, "basis": basis, "translations": translations}


def apply(row: Any, values: dict[str, Any]) -> bool:
    """Set attributes that differ; report whether anything changed."""
    changed = False
    for name, value in values.items():
        if getattr(row, name) != value:
            setattr(row, name, value)
            changed = True
    return changed


class CatalogSeeder:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.repo = CatalogRepository(session)
        self.report = SeedReport()

    def upsert(self, model_class: type, key: dict[str, Any], values: dict[str, Any]) -> Any:
        label = f"{model_class.__tablename__}:{'/'.join(str(v) for v in key.values())}"
        row = self.repo.find_by(model_class, **key)
        if row is None:
            row = model_class(**key, **values)
            self.session.add(row)
            self.report.created.append(label)
        elif apply(row, values):
            self.report.updated.append(label)
        self.session.flush()
        return row

    def seed(self, catalog: SeedCatalog) -> SeedReport:
        runtimes = {r.slug: self.seed_runtime(r) for r in catalog.runtimes}
        hardware = {h.slug: self.seed_hardware(h) for h in catalog.hardware}
        artifacts: dict[str, Artifact] = {}
        for seed_model in catalog.models:
            model = self.seed_model(seed_model)
            for seed_artifact in seed_model.artifacts:
                artifacts[seed_artifact.slug] = self.seed_artifact(model, seed_artifact)
            self.seed_reported(model, seed_model.reported, hardware)
        for seed_profile in catalog.profiles:
            self.seed_profile(seed_profile)
        self.seed_pairings(catalog, artifacts, runtimes)
        if self.report.changed:
            bump_definition(self.session)  # the revision too
        return self.report

    def seed_model(self, seed: Any) -> LlmModel:
        fields = seed.model_dump(exclude={"slug", "artifacts", "reported", "moe"})
        values = split_seed({name: getattr(seed, name) for name in fields})
        values.update(is_moe=seed.moe)
        return self.upsert(LlmModel, {"slug": seed.slug}, values)

    def seed_artifact(self, model: LlmModel, seed: Any) -> Artifact:
        self.refuse_to_orphan_records(model, seed.slug)
        raw = {name: getattr(seed, name) for name in seed.model_dump(exclude={"slug"})}
        values, basis = split_sourced(raw)
        values.update(model_id=model.id, basis=basis)
        return self.upsert(Artifact, {"slug": seed.slug}, values)

    def refuse_to_orphan_records(self, model: LlmModel, slug: str) -> None:
        """Rows are updated by key and never deleted, so records keep every row they name,
        except when an artifact's slug moves to another model: the records of the old model
        would then name an artifact that is no longer one of its files. That seed is
        refused (the whole load with it) rather than leave them so."""
        artifact = self.repo.find_by(Artifact, slug=slug)
        if artifact is None or artifact.model_id == model.id:
            return
        records = self.repo.records_of_artifact(artifact.id, artifact.model_id)
        if not records:
            return
        old = self.session.get(LlmModel, artifact.model_id)
        old_slug = old.slug if old is not None else artifact.model_id
        raise SeedError(
            "seed_data/models.yaml",
            f"models (slug {model.slug})",
            f"artifacts (slug {slug})",
            f"this artifact belongs to model {old_slug} in the database, and {records} "
            f"record(s) of {old_slug} name it; moving it to {model.slug} would leave them "
            f"naming a file of another model. Give the artifact under {model.slug} a new "
            f"slug (the records keep the old one); nothing was loaded",
        )

    def seed_runtime(self, seed: Any) -> Runtime:
        # The format matrix is reference data with sources; only `formats` drives routes.
        values = seed.model_dump(exclude={"slug", "format_support", "notes"})
        prose, translations = split_prose({"notes": seed.notes})
        values.update(prose, translations=translations)
        return self.upsert(Runtime, {"slug": seed.slug}, values)

    def seed_hardware(self, seed: Any) -> Hardware:
        fields = seed.model_dump(exclude={"slug"})
        values = split_seed({name: getattr(seed, name) for name in fields})
        return self.upsert(Hardware, {"slug": seed.slug}, values)

    def seed_profile(self, seed: Any) -> Profile:
        texts = ("name", "summary", "stop_conditions", "measurement_order")
        values, translations = split_prose({name: getattr(seed, name) for name in texts})
        # The knobs as the seed names them; everything but the texts and order.
        settings = seed.model_dump(exclude={"slug", "sort", *texts})
        values.update(sort=seed.sort, settings=settings, translations=translations)
        return self.upsert(Profile, {"slug": seed.slug}, values)

    def seed_reported(self, model: LlmModel, reported: list[Any], hardware: dict) -> None:
        wanted = {
            (hardware[r.hardware].id, r.metric): dict(
                low=r.low, high=r.high, source=r.source, note=r.note
            )
            for r in reported
        }
        for row in self.repo.reported_figures(model.id):
            key = (row.hardware_id, row.metric)
            if key not in wanted:
                self.session.delete(row)
                self.report.removed.append(f"reported_figures:{model.slug}/{row.metric}")
        for (hardware_id, metric), values in wanted.items():
            self.upsert(
                ReportedFigure,
                {"model_id": model.id, "hardware_id": hardware_id, "metric": metric},
                values,
            )

    def seed_pairings(self, catalog: SeedCatalog, artifacts: dict, runtimes: dict) -> None:
        wanted = set()
        for pair in catalog.verified_pairs:
            key = {
                "artifact_id": artifacts[pair.artifact].id,
                "runtime_id": runtimes[pair.runtime].id,
            }
            wanted.add(tuple(key.values()))
            values = dict(
                min_version=pair.min_version,
                max_version=pair.max_version,
                source_url=pair.source_url,
                note=pair.note,
            )
            self.upsert(OfficialPairing, key, values)
        for row in self.repo.official_pairings():
            if (row.artifact_id, row.runtime_id) not in wanted:
                self.session.delete(row)
                self.report.removed.append(f"official_pairings:{row.artifact_id}/{row.runtime_id}")
        self.session.flush()


def seed_catalog(session: Session, catalog: SeedCatalog) -> SeedReport:
    """Bring the catalog tables in line with the seed files (the caller commits)."""
    return CatalogSeeder(session).seed(catalog)
