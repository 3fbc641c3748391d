"""Resolve once, serve many: the catalog revision, ETags and 304s, a cache that every app
process brings up to date on a change (resolving again only what a review touched),
pagination and a query count that does not grow with the rows."""

import copy
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.revision import (
    MOST_CHANGES_READ,
    PRUNE_EVERY,
    Revisions,
    Touched,
    bump_revision,
    changes_since,
    current_revision,
    current_revisions,
)
from app.catalog.seed import seed_catalog
from app.catalog.seed_schema import load_catalog
from app.config import PROJECT_ROOT, Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.models import CatalogChange, CatalogState, Hardware
from app.page_cache import CachedBody, PageCache
from app.recipes.presenters import recipe_out
from app.resolve import ResolvedRecipe, load_model_inputs
from app.resolve.cache import RecipeCache
from app.resolve.fit_table import ResolvedModel
from tests.recipes.test_consistency import RECORD

GLM = "glm-5.3-flash"
FIT = f"/api/models/{GLM}/fit"
PAGE = f"/models/{GLM}"
DETAIL = f"/models/{GLM}/hardware/8x-h200-141gb/profiles/balanced"


def revision(session: Session) -> int:
    session.expire_all()
    return current_revision(session)


def revisions(session: Session) -> Revisions:
    session.rollback()  # a fresh read, not the session's first
    return current_revisions(session)


def post_record(client: TestClient) -> int:
    created = client.post("/api/records", json=copy.deepcopy(RECORD))
    assert created.status_code == 201, created.text
    return created.json()["id"]


def test_writes_that_change_a_figure_bump_the_revision_and_every_write_the_records_revision(
    client: TestClient, session: Session
) -> None:
    start = revisions(session)
    assert start.catalog >= 1
    seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))  # nothing new
    assert revisions(session) == start
    record_id = post_record(client)  # pending: no figure changes
    assert revisions(session) == Revisions(start.catalog, start.records + 1)
    reviewed = client.post(f"/api/records/{record_id}/review", json={"action": "accept"})
    assert reviewed.status_code == 200, reviewed.text
    assert revisions(session) == Revisions(start.catalog + 1, start.records + 2)
    refused = client.post(f"/api/records/{record_id}/review", json={"action": "accept"})
    assert refused.status_code == 409  # nothing written
    assert revisions(session) == Revisions(start.catalog + 1, start.records + 2)
    rejected = client.post(
        f"/api/records/{post_record(client)}/review", json={"action": "reject", "reason": "no"}
    )
    assert rejected.status_code == 200, rejected.text
    assert revisions(session) == Revisions(start.catalog + 1, start.records + 4)


@pytest.mark.parametrize("url", ["/", PAGE, FIT, DETAIL, f"/api{DETAIL}"])
def test_etag_answers_304_until_what_the_page_shows_changes(client: TestClient, url: str) -> None:
    first = client.get(url)
    etag = first.headers["etag"]
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    record_id = post_record(client)
    after_pending = client.get(url, headers={"If-None-Match": etag})
    if "profiles" in url:  # the new record is counted on its recipe page, for review
        assert after_pending.status_code == 200 and after_pending.headers["etag"] != etag
        pending = "1 pending record to review" if url == DETAIL else '"pending":1'
        assert pending in after_pending.text
    else:  # a pending record changes no figure: the page it would not change stays
        assert after_pending.status_code == 304 and after_pending.headers["etag"] == etag
    accepted = client.post(f"/api/records/{record_id}/review", json={"action": "accept"})
    assert accepted.status_code == 200, accepted.text
    changed = client.get(url, headers={"If-None-Match": after_pending.headers["etag"]})
    assert changed.status_code == 200 and changed.headers["etag"] != etag


