"""The update rule of the ranges: shipped checks as the prior, accepted records as evidence."""

import pytest

from app.estimate import ArtifactSpec, Plan, estimate
from app.estimate.messages import Code
from app.estimate.ranges.accuracy_table import CHECK_MEDIANS, CHECK_RATIOS
from app.estimate.ranges.classes import MIN_CHECKS, RANGE_CLASSES, range_of_key, reach_publishers
from app.estimate.ranges.from_records import (
    SUBMITTER_CAP,
    RecordRatio,
    updated_book,
    updated_class,
    weighted_quantile,
)
from app.estimate.speed.load import load_estimate, with_ranges
from app.estimate.speed.model import decode_notes
from tests.estimate.estimate_specs import H200_X8, LLAMA_70B, VLLM

BF16 = ArtifactSpec("llama-bf16", "safetensors", "bf16", 16.0)
KEY = "vllm/cuda/multi/c1"
# A class's checks: twenty ratios spread evenly from 0.6 to 1.55 (its range 0.69-1.46).
PRIOR = tuple(round(0.6 + 0.05 * i, 2) for i in range(20))


def records(ratio: float, submitters: int, each: int = 1, start: int = 0) -> list[RecordRatio]:
    """`each` records from every one of `submitters` submitters, all at `ratio`."""
    return [
        RecordRatio(KEY, ratio, f"submitter-{s}", start + s * each + i)
        for s in range(submitters)
        for i in range(each)
    ]


def width(found) -> float:
    return found.high - found.low


def test_equal_weights_give_the_shipped_ranges() -> None:
    """Without records the quantile, reaching the checks' publishers' medians, is the one
    the shipped ranges were set with."""
    for key, ratios in CHECK_RATIOS.items():
        shipped = RANGE_CLASSES[key]
        pairs = [(r, 1.0) for r in ratios]
        low, high = reach_publishers(
            key, weighted_quantile(pairs, 0.1), weighted_quantile(pairs, 0.9), CHECK_MEDIANS[key]
        )
        assert low == pytest.approx(shipped.low, abs=0.006), key
        assert high == pytest.approx(shipped.high, abs=0.006), key


def test_a_server_range_reaches_every_publisher_median() -> None:
    """A vLLM or SGLang class's range holds each of its checks' publishers' medians, even
    one that its percentiles leave outside; a llama.cpp class's stays its percentiles."""
    stretched = 0
    for key, medians in CHECK_MEDIANS.items():
        shipped = RANGE_CLASSES[key]
        pairs = [(r, 1.0) for r in CHECK_RATIOS[key]]
        percentiles = weighted_quantile(pairs, 0.1), weighted_quantile(pairs, 0.9)
        if key.split("/")[0] in ("vllm", "sglang", "servers"):
            assert all(shipped.low - 0.006 <= m <= shipped.high + 0.006 for m in medians), key
            stretched += min(medians) < percentiles[0] - 0.006
            stretched += max(medians) > percentiles[1] + 0.006
        else:
            assert (shipped.low, shipped.high) == pytest.approx(percentiles, abs=0.006), key
    assert stretched  # some publisher's level lies outside its class's percentiles


def test_a_submitter_whose_median_lies_outside_widens_the_range() -> None:
    """Records from a submitter whose own median is below every check reach the range's low
    end, where the same records' weight alone would leave the percentile inside."""
    agreeing = records(1.0, 2, each=3)
    slow = [RecordRatio(KEY, 0.45, "slow", 5_000 + i) for i in range(2)]
    found = updated_class(KEY, PRIOR, agreeing + slow)
    pairs = [(r, 1.0) for r in PRIOR] + [(1.0, 1.0)] * 6 + [(0.45, 1.0)] * 2
    assert weighted_quantile(pairs, 0.1) > 0.46
    assert found is not None and found.low == pytest.approx(0.45)


def test_no_records_keeps_every_shipped_class() -> None:
    book = updated_book([])
    assert book.classes == RANGE_CLASSES and not book.updated and book.records == 0


