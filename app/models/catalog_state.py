from sqlalchemy import BigInteger
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


class CatalogState(Base):
    """One row: the catalog revision, bumped by every write that can change what a recipe
    page shows (seed, a record, a review). Every app process compares it per request, so a
    cache of resolved recipes and rendered pages is never served past a change, on SQLite
    or on a PostgreSQL shared by several processes."""

    __tablename__ = "catalog_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, default=1)
    # Moves only when the catalog's own rows change (a seed, an edit): the reference data a
    # submission is checked against is cached per process under it (app.catalog.references).
    definition: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
