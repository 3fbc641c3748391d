"""The whole catalog's inputs, loaded in a handful of queries, are each model's own inputs:
the same rows, the same accepted evidence, and so the same recipes."""

from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.resolve import ModelInputs, load_catalog_inputs, load_model_inputs
from app.resolve.fit_table import ResolvedModel
from tests.recipes.test_consistency import MAC_256, submit_and_accept


def described(inputs: ModelInputs) -> dict:
    """What resolution reads of the inputs, as plain values."""
    return {
        "model": inputs.model.slug,
        "artifacts": [a.slug for a in inputs.model.artifacts],
        "runtimes": [r.slug for r in inputs.runtimes],
        "profiles": [p.slug for p in inputs.profiles],
        "verified": {
            (a.slug, r.slug): vars(inputs.verified.evidence(a.id, r.id))
            for a in inputs.model.artifacts
            for r in inputs.runtimes
        },
        "measured": list(inputs.measured),
        "reported": {h: (f.low, f.high, f.note) for h, f in inputs.reported.items()},
    }


def recipes(inputs: ModelInputs, hardware: list) -> list[tuple]:
    resolved = ResolvedModel(inputs, hardware)
    return [
        (r.hardware.slug, r.profile.slug, r.verdict, r.status, r.reason, r.measured, r.commands)
        for row in resolved.rows
        for r in row.recipes
    ]


def test_catalog_inputs_are_each_models_inputs_with_accepted_records(
    client: TestClient, settings: Settings
) -> None:
    submit_and_accept(client)
    submit_and_accept(
        client,
        hardware=MAC_256,
        gpu_count=1,
        artifact="glm-5.3-flash-mlx-4bit",
        runtime="mlx-lm",
        runtime_version="0.31.2",
        command="mlx_lm.server --model x",
        applied_values={"context": 4096},
        measurements=[
            {"context_length": 4096, "concurrency": 1, "decode_tokens_per_s": 84.5},
            {"context_length": 8192, "concurrency": 2, "decode_tokens_per_s": 80.0},
        ],
    )
    engine = make_engine(settings)
    with make_sessionmaker(engine)() as session:
        hardware = list(CatalogRepository(session).list_hardware())
        slugs = [m.slug for m in CatalogRepository(session).list_models()]
        statements = count_statements(session)
        catalog = load_catalog_inputs(session)
        loaded = len(statements)
        assert [inputs.model.slug for inputs in catalog] == slugs
        # A fixed count (the catalog, its routes, evidence, calibrations, the record-updated
        # ranges...), never one per model.
        assert loaded <= 12, f"{loaded} queries for {len(slugs)} models"
        for inputs in catalog:
            own = load_model_inputs(session, inputs.model.slug)
            assert described(inputs) == described(own)
            assert recipes(inputs, hardware) == recipes(own, hardware)
        # Each record's single-request point, not the concurrent ones, under its own model.
        points = [(i.model.slug, p.context_length) for i in catalog for p in i.measured]
        assert sorted(points) == [("glm-5.3-flash", 4096), ("glm-5.3-flash", 16384)]
    engine.dispose()


def count_statements(session: Session) -> list[str]:
    statements: list[str] = []
    event.listen(
        session.get_bind(),
        "before_cursor_execute",
        lambda conn, cursor, statement, *rest: statements.append(statement),
    )
    return statements
