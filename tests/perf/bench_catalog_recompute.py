"""The whole catalog resolved from scratch: what a catalog revision costs before pages serve.

Every model's recipes on every hardware configuration under every profile, as
``RecipeCache`` resolves them (inputs loaded, every route assessed), in one process
against a seeded SQLite file; the inputs are loaded for the whole catalog at once
(``load_catalog_inputs``), so the rows every model reads are loaded once. Then the work of
one ``POST /api/estimate`` for a machine described by numbers. With ``--calibrated``,
accepted records from three submitters first move SGLang's ranges (its pool and one
class), so the pass puts the records' ranges around every estimate they reach. Prints both
against their targets (tests/perf/resolve_figures.py: median, best and max of several runs, wall and
CPU; on a shared machine the CPU figure moves less), then how many times the estimator
ran in one pass, a count that does not depend on the machine. Asserts nothing.

    .venv/bin/python tests/perf/bench_catalog_recompute.py [--runs 7] [--estimates 50]
        [--calibrated]
"""

import argparse
import copy
import cProfile
import pstats
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy.orm import Session  # noqa: E402

from app.accuracy.evidence import range_book  # noqa: E402
from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker, session_scope, upgrade_database  # noqa: E402
from app.records.review.steps import review_record  # noqa: E402
from app.records.storage.service import submit_record  # noqa: E402
from tests.perf.resolve_figures import catalog_recompute, custom_estimate, recompute  # noqa: E402
from tests.records.conftest import VALID, seeded_slug  # noqa: E402

# (function name, file under app/) whose calls are counted in one pass; functions of one
# name in one file (a module function and a method) are counted together.
COUNTED = (
    ("estimate", "estimate/estimator.py"),
    ("size", "estimate/estimator.py"),
    ("estimate", "estimate/catalog_pass.py"),
    ("size", "estimate/catalog_pass.py"),
    ("fits", "estimate/catalog_pass.py"),
    ("_prepare", "estimate/estimator.py"),
    ("_prepare", "estimate/catalog_pass.py"),
    ("assess", "estimate/fit.py"),
)


def calibrate(session: Session) -> str:
    """Accept agreeing records from three submitters on 8x H200 with SGLang."""
    body = copy.deepcopy(VALID)
    body["hardware"] = seeded_slug(session, "8x-h200")
    for submitter in ("ana", "bo", "chen"):
        for run in range(2):
            body["notes"] = f"{submitter} run {run}"
            found = submit_record(session, body, provenance="api", submitted_by=submitter)
            accepted = {"action": "accept", "reason": "reproduced"}
            review_record(session, found.record.id, accepted, "maintainer")
    return ", ".join(sorted(range_book(session).updated))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--estimates", type=int, default=50)
    parser.add_argument("--calibrated", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database_url=f"sqlite:///{folder}/perf.db", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        if args.calibrated:
            with session_scope(settings) as session:
                print(f"  ranges moved by accepted records: {calibrate(session)}")
        engine = make_engine(settings)
        sessions = make_sessionmaker(engine)
        with sessions() as session:
            print(catalog_recompute(session, args.runs))
            profile = cProfile.Profile()
            profile.runcall(recompute, session)
        print(custom_estimate(sessions, settings, args.estimates))
        engine.dispose()
    calls: Counter[tuple[str, str]] = Counter()
    for (file, _, name), (_, count, *_) in pstats.Stats(profile).stats.items():
        calls[name, file.split("/app/")[-1]] += count
    counted = ", ".join(
        f"{name} ({path.removeprefix('estimate/')}) {calls[name, path]:,}"
        for name, path in COUNTED
        if (name, path) in calls
    )
    print(f"  calls in one catalog pass: {counted}")


if __name__ == "__main__":
    main()
