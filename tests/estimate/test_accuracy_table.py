"""The shipped accuracy table: what the ranges generator writes, with earlier estimator
versions' rows kept."""

import pytest

from app.estimate.ranges import accuracy_table
from app.estimate.ranges.accuracy_table import ACCURACY_HISTORY, CHECK_MEDIANS, CHECK_RATIOS
from app.estimate.ranges.classes import RANGE_TABLE, RangeClass
from app.estimate.speed.coefficients import SERVER
from app.estimate.version import ESTIMATOR_VERSION
from tests.accuracy.accuracy_history import class_accuracy, held_out_rows, history_rows
from tests.accuracy.fit_server import FITTED, checking_medians, checking_ratios, fit, range_table
from tests.accuracy.leave_one_out import class_rows


@pytest.fixture(scope="module")
def generated() -> tuple[dict, dict]:
    ratios = checking_ratios()
    return ratios, range_table()


def test_the_shipped_tables_are_what_the_generator_writes(generated) -> None:
    """An estimator change ships with its regenerated ranges, ratios and figures."""
    ratios, ranges = generated
    assert ranges == RANGE_TABLE
    assert {k: tuple(sorted(round(v, 4) for v in vs)) for k, vs in ratios.items()} == CHECK_RATIOS
    medians = checking_medians()
    assert {k: tuple(round(v, 4) for v in vs) for k, vs in medians.items()} == CHECK_MEDIANS
    assert history_rows(ratios, ranges) == list(ACCURACY_HISTORY)


def test_a_new_version_appends_its_rows_and_keeps_the_old_ones(
    generated, monkeypatch: pytest.MonkeyPatch
) -> None:
    ratios, ranges = generated
    older = ("2026.11.9", "vllm/*/*/*", 25, 0.3, 0.5, 0.7)
    stale = (ESTIMATOR_VERSION, "vllm/*/*/*", 1, 0.9, 0.0, 0.0)
    monkeypatch.setattr(accuracy_table, "ACCURACY_HISTORY", (older, stale))
    rows = history_rows(ratios, ranges)
    assert rows[0] == older and stale not in rows
    assert {row[1] for row in rows if row[0] == ESTIMATOR_VERSION} == set(ratios)


def test_class_accuracy_scores_the_range_middle() -> None:
    held_in = RangeClass("k", 0.8, 1.2, 4, None)  # middle 1.0
    count, median, within, held = class_accuracy([1.0, 1.1, 0.5, 2.0], held_in)
    assert count == 4 and held == 0.5  # 1.0 and 1.1 inside
    assert within == 0.5  # errors 0, 0.091, 1.0 and 0.5
    assert median == pytest.approx((0.0909 + 0.5) / 2, abs=0.001)


@pytest.mark.parametrize("family", sorted(FITTED))
def test_the_shipped_server_coefficients_are_what_the_fit_finds(family: str) -> None:
    """Each family's shipped coefficients are the fit's, as rounded: run from them, the fit
    on that family's fitting rows moves none of them (a change to the rows, the step model
    or a coefficient ships with the fit run again)."""
    shipped_cuda, shipped_rocm = SERVER[(family, "cuda")], SERVER[(family, "rocm/vulkan")]
    cuda, rocm = fit(family)
    for name in (*FITTED[family], "first_token_s"):
        assert getattr(cuda, name) == pytest.approx(
            getattr(shipped_cuda, name), rel=0.02, abs=1e-9
        ), name
    for name in ("bandwidth_share_dense", "bandwidth_share_moe"):
        assert getattr(rocm, name) == pytest.approx(getattr(shipped_rocm, name), rel=0.02), name


def test_the_shipped_held_out_figures_are_what_leaving_each_publisher_out_gives() -> None:
    """An estimator change ships with its leave-one-publisher-out figures regenerated
    (`python -m tests.accuracy.leave_one_out --write`); the fits take about a minute."""
    assert held_out_rows(class_rows()) == list(accuracy_table.HELD_OUT_HISTORY)
