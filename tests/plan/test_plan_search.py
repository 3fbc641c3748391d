"""The search for the most requests one replica carries: only the loads a replica count
gives are weighed, and the boundary found is the true one whatever the guess."""

from dataclasses import dataclass
from math import ceil

import pytest

from app.plan.schemas import PlanRequest
from app.plan.search import most_carried, replica_loads


def test_the_loads_are_those_a_replica_count_gives() -> None:
    assert replica_loads(32, 32) == [1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 32]
    assert replica_loads(32, 10) == [1, 2, 3, 4, 5, 6, 7, 8]
    for users in (1, 7, 100, 4097, 100_000):
        expected = sorted({ceil(users / r) for r in range(1, users + 1)} - {0})
        assert replica_loads(users, users) == expected


@dataclass
class Replica:
    """A replica whose requests each decode at 120 / (1 + c / 8) tok/s."""

    concurrency: int
    slots: int

    @property
    def decode(self) -> dict:
        speed = 120 / (1 + self.concurrency / 8)
        return {"low": speed, "high": speed * 2, "basis": "estimated"}

    @property
    def ttft(self) -> dict:
        return {"low": 100.0 * self.concurrency, "high": 150.0 * self.concurrency}

    @property
    def figures(self) -> dict:
        return {"running": min(self.concurrency, self.slots)}

    def limit(self, request: PlanRequest) -> str | None:
        if self.concurrency > self.slots:
            return "memory"
        if self.decode["low"] < request.min_decode_tokens_per_s:
            return "decode"
        if request.max_ttft_ms is not None and self.ttft["high"] > request.max_ttft_ms:
            return "ttft"
        return None


@pytest.mark.parametrize(
    ("users", "speed", "ttft", "slots"),
    [(32, 30, None, 999), (32, 20, 1000, 999), (500, 10, None, 64), (10_000, 5, None, 9000)],
)
def test_the_boundary_is_the_largest_load_that_meets(
    users: int, speed: float, ttft: float | None, slots: int
) -> None:
    request = PlanRequest(model="m", users=users, min_decode_tokens_per_s=speed, max_ttft_ms=ttft)
    asked: list[int] = []

    def at(concurrency: int) -> Replica:
        asked.append(concurrency)
        return Replica(concurrency, slots)

    most = min(users, 4096)
    assert Replica(1, slots).limit(request) is None  # what the search is given
    assert Replica(most, slots).limit(request) is not None
    found = most_carried(request, at, users, most)
    loads = [c for c in replica_loads(users, most) if Replica(c, slots).limit(request) is None]
    assert found == max(loads)
    assert len(set(asked)) <= 2 + len(replica_loads(users, most)).bit_length() + 2
