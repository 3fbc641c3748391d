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
from contextlib import suppress
from datetime import UTC, datetime

from babel.dates import format_datetime
from babel.lists import format_list
from sqlalchemy.orm import Session, sessionmaker
from starlette.routing import NoMatchFound, Router

from app.catalog.repository import CatalogRepository
from app.catalog.revision import current_revisions
from app.i18n import LOCALES
from app.i18n.catalogs import translations
from app.i18n.numbers import decimal
from app.observability.runtime import settle_long_lived_objects
from app.records.evidence import load_detail_evidence
from app.records.known_good import find_known_good
from app.records.pages import RecordPages
from app.resolve.cache import RecipeCache
from app.resolve.collector import collector_paused
from app.web import templates

log = logging.getLogger("servebook.warm_up")


def warm_up(sessions: sessionmaker[Session], recipes: RecipeCache, router: Router) -> None:
    for locale in LOCALES:
        translations(locale)
        load_locale_data(locale)
    find_every_route(router)
    for name in templates.env.list_templates(extensions=["html"]):
        templates.env.get_template(name)
    with sessions() as session:
        slugs = [model.slug for model in CatalogRepository(session).list_models()]
    for slug in slugs:
        with sessions() as session:
            revision, resolved = recipes.model(session, slug)
        first = next((row.recipes[0] for row in resolved.rows if row.recipes), None)
        if first is None:
            continue
        with sessions() as session:  # a detail page's and the records list's queries
            revisions = current_revisions(session)
            load_detail_evidence(session, first, revisions)
            find_known_good(session, first.model, first.hardware, first.profile, revision)
            RecordPages(session).page(None, None, None, None, 1)


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


def start_warm_up(
    sessions: sessionmaker[Session],
    recipes: RecipeCache,
    router: Router,
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
                warm_up(sessions, recipes, router)
            except Exception:  # a cold first request is slower, never wrong
                log.exception("warming up failed; the first requests do it themselves")
            settle_long_lived_objects(gc_thresholds)

    thread = threading.Thread(target=run, name="servebook-warm-up", daemon=True)
    thread.start()
    return thread
