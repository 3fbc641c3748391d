"""The process under load: a warm-up after start, the garbage collector kept out of the
request path, its pauses measured, and connections that readers and writers do not take
from each other."""

import gc
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import fastapi.routing
import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.config import Settings
from app.db import CONNECTIONS_OPENED, WRITE_LOCK_HOLDS
from app.main import REVISION_READS_AT_ONCE, SUBMISSIONS_AT_ONCE, create_app
from app.warm_up import endpoints
from app.web import templates
from tests.live_server import LiveServer
from tests.recipes.test_serving import PAGE
from tests.records.conftest import VALID, seeded_slug


@pytest.fixture
def restored_collector() -> Iterator[None]:
    """The warm-up freezes this test process's objects and sets its thresholds: undone."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_collector")
def test_the_warm_up_resolves_every_model_compiles_every_template_then_freezes(
    settings: Settings, session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    warm = settings.model_copy(update={"warm_up": True, "gc_thresholds": (40_000, 15, 50)})
    templates.env.cache.clear()  # type: ignore[union-attr]
    endpoints_read = getattr(fastapi.routing, "_endpoint_context_cache", None)
    if endpoints_read is not None:
        endpoints_read.clear()
    collected_in: list[str] = []

    def note_collection(phase: str, _info: dict) -> None:
        if phase == "start":
            collected_in.append(threading.current_thread().name)

    gc.callbacks.append(note_collection)
    try:
        with TestClient(create_app(warm)) as client:
            thread: threading.Thread = client.app.state.warm_up  # type: ignore[attr-defined]
            thread.join(timeout=120)
            assert not thread.is_alive()
            assert client.get(PAGE).status_code == 200
    finally:
        gc.callbacks.remove(note_collection)
    # It ran through (a step that fails is logged, and the first requests do it instead),
    # building a detail page in each language and reading every endpoint's source.
    assert not [record for record in caplog.records if record.name == "servebook.warm_up"]
    if endpoints_read is not None:  # FastAPI's own, where this version has it
        calls = {id(call) for call in endpoints(client.app.router.routes)}
        assert len(calls) > 50 and calls <= set(endpoints_read)
    # What it builds stays alive and is frozen: no collection walks it on the way.
    assert "servebook-warm-up" not in collected_in
    assert gc.isenabled()
    slugs = {model.slug for model in CatalogRepository(session).list_models()}
    assert set(client.app.state.recipe_cache.models) == slugs  # type: ignore[attr-defined]
    assert len(templates.env.cache) >= len(templates.env.list_templates(extensions=["html"]))
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (40_000, 15, 50)


def test_gc_paused_pauses_are_metrics(client: TestClient) -> None:
    gc.collect()
    text = client.get("/metrics").text
    for name in (
        "servebook_gc_pause_max_seconds",
        "servebook_gc_pause_max_cpu_seconds",
        "servebook_gc_pauses",
        "servebook_database_connections_opened",
        "servebook_sqlite_write_held_max_seconds",
        "servebook_sqlite_write_held_cpu_seconds_total",
    ):
        line = next(line for line in text.splitlines() if line.startswith(name + " "))
        assert float(line.split()[1]) >= 0, line
    pauses = next(line for line in text.splitlines() if line.startswith("servebook_gc_pauses "))
    assert float(pauses.split()[1]) >= 1  # the collection above was timed
    # ... as a full one: its generation's largest pause is no longer zero.
    full = 'servebook_gc_pause_max_cpu_seconds_by_generation{generation="2"} '
    line = next(line for line in text.splitlines() if line.startswith(full))
    assert float(line.split()[1]) > 0, line


def test_readers_and_writers_keep_their_connections_open(
    live_server: LiveServer, session: Session
) -> None:
    """Sixteen readers of a cached page beside four writers: each load has a pool of its
    own, as large as what runs at once, so no connection is opened past them. On one
    shared pool the readers took every connection and opened and closed one per request
    past it, and the writers waited behind them."""
    base = live_server.base_url
    body = {**VALID, "hardware": seeded_slug(session, "8x-h200")}
    httpx.get(base + PAGE, timeout=30).raise_for_status()
    httpx.post(base + "/api/records", json=body, timeout=30).raise_for_status()
    opened = CONNECTIONS_OPENED.count

    def read(_: int) -> None:
        with httpx.Client(base_url=base, timeout=30) as reader:
            for _ in range(40):
                assert reader.get(PAGE).status_code == 200

    def write(number: int) -> None:
        with httpx.Client(base_url=base, timeout=30) as writer:
            for n in range(10):
                created = writer.post("/api/records", json={**body, "notes": f"{number}-{n}"})
                assert created.status_code == 201, created.text

    with ThreadPoolExecutor(20) as pool:
        work = [pool.submit(read, n) for n in range(16)]
        work += [pool.submit(write, n) for n in range(4)]
        for done in work:
            done.result()
    assert CONNECTIONS_OPENED.count - opened <= REVISION_READS_AT_ONCE + SUBMISSIONS_AT_ONCE
    # Each hold is timed on the clock and in the holding thread's CPU, which it cannot pass.
    holds = WRITE_LOCK_HOLDS.read()
    assert holds.count >= 40 and 0 < holds.cpu_s <= holds.total_s