def test_agreeing_records_narrow_the_range() -> None:
    prior = updated_class(KEY, PRIOR, records(1.0, 2, start=900))  # the least that counts
    assert prior is not None
    more = updated_class(KEY, PRIOR, records(1.0, 6, each=3))
    assert more is not None and more.records == 18
    assert width(more) < width(prior)
    assert more.low > prior.low and more.high < prior.high


def test_disagreeing_records_widen_the_range() -> None:
    base = updated_class(KEY, PRIOR, records(1.0, 2))
    wide = updated_class(KEY, PRIOR, records(0.3, 3) + records(2.6, 3, start=100))
    assert base is not None and wide is not None
    assert wide.low < base.low and wide.high > base.high


def test_one_submitter_alone_never_moves_a_class() -> None:
    flood = [RecordRatio(KEY, 3.0, "one", i) for i in range(500)]
    assert updated_class(KEY, PRIOR, flood) is None
    assert updated_book(flood, {KEY: PRIOR}).classes == RANGE_CLASSES


def test_a_flood_weighs_no_more_than_the_cap() -> None:
    """A submitter's 500 records move the class as much as SUBMITTER_CAP records would."""
    other = [RecordRatio(KEY, 1.0, "other", 10_000)]
    flood = [RecordRatio(KEY, 3.0, "one", i) for i in range(500)]
    capped = [RecordRatio(KEY, 3.0, "one", i) for i in range(int(SUBMITTER_CAP))]
    by_flood = updated_class(KEY, PRIOR, flood + other)
    by_cap = updated_class(KEY, PRIOR, capped + other)
    assert by_flood is not None and by_cap is not None
    assert (by_flood.low, by_flood.high, by_flood.held) == (by_cap.low, by_cap.high, by_cap.held)


def test_a_thin_class_keeps_borrowing_until_records_weigh_enough() -> None:
    thin = "vllm/cuda/single/cN"  # 4 checks
    assert 0 < len(CHECK_RATIOS[thin]) < MIN_CHECKS
    few = [RecordRatio(thin, 1.0, f"s{i}", i) for i in range(2)]
    assert updated_class(thin, CHECK_RATIOS[thin], few) is None
    enough = [RecordRatio(thin, 1.0, f"s{i}", i) for i in range(MIN_CHECKS)]
    found = updated_class(thin, CHECK_RATIOS[thin], enough)
    assert found is not None and found.records == MIN_CHECKS
    book = updated_book(enough)
    assert not range_of_key(thin, book.classes).borrowed
    assert thin in book.updated


def test_records_update_the_family_pool_that_thin_classes_borrow() -> None:
    thin = "vllm/rocm+vulkan/multi/c1"  # one check: borrows both servers' on several GPUs
    assert range_of_key(thin).family == "servers/*/multi/c1"
    found = [RecordRatio(thin, 2.0, f"s{i}", i) for i in range(4)]
    book = updated_book(found)
    assert "servers/*/multi/c1" in book.updated and thin not in book.updated
    assert range_of_key(thin, book.classes).high > range_of_key(thin).high


def test_a_calibrated_figure_says_so() -> None:
    plan = Plan(context=4096, tensor_parallel=8)
    speed = estimate(LLAMA_70B, BF16, VLLM, H200_X8, plan).speed_model
    class_key = load_estimate(speed, 1).range.key
    assert class_key == KEY
    agreeing = [RecordRatio(class_key, 1.0, f"s{i}", i) for i in range(12)]
    book = updated_book(agreeing)
    found = load_estimate(with_ranges(speed, book), 1)
    assert found.range.records == 12 and not found.range.borrowed
    codes = [note.code for note in decode_notes(found)]
    assert Code.DECODE_RANGE_CALIBRATED in codes
    shipped = load_estimate(speed, 1)
    assert shipped.range.records == 0
    assert Code.DECODE_RANGE_CALIBRATED not in [n.code for n in decode_notes(shipped)]


def test_books_with_the_same_ranges_are_equal() -> None:
    agreeing = records(1.0, 3, each=2)
    assert updated_book(agreeing) == updated_book(list(reversed(agreeing)))
    assert updated_book(agreeing) != updated_book([])
    assert hash(updated_book(agreeing)) == hash(updated_book(agreeing))
