"""Resolve once, serve many: each model's recipes are resolved once per catalog revision.

A request reads the revision (one indexed row) and compares it with the cache's; a change
committed by any process (seed, a record, a review) empties the cache, and the next reader
resolves again. Recipes are resolved in a session of their own and kept detached, with
every attribute they need already loaded, so they outlive the request that built them.
"""

import threading

from sqlalchemy.orm import Session, sessionmaker

from app.catalog.repository import CatalogRepository
from app.catalog.revision import current_revision
from app.resolve.inputs import load_model_inputs
from app.resolve.service import ResolvedModel


class RecipeCache:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self.revision = -1
        self.models: dict[str, ResolvedModel] = {}
        self.lock = threading.Lock()

    def model(self, session: Session, slug: str) -> tuple[int, ResolvedModel]:
        """The model's resolved recipes at the revision `session` sees."""
        revision = current_revision(session)
        with self.lock:
            if revision != self.revision:
                self.models = {}
                self.revision = revision
            found = self.models.get(slug)
        if found is None:
            found = self._resolve(slug)
            with self.lock:
                if self.revision == revision:
                    self.models.setdefault(slug, found)
        return revision, found

    def _resolve(self, slug: str) -> ResolvedModel:
        with self.sessions() as session:
            inputs = load_model_inputs(session, slug)
            hardware = list(CatalogRepository(session).list_hardware())
            return ResolvedModel(inputs, hardware)
