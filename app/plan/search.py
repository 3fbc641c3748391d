"""The most requests one replica carries while meeting the load, found in few resolutions.

Only the loads some number of replicas gives are worth weighing: `users` over r replicas puts
ceil(users / r) on each, a few distinct values (about twice the square root of `users`).
Between one request (which meets) and the most asked (which does not), the boundary is
guessed first: a decode step grows about linearly with the requests it carries, so
1 / decode and the first token are drawn as lines through the two ends; the guess and the
value after it are weighed, and halving finishes whatever the guess left open.
"""

from collections.abc import Callable
from math import ceil

from app.plan.options import AtLoad
from app.plan.schemas import PlanRequest


def replica_loads(users: int, most: int) -> list[int]:
    """Every per-replica load ceil(users / r) up to `most`, ascending."""
    loads = []
    replicas = 1
    while replicas <= users:
        load = ceil(users / replicas)
        if load <= most:
            loads.append(load)
        if load == 1:
            break
        replicas = ceil(users / (load - 1))  # the fewest replicas that put fewer on each
    return sorted(set(loads))


def _guess(request: PlanRequest, one: AtLoad, most: AtLoad) -> float:
    """Where the load stops meeting, drawn through one request and the most asked."""
    span = most.concurrency - one.concurrency
    guesses = [float(most.concurrency)]
    slots = most.figures.get("running")
    if slots is not None and slots < most.concurrency:
        guesses.append(float(slots))
    low_one, low_most = one.decode, most.decode
    if low_one and low_most and low_most["low"] > 0 and low_one["low"] > 0:
        start, end = 1 / low_one["low"], 1 / low_most["low"]
        wanted = 1 / request.min_decode_tokens_per_s
        if end > start:
            guesses.append(one.concurrency + (wanted - start) / (end - start) * span)
    first_one, first_most = one.ttft, most.ttft
    if request.max_ttft_ms is not None and first_one and first_most:
        start, end = first_one["high"], first_most["high"]
        if end > start:
            guesses.append(one.concurrency + (request.max_ttft_ms - start) / (end - start) * span)
    return min(guesses)


def most_carried(request: PlanRequest, at: Callable[[int], AtLoad], users: int, most: int) -> int:
    """The largest per-replica load that meets the load, given that one request meets it
    and `most` does not."""
    loads = replica_loads(users, most)
    if loads[-1] != most:  # more users than one replica may carry: `most` bounds the search
        loads.append(most)
    low, high = 0, len(loads) - 1  # loads[low] meets, loads[high] does not
    if high == 0:
        return loads[0]

    def meets(index: int) -> bool:
        return at(loads[index]).limit(request) is None

    guess = _guess(request, at(loads[low]), at(loads[high]))
    below = max(i for i, load in enumerate(loads) if load <= max(guess, 1))
    index = max(low, min(high - 1, below))
    if index > low:
        if meets(index):
            low = index
        else:
            high = index
    if low + 1 < high:
        if meets(low + 1):
            low += 1
        else:
            high = low + 1
    while high - low > 1:
        middle = (low + high) // 2
        if meets(middle):
            low = middle
        else:
            high = middle
    return loads[low]
