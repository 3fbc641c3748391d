"""The whole catalog resolved from scratch: what a catalog revision costs before pages serve.

Every model's recipes on every hardware configuration under every profile, as
``RecipeCache`` resolves them (inputs loaded, every route assessed), in one process
against a seeded SQLite file; the inputs are loaded for the whole catalog at once
(``load_catalog_inputs``), so the rows every model reads are loaded once. Prints wall
and CPU seconds (best and median of several runs: on a shared machine the CPU figure
moves less), then how many times the estimator ran in one pass, a count that does not
depend on the machine. Asserts nothing.

    .venv/bin/python tests/perf/bench_catalog_recompute.py [--runs 7]
"""

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.catalog.repository import CatalogRepository  # noqa: E402
from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker, session_scope, upgrade_database  # noqa: E402
from app.resolve import load_catalog_inputs  # noqa: E402
from app.resolve.service import ResolvedModel  # noqa: E402

# (function name, file under app/) whose calls are counted in one pass; functions of one
# name in one file (a module function and a method) are counted together.
COUNTED = (
    ("estimate", "estimate/estimator.py"),
    ("size", "estimate/estimator.py"),
    ("estimate", "estimate/shared.py"),
    ("size", "estimate/shared.py"),
    ("fits", "estimate/shared.py"),
    ("_prepare", "estimate/estimator.py"),
    ("_prepare", "estimate/shared.py"),
    ("assess", "estimate/fit.py"),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database_url=f"sqlite:///{folder}/perf.db", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        engine = make_engine(settings)
        with make_sessionmaker(engine)() as session:
            repo = CatalogRepository(session)
            models = len(repo.list_models())
            hardware = list(repo.list_hardware())
            recipes = 0

            def recompute() -> None:
                nonlocal recipes
                recipes = 0
                for inputs in load_catalog_inputs(session):
                    resolved = ResolvedModel(inputs, hardware)
                    recipes += sum(len(row.recipes) for row in resolved.rows)
                session.expire_all()  # the next pass loads its inputs again

            walls, cpus = [], []
            for _ in range(args.runs):
                wall, cpu = time.perf_counter(), time.process_time()
                recompute()
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            profile = cProfile.Profile()
            profile.runcall(recompute)
        engine.dispose()
    print(
        f"whole catalog ({models} models x {len(hardware)} configurations, {recipes} "
        f"recipes), {args.runs} runs:\n"
        f"  wall best {min(walls):.3f} s, median {statistics.median(walls):.3f} s\n"
        f"  CPU  best {min(cpus):.3f} s, median {statistics.median(cpus):.3f} s"
    )
    calls: Counter[tuple[str, str]] = Counter()
    for (file, _, name), (_, count, *_) in pstats.Stats(profile).stats.items():
        calls[name, file.split("/app/")[-1]] += count
    counted = ", ".join(
        f"{name} ({path.removeprefix('estimate/')}) {calls[name, path]:,}"
        for name, path in COUNTED
        if (name, path) in calls
    )
    print(f"  calls in one pass: {counted}")


if __name__ == "__main__":
    main()