def test_fragment_and_page_have_their_own_etags(client: TestClient) -> None:
    page = client.get(PAGE)
    fragment = client.get(PAGE, headers={"HX-Request": "true"})
    assert page.headers["etag"] != fragment.headers["etag"]
    assert "<html" in page.text and "<html" not in fragment.text
    assert page.headers["vary"] == "HX-Request, Accept-Language, Cookie"
    # A page's ETag never stands for its fragment, nor an old revision for the new one.
    crossed = client.get(
        PAGE, headers={"HX-Request": "true", "If-None-Match": page.headers["etag"]}
    )
    assert crossed.status_code == 200 and "<html" not in crossed.text
    stale = client.get(PAGE, headers={"If-None-Match": 'W/"r0-page"'})
    assert stale.status_code == 200


def test_a_kept_body_is_answered_before_routing_as_the_route_answers_it(
    client: TestClient,
) -> None:
    rendered = client.get(DETAIL)
    kept = queries_for(client, DETAIL)
    assert kept == 1  # the revision alone: no session, no evidence, no known-good lookup
    again = client.get(DETAIL)
    assert again.content == rendered.content
    for header in ("etag", "content-type", "cache-control", "vary", "content-security-policy"):
        assert again.headers[header] == rendered.headers[header]
    # Each language keeps its own body; a change moves every one of them.
    korean = client.get(DETAIL, headers={"Accept-Language": "ko"})
    assert korean.headers["etag"] != rendered.headers["etag"] and korean.text != rendered.text
    assert client.get(DETAIL).content == rendered.content
    post_record(client)
    changed = client.get(DETAIL)
    assert changed.headers["etag"] != rendered.headers["etag"]
    assert "1 pending record to review" in changed.text


def test_kept_answers_are_counted_under_their_route(client: TestClient) -> None:
    for _ in range(3):
        client.get(PAGE)
    route = "/models/{slug}"
    lines = client.get("/metrics").text.splitlines()
    counted = [
        line
        for line in lines
        if line.startswith("servebook_http_requests_total{")
        and f'route="{route}"' in line
        and 'status="200"' in line
    ]
    assert len(counted) == 1 and counted[0].endswith(" 3.0")


def test_other_urls_read_no_revision_before_routing(client: TestClient) -> None:
    client.get(PAGE)
    assert queries_for(client, "/static/css/app.css") == 0


def test_a_body_from_an_older_revision_never_replaces_a_newer_one() -> None:
    cache = PageCache()
    cache.put("page-en", "u", CachedBody(5, None, b"new", "text/html", None), "/u", None)
    cache.put("page-en", "u", CachedBody(4, None, b"old", "text/html", None), "/u", None)
    assert cache.get("page-en", "u", Revisions(5, 9)).body == b"new"
    assert cache.get("page-en", "u", Revisions(4, 9)) is None
    listed = CachedBody(5, 7, b"listed", "text/html", None)
    cache.put("page-en", "r", listed, "/r", None)
    cache.put("page-en", "r", CachedBody(5, 6, b"older", "text/html", None), "/r", None)
    assert cache.get("page-en", "r", Revisions(5, 7)) is listed
    assert cache.get("page-en", "r", Revisions(5, 8)) is None  # a record moved it
    assert cache.get("page-en", "u", Revisions(5, 8)).body == b"new"  # lists none: kept


@pytest.fixture
def second_process(settings: Settings) -> Iterator[TestClient]:
    """Another app on the same database file, as a second server process would be."""
    with TestClient(create_app(settings)) as other:
        yield other


