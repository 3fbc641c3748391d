"""The calibration probe on its own: the served model by default is the only one the
server lists, the host allow-list is checked before any request, and a decode step is
read from when a round's long answers end against its short ones, so that bursty delivery
does not move it."""

import pytest

from app.bench.result import RequestSample
from app.bench.transport.hosts import HostNotAllowedError
from app.calibrate.decode import PointRounds, request_steps_s, round_step_s
from app.calibrate.probe import ProbePlan, ProbeResult, run_probe_sync


def test_the_only_model_the_server_lists_is_probed_by_default(fake_server: str) -> None:
    plan = ProbePlan(base_url=fake_server, batches=(1, 2), depths=(64,), prompts=(64,))
    found = run_probe_sync(plan)
    assert found.served_model == "fake"
    assert [(p.batch, p.depth > 64) for p in found.decode] == [(1, True), (2, True)]
    assert all(0.003 < p.step_s < 0.05 for p in found.decode)  # the fake's 5 ms gaps
    assert len(found.prefill) == 1 and found.failed == 0


def test_a_host_outside_the_allow_list_is_refused_before_any_request() -> None:
    with pytest.raises(HostNotAllowedError):
        run_probe_sync(ProbePlan(base_url="http://10.20.30.40:8000/v1"))


def _answer(end_ms: float, tokens: int, chunks: int | None = None) -> RequestSample:
    """A request that ended `end_ms` after it was sent, its tokens in `chunks` chunks."""
    return RequestSample(ok=True, e2e_ms=end_ms, output_tokens=tokens, token_chunks=chunks or 1)


def test_a_step_is_the_extra_time_to_the_end_per_extra_token() -> None:
    # 20 ms a token after a 40 ms prefill, however the chunks came: one chunk a token, or
    # the whole answer in one flush at its end (usage counts say how many tokens).
    short = [_answer(40 + 3 * 20, 4, 4), _answer(40 + 3 * 20 + 5, 4, 1)]
    long = [_answer(40 + 47 * 20, 48, 48), _answer(40 + 47 * 20 + 2, 48, 1)]
    assert round_step_s(long, short) == pytest.approx(0.02, rel=0.01)
    assert request_steps_s(long, short) == pytest.approx([0.02, 0.02], rel=0.01)


def test_a_round_that_cannot_tell_gives_no_step() -> None:
    short, long = [_answer(100, 4)], [_answer(1000, 48)]
    assert round_step_s([*long, RequestSample(ok=False)], short) is None
    assert round_step_s(long, [RequestSample(ok=False)]) is None
    assert round_step_s([_answer(1000, 4)], short) is None  # no more tokens
    assert round_step_s([_answer(90, 48)], short) is None  # ended no later


def test_rounds_that_agree_have_little_spread_and_requests_that_disagree_much() -> None:
    steady, noise = PointRounds(), PointRounds()
    short = [_answer(100, 4)] * 4
    for slow in (1.0, 1.3, 0.9):  # a busy machine: whole rounds slower or faster
        steady.add([_answer(100 + slow * 880, 48)] * 4, short, 150)
    for factors in ((0.2, 1, 3, 5), (0.3, 2, 4, 0.5), (6, 0.2, 1, 2)):
        noise.add([_answer(100 + f * 880, 48) for f in factors], short, 150)
    assert steady.step_s == pytest.approx(0.02, rel=0.01)
    assert steady.spread < 1.5  # the slowest round over the fastest
    assert noise.spread > 4


def test_points_from_workers_with_and_without_a_spread_are_read() -> None:
    sent = {"served_model": "m", "decode": [[1, 150, 0.02], [2, 150, 0.021, 1.2]]}
    read = ProbeResult.from_json({**sent, "prefill": []})
    assert [p.spread for p in read.decode] == [1.0, 1.2]
    for bad in ([1, 150, 0.02, 0.5], [1, 150], [1, 150, 0.02, 1.0, 9]):
        with pytest.raises(ValueError):
            ProbeResult.from_json({**sent, "decode": [bad], "prefill": []})
