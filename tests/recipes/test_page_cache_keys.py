"""The page cache's key and bounds: a query parameter a page does not read neither renders
it again nor takes a slot, the parameters it reads do, the cache stays within its bytes,
and the estimate form and the records list are kept like any page."""

import time
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.catalog.revision import Revisions
from app.page_cache import CachedBody, PageCache
from tests.recipes.test_serving import DETAIL, PAGE, post_record

JUNK = 300


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


def kept(client: TestClient) -> PageCache:
    return client.app.state.page_cache  # type: ignore[attr-defined]


def test_parameters_a_page_does_not_read_share_its_body_and_slot(client: TestClient) -> None:
    for url in (PAGE, DETAIL, "/records", "/estimate"):
        plain = client.get(url)
        assert plain.status_code == 200, url
        entries = len(kept(client).bodies)
        for number in range(JUNK):
            junk = client.get(f"{url}?utm_source=x{number}&fbclid={number}")
            assert junk.content == plain.content, url
        assert len(kept(client).bodies) == entries, url
        # Answered before routing: the revisions read, nothing else.
        assert queries_for(client, f"{url}?never-seen=1") == 1, url


def test_a_stray_parameter_never_shows_in_a_kept_page(client: TestClient) -> None:
    first = client.get(f"{PAGE}?tracking=secret-token")
    assert "secret-token" not in first.text  # the language links are built without it
    assert client.get(PAGE).content == first.content


def test_parameters_a_page_reads_each_have_their_own_body(client: TestClient) -> None:
    first = client.get(PAGE, params={"verdict": "fits"})
    entries = len(kept(client).bodies)
    other = client.get(PAGE, params={"verdict": "exceeds_memory"})
    assert other.status_code == first.status_code == 200
    assert other.content != first.content and len(kept(client).bodies) == entries + 1
    # The order they come in does not matter; the language is part of the variant.
    both = client.get(f"{PAGE}?platform=cuda&verdict=fits")
    assert client.get(f"{PAGE}?verdict=fits&platform=cuda&lang=en").content == both.content


def test_the_estimate_form_is_kept_and_an_estimate_is_not(client: TestClient) -> None:
    form = client.get("/estimate")
    assert form.status_code == 200 and form.headers["etag"].startswith('W/"r')
    again = client.get("/estimate", headers={"If-None-Match": form.headers["etag"]})
    assert again.status_code == 304
    asked = client.get("/estimate", params={"model": "glm-5.3-flash", "hardware": "8x-h200-141gb"})
    assert asked.status_code == 200 and "etag" not in asked.headers
    assert asked.text != form.text


def test_the_records_list_is_kept_per_filter_until_a_record_moves_it(client: TestClient) -> None:
    everything = client.get("/records")
    pending = client.get("/records", params={"state": "pending"})
    assert everything.headers["etag"] == pending.headers["etag"]  # one pair of revisions
    assert queries_for(client, "/records?state=pending") == 1
    record_id = post_record(client)
    listed = client.get("/records", params={"state": "pending"})
    assert listed.headers["etag"] != pending.headers["etag"]
    assert f'/records/{record_id}"' in listed.text
    assert f'/records/{record_id}"' not in client.get("/records?state=accepted").text


def test_the_cache_stays_within_its_bytes() -> None:
    cache = PageCache(size=1000, max_bytes=64 * 1024)
    body = b"x" * 4000
    for number in range(500):
        cache.put(
            "page-en", f"/p/{number}", CachedBody(1, None, body, "text/html", None), "/p", None
        )
    assert cache.bytes <= cache.max_bytes
    assert len(cache.bodies) == cache.max_bytes // (len(body) + 512)
    assert cache.get("page-en", "/p/499", Revisions(1, 1)) is not None  # the newest stay
    assert cache.get("page-en", "/p/0", Revisions(1, 1)) is None
    # A body kept again in place of itself is counted once.
    cache.put("page-en", "/p/499", CachedBody(2, None, body, "text/html", None), "/p", None)
    assert cache.bytes == sum(kept.cost for kept in cache.bodies.values())


def test_readers_who_find_no_kept_page_wait_for_the_one_being_built(client: TestClient) -> None:
    """Eight readers of /records just after a record moved its revision: one builds it, the
    others are answered the body it kept. Each query is slowed so that, built by each, the
    builds would overlap."""
    client.get("/records?state=pending")
    post_record(client)
    built = QueryCounter()

    def slowed(_conn: object, _cursor: object, statement: str, *args: object) -> None:
        if "FROM records" in statement and "LIMIT" in statement:
            built()
            time.sleep(0.2)

    event.listen(Engine, "before_cursor_execute", slowed)
    try:
        with ThreadPoolExecutor(8) as readers:
            pages = list(readers.map(lambda _: client.get("/records?state=pending"), range(8)))
    finally:
        event.remove(Engine, "before_cursor_execute", slowed)
    assert {page.status_code for page in pages} == {200}
    assert len({page.content for page in pages}) == 1
    assert built.count == 1
    assert not kept(client).building  # nobody left waiting, nothing left behind
