"""The few statistics the quality checks need, exact and without dependencies.

Wilson score intervals for a rate, McNemar's exact test for paired pass/fail outcomes, a
seeded bootstrap for the change of a paired rate, and how many pairs a drop needs to show.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z_95 = 1.959963984540054
ALPHA = 0.05


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / trials`` (95% by default)."""
    if trials <= 0:
        return 0.0, 1.0
    rate = successes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def one_sided_lower_bound(successes: int, trials: int, level: float = 0.95) -> float:
    """Clopper-Pearson lower bound: the accuracy is at least this with ``level`` confidence."""
    if trials <= 0 or successes <= 0:
        return 0.0
    if successes == trials:
        return (1 - level) ** (1 / trials)
    low, high = 0.0, successes / trials
    for _ in range(60):  # bisection on the binomial tail, P(X >= successes | p) = 1 - level
        middle = (low + high) / 2
        if _upper_tail(successes, trials, middle) < 1 - level:
            low = middle
        else:
            high = middle
    return low


def _upper_tail(successes: int, trials: int, p: float) -> float:
    return sum(
        math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(successes, trials + 1)
    )


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (pass->fail, fail->pass)."""
    discordant = lost + gained
    if discordant == 0:
        return 1.0
    smaller = min(lost, gained)
    tail = sum(math.comb(discordant, k) for k in range(smaller + 1)) / 2**discordant
    return min(1.0, 2 * tail)


def bootstrap_change(
    before: Sequence[bool], after: Sequence[bool], resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile band of the paired rate change (after - before), seeded."""
    pairs = list(zip(before, after, strict=True))
    if not pairs:
        return 0.0, 0.0
    rng = random.Random(seed)
    count = len(pairs)
    diffs = [int(b) - int(a) for a, b in pairs]
    changes = sorted(
        sum(diffs[rng.randrange(count)] for _ in range(count)) / count for _ in range(resamples)
    )
    return changes[int(0.025 * resamples)], changes[int(0.975 * resamples) - 1]


def pairs_needed(drop: float = 0.10, power: float = 0.80, alpha: float = ALPHA) -> int:
    """Pairs needed for McNemar's exact test to see a drop of ``drop`` with ``power``, when
    every lost pair is a drop (no gains): the fewest n where P(Binomial(n, drop) >= k) >=
    power, k the fewest one-way discordant pairs with p < alpha."""
    least_lost = next(k for k in range(1, 64) if mcnemar_exact(k, 0) < alpha)
    n = least_lost
    while n < 100_000:
        miss = sum(math.comb(n, k) * drop**k * (1 - drop) ** (n - k) for k in range(least_lost))
        if 1 - miss >= power:
            return n
        n += 1
    return n
