"""Tables `catalog_state` (one row: the catalog's and the records' revisions) and
`catalog_changes` (what each revision touched, for caches a few revisions behind)."""

from sqlalchemy import BigInteger
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


class CatalogState(Base):
    """One row: the catalog revision, bumped by every write that can change a figure or a
    recipe (a seed, a catalog edit, accepting or retracting a record), and the records
    revision, bumped by every record and review as well. Every app process compares them
    per request, so a cache of resolved recipes and rendered pages is never served past a
    change, on SQLite or on a PostgreSQL shared by several processes."""

    __tablename__ = "catalog_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, default=1)
    # Moves only when the catalog's own rows change (a seed, an edit): the reference data a
    # submission is checked against is cached per process under it (app.catalog.references).
    definition: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # Moves with every record and review (and with the catalog revision): what a list of
    # records or a pending count shows. A pending record moves this one alone.
    records_revision: Mapped[int] = mapped_column(BigInteger, default=1, server_default="1")


class CatalogChange(Base):
    """What one revision touched, written in the same transaction as the bump: a cache that
    is a few revisions behind rebuilds only the recipes these rows name.

    No model: anything in the catalog may have changed (a seed). With `evidence`: the
    accepted records of that model, hardware and profile changed. A write that changes no
    figure (a submission, a rejection) moves only the records revision and writes no row."""

    __tablename__ = "catalog_changes"

    revision: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    model_id: Mapped[int | None]
    hardware_id: Mapped[int | None]
    profile_id: Mapped[int | None]
    evidence: Mapped[bool]
