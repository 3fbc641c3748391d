"""After start-up, in the background: what the first request of each page would otherwise
pay for, done once before anyone asks.

The first page after a restart used to cost several times a later one: each language's
catalog compiled from its .po file, each template compiled, each model resolved, and each
query of a detail page compiled by SQLAlchemy, all on the first request that needed them.
They are all cheap (well under a second together) and none depends on who asks, so a
thread does them at start-up; a request that comes first simply does its share itself, as
before. Then the objects that live as long as the process are frozen out of the garbage
collector's sight (app.observability.runtime).
"""

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

import fastapi.routing
from babel.dates import format_datetime
from babel.lists import format_list
from fastapi import FastAPI, Request
from sqlalchemy.orm import Session, sessionmaker
from starlette.routing import NoMatchFound, Router

from app.catalog.repository import CatalogRepository
from app.catalog.revision import current_records_revision, current_revisions
from app.i18n import LOCALES
from app.i18n.catalogs import translations
from app.i18n.messages import in_locale
from app.i18n.numbers import decimal
from app.observability.runtime import settle_long_lived_objects
from app.recipes.detail_page import TEMPLATE as DETAIL_TEMPLATE
from app.recipes.detail_page import detail_context
from app.records.endpoints.pages import RecordPages
from app.records.evidence.known_good import find_known_good
from app.records.evidence.safe_ceiling import load_safe_ceiling
from app.records.evidence.summary import load_detail_evidence
from app.resolve.cache import RecipeCache
from app.resolve.gc_paused import collector_paused
from app.resolve.resolved import ResolvedRecipe
from app.web import render, templates

log = logging.getLogger("servebook.warm_up")


def warm_up(sessions: sessionmaker[Session], recipes: RecipeCache, app: FastAPI) -> None:
    for locale in LOCALES:
        translations(locale)
        load_locale_data(locale)
    find_every_route(app.router)
    read_every_endpoint(app.router)
    for name in templates.env.list_templates(extensions=["html"]):
        templates.env.get_template(name)
    with sessions() as session:
        slugs = [model.slug for model in CatalogRepository(session).list_models()]
    shown: list[ResolvedRecipe] = []
    for slug in slugs:
        with sessions() as session:
            revision, resolved = recipes.model(session, slug)
        first = next((row.recipes[0] for row in resolved.rows if row.recipes), None)
        if first is None:
            continue
        shown.append(first)
        with sessions() as session:  # a detail page's and the records list's queries
            current_records_revision(session)
            revisions = current_revisions(session)
            load_detail_evidence(session, first, revisions)
            find_known_good(session, first.model, first.hardware, first.profile, revision)
            load_safe_ceiling(session, first.model.id, first.hardware.id, first.profile.id)
            RecordPages(session).page(None, None, None, None, 1)
    # Every model's, since what a page shares with the others of its model (the paths of the
    # links to the model's pages) is paid by its model's first page: with one model's page
    # built here, another model's first page still cost 1.10-1.19x a later one.
    for number, recipe in enumerate(shown):
        build_a_detail_page(app, sessions, recipes, recipe, LOCALES if number == 0 else LOCALES[:1])


def build_a_detail_page(
    app: FastAPI,
    sessions: sessionmaker[Session],
    recipes: RecipeCache,
    recipe: ResolvedRecipe,
    locales: Iterable[str],
) -> None:
    """One detail page built and dropped, in each of `locales`: the queries no other warm-up
    step runs, the template's first rendering, each number pattern it uses and the paths of
    the links every page carries (together 4 ms of a first detail page, measured). It is not
    kept: the page cache holds only what a reader asked for."""
    with sessions() as session:
        revisions = current_revisions(session)
        _, resolved = recipes.model(session, recipe.model.slug)
        context = detail_context(session, resolved, recipe, revisions)
    path = app.url_path_for(
        "recipes:detail",
        model=recipe.model.slug,
        hardware=recipe.hardware.slug,
        profile=recipe.profile.slug,
    )
    scope = {
        "type": "http",
        "app": app,
        "router": app.router,
        "method": "GET",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [],
    }
    for locale in locales:
        with in_locale(locale):
            render(Request(scope), DETAIL_TEMPLATE, context)


def load_locale_data(locale: str) -> None:
    """Babel reads a language's number, date and list patterns from its data files on first
    use (19 ms of a first page's CPU, measured): word a number, a date and a list once."""
    decimal(1234.5, locale=locale)
    format_datetime(datetime(2026, 1, 1, tzinfo=UTC), locale=locale)
    format_list(["a", "b"], locale=locale)


def find_every_route(router: Router) -> None:
    """A page's first link by route name walks every route, and FastAPI works out each
    route's parameters on that first walk (half of a first detail page's CPU, measured): a
    name no route has walks them all."""
    with suppress(NoMatchFound):
        router.url_path_for("servebook-warm-up: no such route")


def read_every_endpoint(router: Router) -> None:
    """FastAPI reads an endpoint's source file and tokenises its function on the endpoint's
    first request, to name it in error messages (3 ms of a first detail page's CPU,
    measured); it keeps what it read, so reading each once here spares the first request.
    The reader is FastAPI's own, not a public name: where a version lacks it, nothing is
    read ahead and the first request reads as before."""
    read = getattr(fastapi.routing, "_extract_endpoint_context", None)
    if read is None:
        return
    for call in endpoints(router.routes):
        read(call)


def endpoints(routes: Iterable[Any]) -> Iterator[Callable[..., Any]]:
    """Every endpoint function under `routes`, through included routers (which FastAPI
    keeps whole, as `original_router`)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from endpoints(included.routes)
        call = getattr(getattr(route, "dependant", None), "call", None)
        if call is not None:
            yield call


def start_warm_up(
    sessions: sessionmaker[Session],
    recipes: RecipeCache,
    app: FastAPI,
    gc_thresholds: tuple[int, int, int],
) -> threading.Thread:
    """The warm-up on a thread of its own; `settle_long_lived_objects` when it is done."""

    def run() -> None:
        # The collector is paused throughout: what the warm-up builds all stays alive, yet
        # a full collection at its end walked all of it and the start-up's objects (about
        # 300k: 110 ms of CPU, measured, while the first requests waited) to free nothing.
        # Frozen before the collector runs again, none of it is walked at all.
        with collector_paused():
            try:
                warm_up(sessions, recipes, app)
            except Exception:  # a cold first request is slower, never wrong
                log.exception("warming up failed; the first requests do it themselves")
            settle_long_lived_objects(gc_thresholds)

    thread = threading.Thread(target=run, name="servebook-warm-up", daemon=True)
    thread.start()
    return thread
