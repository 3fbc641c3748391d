"""The five seed files together, and the checks that span them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import model_validator

from app.catalog.seed_schema.errors import SeedError, entry_label, pair_label
from app.catalog.seed_schema.fields import StrictModel
from app.catalog.seed_schema.hardware import SeedHardware
from app.catalog.seed_schema.models import SeedArtifact, SeedModel
from app.catalog.seed_schema.profiles import SeedProfile
from app.catalog.seed_schema.runtimes import SeedRuntime
from app.catalog.seed_schema.verified_pairs import SeedVerifiedPair

# file name -> the top-level key that holds its list of entries
SEED_FILES: dict[str, str] = {
    "models.yaml": "models",
    "hardware.yaml": "hardware",
    "runtimes.yaml": "runtimes",
    "profiles.yaml": "profiles",
    "verified_pairs.yaml": "verified_pairs",
}

REQUIRED_PROFILES = ("balanced", "speed", "long-context")

# the files whose entries are named by a unique slug (verified pairs are named by their pair)
SLUGGED_KEYS = ("models", "hardware", "runtimes", "profiles")


class SeedCatalog(StrictModel):
    """All five seed files together, with the references between them checked."""

    models: list[SeedModel]
    hardware: list[SeedHardware]
    runtimes: list[SeedRuntime]
    profiles: list[SeedProfile]
    verified_pairs: list[SeedVerifiedPair]

    @model_validator(mode="after")
    def _check_references(self) -> SeedCatalog:
        problems = self.problems()
        if problems:
            raise ValueError(str(problems[0]))
        return self

    # lookups
    def model(self, slug: str) -> SeedModel:
        return self._index("models")[slug]

    def hardware_entry(self, slug: str) -> SeedHardware:
        return self._index("hardware")[slug]

    def runtime(self, slug: str) -> SeedRuntime:
        return self._index("runtimes")[slug]

    def profile(self, slug: str) -> SeedProfile:
        return self._index("profiles")[slug]

    def artifact(self, slug: str) -> SeedArtifact:
        return self.artifacts()[slug][1]

    def artifacts(self) -> dict[str, tuple[SeedModel, SeedArtifact]]:
        """Every artifact by slug, with the model it belongs to."""
        return {a.slug: (m, a) for m in self.models for a in m.artifacts}

    def _index(self, key: str) -> dict[str, Any]:
        return {entry.slug: entry for entry in getattr(self, key)}

    def problems(self, files: dict[str, str] | None = None) -> list[SeedError]:
        """Problems between entries: duplicates, dangling references, unloadable files.

        ``files`` maps a top-level key (``models``...) to the file name shown in errors.
        """
        label = {key: f"seed_data/{name}" for name, key in SEED_FILES.items()}
        label.update(files or {})
        found: list[SeedError] = []
        for key in SLUGGED_KEYS:
            found += _duplicates(label[key], key, getattr(self, key))
        found += self._artifact_problems(label["models"])
        found += self._reported_problems(label["models"])
        found += self._hardware_problems(label["hardware"])
        found += self._profile_problems(label["profiles"])
        found += self._pair_problems(label["verified_pairs"])
        return found

    def _artifact_problems(self, file: str) -> Iterator[SeedError]:
        seen: set[str] = set()
        loadable = {fmt for runtime in self.runtimes for fmt in runtime.formats}
        for m_index, model in enumerate(self.models):
            entry = entry_label("models", m_index, model.slug)
            for a_index, artifact in enumerate(model.artifacts):
                where = f"artifacts[{a_index}]"
                if artifact.slug in seen:
                    yield SeedError(
                        file, entry, f"{where}.slug", f"duplicate artifact slug {artifact.slug!r}"
                    )
                seen.add(artifact.slug)
                if artifact.format not in loadable:
                    yield SeedError(
                        file, entry, f"{where}.format", f"no runtime loads {artifact.format} files"
                    )

    def _reported_problems(self, file: str) -> Iterator[SeedError]:
        hardware = self._index("hardware")
        runtimes = self._index("runtimes")
        for m_index, model in enumerate(self.models):
            entry = entry_label("models", m_index, model.slug)
            for r_index, report in enumerate(model.reported):
                where = f"reported[{r_index}]"
                if report.hardware not in hardware:
                    yield SeedError(
                        file, entry, f"{where}.hardware", f"unknown hardware {report.hardware!r}"
                    )
                if report.runtime is not None and report.runtime not in runtimes:
                    yield SeedError(
                        file, entry, f"{where}.runtime", f"unknown runtime {report.runtime!r}"
                    )

    def _hardware_problems(self, file: str) -> Iterator[SeedError]:
        served = {p for runtime in self.runtimes for p in runtime.platforms}
        for index, entry in enumerate(self.hardware):
            if entry.platform not in served:
                yield SeedError(
                    file,
                    entry_label("hardware", index, entry.slug),
                    "platform",
                    f"no runtime runs on {entry.platform}",
                )

    def _profile_problems(self, file: str) -> Iterator[SeedError]:
        missing = [slug for slug in REQUIRED_PROFILES if slug not in self._index("profiles")]
        if missing:
            yield SeedError(file, None, "profiles", f"missing profile(s): {', '.join(missing)}")

    def _pair_problems(self, file: str) -> Iterator[SeedError]:
        artifacts = self.artifacts()
        runtimes = self._index("runtimes")
        seen: set[tuple[str, str]] = set()
        for index, pair in enumerate(self.verified_pairs):
            entry = pair_label(index, pair.artifact, pair.runtime)
            found = artifacts.get(pair.artifact)
            artifact = None if found is None else found[1]
            for field, message in _pair_reference_problems(
                pair, artifact, runtimes.get(pair.runtime)
            ):
                yield SeedError(file, entry, field, message)
            key = (pair.artifact, pair.runtime)
            if key in seen:
                yield SeedError(file, entry, "runtime", "duplicate pair")
            seen.add(key)


def _pair_reference_problems(
    pair: SeedVerifiedPair, artifact: SeedArtifact | None, runtime: SeedRuntime | None
) -> Iterator[tuple[str, str]]:
    """(field, message) for each way a verified pair's artifact and runtime do not fit."""
    if artifact is None:
        yield "artifact", f"unknown artifact {pair.artifact!r}"
    elif artifact.kind != "official":
        yield (
            "artifact",
            (
                f"{pair.artifact!r} is a community artifact; only official "
                "artifacts are verified in the seed"
            ),
        )
    if runtime is None:
        yield "runtime", f"unknown runtime {pair.runtime!r}"
    elif artifact is not None and artifact.format not in runtime.formats:
        yield "runtime", f"{pair.runtime} does not load {artifact.format} files"


def _duplicates(file: str, key: str, entries: Iterable[Any]) -> Iterator[SeedError]:
    """Every entry whose slug an earlier entry already took."""
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if entry.slug in seen:
            yield SeedError(
                file, entry_label(key, index, entry.slug), "slug", f"duplicate slug {entry.slug!r}"
            )
        seen.add(entry.slug)
