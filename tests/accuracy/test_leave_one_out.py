"""The leave-one-publisher-out figures of `make accuracy` never let a publisher's own runs
into the coefficients or the ranges it is scored by."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from app.estimate.speed.coefficients import SERVER
from tests.accuracy import leave_one_out
from tests.accuracy.leave_one_out import HeldOut, publisher_of
from tests.accuracy.server_cases import ServerCase, server_cases


@pytest.fixture
def shipped_fit(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, set[str]]]]:
    """The refit replaced by the shipped coefficients (the real one takes a minute); each
    call's family and the publishers of the rows it was given are recorded."""
    calls: list[tuple[str, set[str]]] = []

    def fit_rows(family: str, rows: list[ServerCase], quiet: bool = False):
        calls.append((family, {publisher_of(c) for c in rows}))
        return SERVER[(family, "cuda")], SERVER[(family, "rocm/vulkan")]

    monkeypatch.setattr(leave_one_out, "fit_rows", fit_rows)
    leave_one_out.held_out.cache_clear()
    leave_one_out.scored.cache_clear()
    yield calls
    leave_one_out.held_out.cache_clear()
    leave_one_out.scored.cache_clear()


def test_a_publisher_is_a_person_or_an_organisation_not_a_page() -> None:
    publishers = {c.publisher: publisher_of(c) for c in server_cases()}
    bot = [p for p in publishers if "InferenceX bot run" in p]
    assert bot and {publishers[p] for p in bot} == {"SemiAnalysis InferenceX"}
    two_issues = [p for p in publishers if p.startswith("github:gtobarTT ")]
    assert len(two_issues) == 2 and {publishers[p] for p in two_issues} == {"github:gtobarTT"}


def test_a_fitting_publisher_is_refitted_out_and_a_checking_one_never_fitted(
    shipped_fit,
) -> None:
    """As shipped: a fitting publisher is scored by a fit on the other fitting publishers'
    rows; a checking publisher by the shipped coefficients, which never saw it."""
    rows = leave_one_out.held_out()
    assert len(rows) == len(server_cases())  # every usable row is scored once
    for family in ("vllm", "sglang"):
        cases = [c for c in server_cases() if c.runtime == family]
        fitting = {publisher_of(c) for c in cases if c.fitting}
        calls = [given for f, given in shipped_fit if f == family]
        assert len(calls) == len(fitting)  # no fit for a checking publisher
        left_out = [fitting - given for given in calls]
        assert all(given <= fitting for given in calls)  # fitting rows only
        assert all(len(missing) == 1 for missing in left_out), left_out
        assert {p for missing in left_out for p in missing} == fitting


def test_refitted_on_everyone_each_fit_leaves_out_exactly_the_one_it_scores(
    shipped_fit,
) -> None:
    rows = leave_one_out.held_out(leave_one_out.FIT_ON_ALL)
    assert len(rows) == len(server_cases())
    for family in ("vllm", "sglang"):
        everyone = {publisher_of(c) for c in server_cases() if c.runtime == family}
        left_out = [everyone - given for f, given in shipped_fit if f == family]
        assert all(len(missing) == 1 for missing in left_out), left_out
        assert {p for missing in left_out for p in missing} == everyone


def test_a_publishers_range_is_set_by_the_others_alone(shipped_fit) -> None:
    rows = leave_one_out.held_out()
    victim = "SGLang cookbook (sgl-project/sgl-cookbook)"
    assert any(r.publisher == victim for r in rows)
    before = {id(s.held.case): s.range for s in leave_one_out.scored()}

    def wild(row: HeldOut) -> HeldOut:
        if row.publisher != victim or row.decode_ratio is None:
            return row
        return dataclasses.replace(row, decode_ratio=row.decode_ratio * 100)

    after = leave_one_out.score(tuple(wild(r) for r in rows))
    own = [s for s in after if s.held.publisher == victim]
    assert own and all(s.range == before[id(s.held.case)] for s in own)
    # Its wild ratios reach the others' ranges (its class's pool), and miss its own.
    assert any(s.range != before[id(s.held.case)] for s in after if s.held.publisher != victim)
    assert not any(s.covered for s in own)


def test_a_held_out_range_reaches_every_other_publishers_median(
    shipped_fit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vLLM or SGLang run's range holds each other publisher's median ratio in the class
    it stands on, as the app's ranges do: one publisher's slow setup moves the others'
    ranges to reach it, however few of the class's runs it has."""
    rows = leave_one_out.held_out()
    victim = "github:jinkhyeHW"
    slow = tuple(
        dataclasses.replace(r, decode_ratio=0.2)
        if r.publisher == victim and r.decode_ratio is not None
        else r
        for r in rows
    )
    others = [s for s in leave_one_out.score(slow) if s.held.publisher != victim]
    # jinkhyeHW's one run sits in vLLM's one-card, one-request class and its pools.
    reached = [s for s in others if not s.range.borrowed and s.range.key.endswith("single/c1")]
    assert reached and all(s.range.low == pytest.approx(0.2) for s in reached)
    # Left to the percentiles, its one run among sixteen would not have reached them.
    monkeypatch.setattr(
        leave_one_out, "reach_publishers", lambda key, low, high, medians: (low, high)
    )
    keys = {id(s.held.case) for s in reached}
    percentiles = [s for s in leave_one_out.score(slow) if id(s.held.case) in keys]
    assert percentiles and all(s.range.low > 0.3 for s in percentiles)
