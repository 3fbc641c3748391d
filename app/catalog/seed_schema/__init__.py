"""Schema of the curated catalog in ``seed_data/*.yaml``, and its loader.

Five files make the catalog: ``models.yaml`` (models with their artifacts and the
figures other people reported), ``hardware.yaml``, ``runtimes.yaml``,
``profiles.yaml`` and ``verified_pairs.yaml``; each has its module here.

Every number that can be looked up or worked out carries its basis. In YAML a plain
scalar means the number was read in a source (basis ``published``); a mapping
``{value: X, basis: exact|published|derived|assumed, note: "..."}`` states the basis
explicitly. Both forms load as a :class:`Sourced` value (``fields.py``).

Prose readers see (descriptions, notes, profile texts) is a plain string (English) or a
mapping ``{en: ..., ko: ..., ja: ...}`` that must have ``en``; both load as :class:`Prose`.

:func:`load_catalog` reads the files, validates every entry, then checks the
references between files. The first problem found is raised as a :class:`SeedError`
that names the file, the entry (index and slug) and the field.
"""

from app.catalog.seed_schema.catalog import SEED_FILES, SeedCatalog
from app.catalog.seed_schema.errors import SeedError
from app.catalog.seed_schema.fields import LANGUAGES, Basis, Prose, Sourced
from app.catalog.seed_schema.hardware import SeedHardware
from app.catalog.seed_schema.loader import DEFAULT_SEED_DIR, load_catalog
from app.catalog.seed_schema.models import SeedArtifact, SeedModel, SeedReported
from app.catalog.seed_schema.profiles import SeedByGroup, SeedProfile
from app.catalog.seed_schema.runtimes import SeedBudget, SeedRuntime
from app.catalog.seed_schema.verified_pairs import SeedVerifiedPair

__all__ = [
    "DEFAULT_SEED_DIR",
    "LANGUAGES",
    "SEED_FILES",
    "Basis",
    "Prose",
    "Sourced",
    "SeedArtifact",
    "SeedBudget",
    "SeedByGroup",
    "SeedCatalog",
    "SeedError",
    "SeedHardware",
    "SeedModel",
    "SeedProfile",
    "SeedReported",
    "SeedRuntime",
    "SeedVerifiedPair",
    "load_catalog",
]
