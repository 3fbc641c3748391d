"""The garbage collector beside the recipe cache: a model resolved again leaves no reference
cycle behind (reference counting frees the old one), and once the process froze its
long-lived objects, what a resolution builds is frozen too rather than left to the young
generations, whose next collections would walk all of it while requests wait."""

import gc
import weakref
from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session

from app.catalog.revision import bump_revision
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.resolve.cache import RecipeCache
from app.resolve.gc_paused import collector_paused

GLM = "glm-5.3-flash"


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Nothing collected automatically during the test; saved garbage is looked at."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def app_types_in(objects: list) -> set[str]:
    return {
        f"{type(o).__module__}.{type(o).__qualname__}"
        for o in objects
        if type(o).__module__.startswith(("app.resolve", "app.estimate"))
    }


def test_a_model_resolved_again_frees_the_old_one_without_the_collector(
    settings: Settings, collector_off: None
) -> None:
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    cache = RecipeCache(sessions)
    with sessions() as session:
        _, first = cache.model(session, GLM)
    gone = weakref.ref(first)
    kept_row = weakref.ref(first.rows[0])
    del first
    with sessions() as session:  # anything may have changed: the cache lets the model go
        bump_revision(session)
        session.commit()
    gc.set_debug(gc.DEBUG_SAVEALL)
    with sessions() as session:
        _, second = cache.model(session, GLM)
    assert gone() is None and kept_row() is None  # freed by reference counting alone
    gc.collect()
    assert app_types_in(gc.garbage) == set()  # and nothing of it waits in a cycle
    assert second.rows
    engine.dispose()


def test_after_settling_what_a_resolution_builds_is_frozen_not_left_young(
    session: Session,
) -> None:
    assert gc.get_freeze_count() == 0, "the test process froze nothing before"
    gc.collect()
    gc.freeze()  # as app.observability.runtime does after the warm-up
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            built = [[n] for n in range(20_000)]  # lists: always tracked
        assert gc.get_freeze_count() >= frozen + len(built)
        assert gc.get_count()[0] < 1_000  # the young generation does not hold them
    finally:
        gc.unfreeze()