@pytest.mark.postgresql
def test_a_change_in_one_process_shows_in_another(
    client: TestClient, second_process: TestClient
) -> None:
    def balanced_speed(app: TestClient) -> dict:
        row = next(r for r in app.get(FIT).json()["rows"] if r["hardware"] == "8x-h200-141gb")
        return row["token_generation"]

    assert balanced_speed(second_process)["basis"] == "estimated"  # cached there now
    for url in (DETAIL, "/records", "/records?state=pending"):  # kept there too
        assert second_process.get(url).status_code == 200
    fit_tag = second_process.get(PAGE).headers["etag"]
    record_id = post_record(client)
    # A pending record: the pages that list records show it in the other process at once,
    # and the fit page it changes nothing on is still the one kept.
    assert "1 pending record to review" in second_process.get(DETAIL).text
    assert f'/records/{record_id}"' in second_process.get("/records").text
    assert f'/records/{record_id}"' in second_process.get("/records?state=pending").text
    assert second_process.get(PAGE, headers={"If-None-Match": fit_tag}).status_code == 304
    client.post(f"/api/records/{record_id}/review", json={"action": "accept"})
    assert balanced_speed(second_process) == balanced_speed(client)
    assert balanced_speed(second_process)["basis"] == "measured"
    assert f'/records/{record_id}"' not in second_process.get("/records?state=pending").text
    assert second_process.get(PAGE, headers={"If-None-Match": fit_tag}).status_code == 200


def shown(resolved: ResolvedModel) -> dict[tuple[str, str], dict]:
    """Every figure each recipe of the model shows, by (hardware, profile)."""
    return {
        (recipe.hardware.slug, recipe.profile.slug): recipe_out(recipe)
        for row in resolved.rows
        for recipe in row.recipes
    }


def recipes_of(resolved: ResolvedModel) -> dict[tuple[str, str], ResolvedRecipe]:
    return {(r.hardware.slug, r.profile.slug): r for row in resolved.rows for r in row.recipes}


@pytest.mark.postgresql
def test_a_review_resolves_again_only_the_recipes_its_record_belongs_to(
    client: TestClient, settings: Settings
) -> None:
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    cache = RecipeCache(sessions)

    def cached() -> tuple[int, ResolvedModel]:
        with sessions() as session:
            return cache.model(session, GLM)

    first_revision, before = cached()
    record_id = post_record(client)  # pending: listed on its page, no figure changes
    pending_revision, unchanged = cached()
    assert pending_revision == first_revision and unchanged is before

    client.post(f"/api/records/{record_id}/review", json={"action": "accept"})
    _, after = cached()
    with sessions() as session:  # the same model resolved from scratch
        scratch = ResolvedModel(
            load_model_inputs(session, GLM), list(CatalogRepository(session).list_hardware())
        )
    assert shown(after) == shown(scratch)
    touched = (RECORD["hardware"], RECORD["profile"])
    assert shown(after)[touched]["token_generation"]["basis"] == "measured"
    assert shown(before)[touched] != shown(after)[touched]
    old, new = recipes_of(before), recipes_of(after)
    pair = (RECORD["artifact"], RECORD["runtime"])
    for key, recipe in old.items():
        if key != touched and (recipe.route is None or recipe.route.key != pair):
            assert new[key] is recipe, key  # kept, not resolved again
    # The record's pair lists the new record on every recipe that uses it.
    users = [r for key, r in new.items() if r.pair is not None and r.route.key == pair]
    assert users and all(record_id in r.pair.record_ids for r in users)

    with sessions() as session:  # anything in the catalog may change: resolved again
        bump_revision(session)
        session.commit()
    _, rebuilt = cached()
    assert all(recipes_of(rebuilt)[key] is not recipe for key, recipe in new.items())
    assert shown(rebuilt) == shown(after)
    engine.dispose()


def test_a_cache_far_behind_or_missing_a_change_row_starts_again(session: Session) -> None:
    start = current_revision(session)
    assert changes_since(session, start) == (start, [])
    touched = Touched(1, 2, 3, evidence=True)
    bump_revision(session, touched)
    bump_revision(session, Touched(1, 2, None, evidence=False))  # the records revision alone
    session.commit()
    assert changes_since(session, start) == (start + 1, [touched])
    bump_revision(session)  # the whole catalog
    bump_revision(session, touched)
    session.commit()
    assert changes_since(session, start) == (start + 3, None)
    assert changes_since(session, start + 3) == (start + 3, [])
    session.execute(update(CatalogState).values(revision=CatalogState.revision + 1))
    session.commit()  # a revision without its change row: nothing can be told
    assert changes_since(session, start + 3) == (start + 4, None)
    for _ in range(MOST_CHANGES_READ + 1):
        bump_revision(session, touched)
    session.commit()
    assert changes_since(session, start + 4) == (start + 5 + MOST_CHANGES_READ, None)
    assert changes_since(session, start + 5)[1] == [touched] * MOST_CHANGES_READ
    assert changes_since(session, -1) == (start + 5 + MOST_CHANGES_READ, None)


