"""The seed command's fixtures (an empty migrated database, a copy of seed_data/)."""

from tests.catalog.test_seed_loader import empty_db, seed_copy

__all__ = ["empty_db", "seed_copy"]
