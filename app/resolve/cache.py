"""Resolve once, serve many: each model's recipes are resolved once per catalog revision.

A request reads the revision (one indexed row, with what every newer revision touched)
and compares it with the cache's. A change committed by any process is seen by the next
request of every process: a change to the catalog itself (a seed) empties the cache; an
accepted or retracted record marks its model's recipes on that hardware and profile, and
the next reader of the model loads the model's inputs again and resolves those recipes
alone; a record submitted or rejected changes no figure, and nothing is resolved again.
Recipes are resolved in a session of their own and kept detached, with every attribute
they need already loaded, so they outlive the request that built them.
"""

import threading

from sqlalchemy.orm import Session, sessionmaker

from app.accuracy.evidence import range_book
from app.catalog.repository import CatalogRepository
from app.catalog.revision import Touched, changes_since
from app.estimate.ranges.from_records import SHIPPED, RangeBook
from app.resolve.fit_table import ResolvedModel
from app.resolve.inputs import load_model_inputs


class RecipeCache:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self.revision = -1
        self.models: dict[str, ResolvedModel] = {}
        # Recipes to resolve again before a model is served: (hardware id, profile id) pairs
        # by model id, for the models in `models`.
        self.touched: dict[int, frozenset[tuple]] = {}
        # The speed ranges the kept recipes were resolved with (`app/estimate/record_ranges`).
        self.book: RangeBook | None = SHIPPED
        self.lock = threading.Lock()

    def model(self, session: Session, slug: str) -> tuple[int, ResolvedModel]:
        """The model's resolved recipes at the revision `session` sees."""
        revision, changes = changes_since(session, self.revision)
        book = None
        if revision != self.revision and (changes is None or any(c.evidence for c in changes)):
            book = range_book(session)
        with self.lock:
            if revision != self.revision:
                self._advance(revision, changes, book)
            found = self.models.get(slug)
            touched = self.touched.get(found.inputs.model.id) if found else None
        if found is None:
            found = self._resolve(slug)
        elif touched:
            found = self._refresh(found, touched)
        else:
            return revision, found
        with self.lock:
            if self.revision == revision:
                self.models[slug] = found
                self.touched.pop(found.inputs.model.id, None)
        return revision, found

    def _advance(
        self, revision: int, changes: list[Touched] | None, book: RangeBook | None
    ) -> None:
        """Take in what the revisions since the cache's touched; called with the lock held.
        Records that move a class's range move every model's figures in that class."""
        self.revision = revision
        if book is not None:
            moved = not book.same_ranges(self.book)
            self.book = book
            if moved:
                changes = None
        if changes is None:
            self.models, self.touched = {}, {}
            return
        for change in changes:
            if change.evidence:
                pair = (change.hardware_id, change.profile_id)
                self.touched[change.model_id] = self.touched.get(change.model_id, frozenset()) | {
                    pair
                }

    def _resolve(self, slug: str) -> ResolvedModel:
        with self.sessions() as session:
            inputs = load_model_inputs(session, slug)
            hardware = list(CatalogRepository(session).list_hardware())
            return ResolvedModel(inputs, hardware)

    def _refresh(self, found: ResolvedModel, touched: frozenset[tuple]) -> ResolvedModel:
        with self.sessions() as session:
            fresh = load_model_inputs(session, found.inputs.model.slug)
            return found.refreshed(fresh, touched)