@pytest.mark.postgresql
def test_change_rows_no_reader_can_ask_for_are_pruned(session: Session) -> None:
    touched = Touched(1, 2, 3, evidence=True)
    for _ in range(2 * PRUNE_EVERY):
        bump_revision(session, touched)
    session.commit()
    current = current_revision(session)
    kept = session.scalars(select(CatalogChange.revision)).all()
    pruned_at = current - current % PRUNE_EVERY
    assert min(kept) == pruned_at - MOST_CHANGES_READ + 1 and max(kept) == current
    assert len(kept) < PRUNE_EVERY + MOST_CHANGES_READ  # bounded, not one row per write ever
    # Every reader close enough to be answered still is, in full.
    behind = current - MOST_CHANGES_READ
    assert changes_since(session, behind) == (current, [touched] * MOST_CHANGES_READ)


class QueryCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args: object) -> None:
        self.count += 1


def queries_for(client: TestClient, url: str) -> int:
    """Queries a request ran: through the pools, and on SQLite the revisions read on the
    event loop before routing."""
    counter = QueryCounter()
    glance = client.app.state.revision_glance  # type: ignore[attr-defined]
    glanced = glance.reads if glance else 0
    event.listen(Engine, "before_cursor_execute", counter)
    try:
        assert client.get(url).status_code == 200
    finally:
        event.remove(Engine, "before_cursor_execute", counter)
    return counter.count + (glance.reads - glanced if glance else 0)


def test_queries_do_not_grow_with_the_rows(client: TestClient, session: Session) -> None:
    client.get(FIT)
    bump_revision(session)  # the same catalog at a new revision: the body kept is stale
    session.commit()
    few = queries_for(client, FIT)
    cached = queries_for(client, FIT)
    assert cached == 1  # the revision, nothing else
    machines = 18
    for number in range(120):  # ten times the catalog's hardware, give or take
        session.add(
            Hardware(
                slug=f"h100-copy-{number}",
                name=f"H100 copy {number}",
                group="server",
                vendor="nvidia",
                platform="cuda",
                unified_memory=False,
                device="H100",
                gpu_count=1,
                memory_gb_per_gpu=80,
                usable_memory_gb=72,
                bandwidth_gb_s_per_gpu=3350,
                bf16_tflops_per_gpu=989,
                interconnect="none",
                sort=500,
                basis={},
                sources=[],
            )
        )
    bump_revision(session)
    session.commit()
    many = queries_for(client, FIT)
    assert many == few
    first = client.get(FIT).json()
    assert (first["page"], first["pages"], first["total"]) == (1, 2, machines + 120)
    assert len(first["rows"]) == 100
    second = client.get(FIT, params={"page": 2}).json()
    assert len(second["rows"]) == machines + 20 and second["page"] == 2
    assert not {r["hardware"] for r in first["rows"]} & {r["hardware"] for r in second["rows"]}
    page = client.get(PAGE, params={"page": 2}).text
    assert 'aria-current="page">2<' in page


def test_vendored_files_are_kept_a_year_and_app_files_revalidate(client: TestClient) -> None:
    vendored = client.get("/static/vendor/htmx-2.0.11.min.js")
    assert vendored.headers["cache-control"] == "public, max-age=31536000, immutable"
    own = client.get("/static/css/app.css")
    assert own.headers["cache-control"] == "no-cache" and own.headers["etag"]
    assert (
        client.get(
            "/static/css/app.css", headers={"If-None-Match": own.headers["etag"]}
        ).status_code
        == 304
    )
