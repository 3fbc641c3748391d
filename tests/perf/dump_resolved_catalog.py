"""Every figure of the resolved catalog as JSON, to compare two versions of the resolution.

Seeds a fresh SQLite file, resolves every model x hardware x profile recipe (and every
route assessment behind them) the way `RecipeCache` does, then a set of custom machines
through the selector (what `POST /api/estimate` resolves), and writes it all as JSON with
sorted keys and floats written in full (repr), so two dumps that agree are byte-identical:

    .venv/bin/python tests/perf/dump_resolved_catalog.py before.json
    ... change the resolution ...
    .venv/bin/python tests/perf/dump_resolved_catalog.py after.json && cmp before.json after.json
"""

import argparse
import dataclasses
import enum
import json
import sys
import tempfile
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.asking.form import run_selector  # noqa: E402
from app.catalog.repository import CatalogRepository  # noqa: E402
from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker, session_scope, upgrade_database  # noqa: E402
from app.estimate.estimator import Sizing  # noqa: E402
from app.resolve import RecipeService, load_catalog_inputs  # noqa: E402
from app.resolve.fit_table import ResolvedModel  # noqa: E402

# Machines described by numbers, as the selector and `POST /api/estimate` take them.
CUSTOM = (
    {"memory_gb_per_gpu": 96, "bandwidth_gb_s_per_gpu": 1792, "gpu_count": 4},
    {"memory_gb_per_gpu": 24, "bandwidth_gb_s_per_gpu": 1008},
    {"memory_gb_per_gpu": 128, "unified_memory": True, "platform": "metal"},
    {"memory_gb_per_gpu": 80, "gpu_count": 8, "interconnect": "nvlink", "context": 32768},
    {"memory_gb_per_gpu": 16, "concurrency": 4, "profile": "long-context"},
)
# Fields holding caches or the estimator's working state, not figures.
SKIPPED = frozenset({"request", "memo", "shared", "prebuilt"})


def _field_names(value) -> list[str]:
    if isinstance(value, msgspec.Struct):
        names = value.__struct_fields__
    else:
        names = [f.name for f in dataclasses.fields(value)]
    return [name for name in names if name not in SKIPPED]


def plain(value):
    """A JSON-ready copy: catalog rows and estimator specs by slug, floats in full."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str | int | bool) or value is None:
        return value
    if hasattr(value, "__table__"):  # a catalog row: its slug names it
        return getattr(value, "slug", None) or getattr(value, "id", None)
    if isinstance(value, Sizing):  # its breakdown is built when read
        return {"memory": plain(value.memory), "max_context": value.max_context}
    if dataclasses.is_dataclass(value) or isinstance(value, msgspec.Struct):
        if type(value).__name__.endswith("Spec"):
            return f"{type(value).__name__}:{value.slug}"
        return {name: plain(getattr(value, name)) for name in _field_names(value)}
    if isinstance(value, dict):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(plain(v) for v in value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return repr(value)


def dump(session) -> dict:
    hardware = list(CatalogRepository(session).list_hardware())
    recipes, assessments = {}, {}
    for inputs in load_catalog_inputs(session):
        resolved = ResolvedModel(inputs, hardware)
        for row in resolved.rows:
            for recipe in row.recipes:
                key = f"{inputs.model.slug}/{row.hardware.slug}/{recipe.profile.slug}"
                recipes[key] = plain(recipe)
        for (hardware_id, context, narrowed), found in inputs.assessments.items():
            key = f"{inputs.model.slug}/{hardware_id}/{context}/{narrowed}"
            assessments[key] = plain(found)
    service = RecipeService(session)
    custom = {}
    for inputs in load_catalog_inputs(session):
        for number, machine in enumerate(CUSTOM):
            raw = {"hardware": "custom", **machine}
            result = run_selector(service, inputs, raw)
            custom[f"{inputs.model.slug}/{number}"] = plain(
                {"errors": result.errors, "recipe": result.recipe}
            )
    return {"recipes": recipes, "assessments": assessments, "custom": custom}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database_url=f"sqlite:///{folder}/dump.db", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        engine = make_engine(settings)
        with make_sessionmaker(engine)() as session:
            figures = dump(session)
        engine.dispose()
    args.output.write_text(json.dumps(figures, sort_keys=True, indent=1, ensure_ascii=False))
    print(
        f"{len(figures['recipes'])} recipes, {len(figures['assessments'])} assessments, "
        f"{len(figures['custom'])} custom estimates -> {args.output}"
    )


if __name__ == "__main__":
    main()
