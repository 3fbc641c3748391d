"""The calibration probe on its own: the served model by default is the only one the
server lists, the host allow-list is checked before any request, and a decode step is
read from each request's time per token while the round decodes together."""

import pytest

from app.bench.hosts import HostNotAllowedError
from app.bench.result import RequestSample
from app.calibrate.probe import ProbePlan, decode_step_s, run_probe_sync


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


def _sample(send_ms: float, offsets: list[float]) -> RequestSample:
    return RequestSample(
        ok=True,
        send_offset_ms=send_ms,
        chunk_offsets_ms=offsets,
        output_tokens=len(offsets),
        token_chunks=len(offsets),
    )


def test_a_step_is_the_time_per_token_while_every_request_decodes() -> None:
    # Two requests 10 ms apart, a token every 20 ms; a burst at the second one's start
    # (three chunks at once) moves its gaps but not its span.
    first = _sample(0, [100 + 20 * i for i in range(10)])
    second = _sample(10, [150, 150, 150] + [150 + 20 * i for i in range(3, 10)])
    assert decode_step_s([first, second]) == pytest.approx(0.02, rel=0.15)
    assert decode_step_s([first, RequestSample(ok=False)]) is None
