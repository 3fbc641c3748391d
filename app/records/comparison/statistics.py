"""Pass rates as counts: their 95 % band, whether two differ, and how many prompts would
tell two apart. Pure arithmetic on integers, so every surface shows the same figures.

- The band is the Wilson score interval: it stays inside 0..1 and keeps a sensible width
  at 0 or all passed, where the normal ("Wald") interval collapses to a point.
- Two rates differ when Fisher's exact test, two-sided, rejects equal rates at the level
  asked. The p-value sums the probabilities of every table with the same margins that is
  no more likely than the one observed; the tables are compared as exact integers, so no
  floating-point tolerance decides a tie.
- The prompts needed per arm come from the normal approximation for two proportions
  (pooled variance under equal rates, unpooled under the observed ones; Fleiss, without
  continuity correction), at a two-sided level and a power.
"""

import math
from dataclasses import dataclass
from statistics import NormalDist

CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.80


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def normal_quantile(probability: float) -> float:
    return NormalDist().inv_cdf(probability)


def wilson_interval(passed: int, total: int, confidence: float = CONFIDENCE) -> Interval | None:
    """The Wilson score interval of passed/total; None without any answer checked."""
    if total < 1 or not 0 <= passed <= total:
        return None
    z = normal_quantile(0.5 + confidence / 2)
    share = passed / total
    spread = z * math.sqrt(share * (1 - share) / total + z**2 / (4 * total**2))
    centre = share + z**2 / (2 * total)
    scale = 1 + z**2 / total
    # At none or all passed the end is exactly 0 or 1; the arithmetic leaves a rounding crumb.
    low = 0.0 if passed == 0 else max(0.0, (centre - spread) / scale)
    high = 1.0 if passed == total else min(1.0, (centre + spread) / scale)
    return Interval(low, high)


def fisher_exact(passed_a: int, total_a: int, passed_b: int, total_b: int) -> float:
    """Two-sided p-value of Fisher's exact test on the 2x2 table of passed and failed."""
    for passed, total in ((passed_a, total_a), (passed_b, total_b)):
        if total < 1 or not 0 <= passed <= total:
            raise ValueError("each arm needs 0 <= passed <= total and total >= 1")
    solved = passed_a + passed_b
    everyone = total_a + total_b
    lowest, highest = max(0, solved - total_b), min(solved, total_a)

    def weight(x: int) -> int:  # tables with x passed in arm A, times C(N, solved)
        return math.comb(total_a, x) * math.comb(total_b, solved - x)

    observed = weight(passed_a)
    as_likely = sum(w for w in map(weight, range(lowest, highest + 1)) if w <= observed)
    return min(1.0, as_likely / math.comb(everyone, solved))


def prompts_per_arm(
    rate_a: float, rate_b: float, alpha: float = ALPHA, power: float = POWER
) -> int | None:
    """Prompts each arm needs for a two-sided test at `alpha` to tell `rate_a` from
    `rate_b` with probability `power`; None when the rates are equal (no number does)."""
    difference = abs(rate_a - rate_b)
    if difference == 0:
        return None
    z_alpha = normal_quantile(1 - alpha / 2)
    z_power = normal_quantile(power)
    pooled = (rate_a + rate_b) / 2
    null_spread = math.sqrt(2 * pooled * (1 - pooled))
    spread = math.sqrt(rate_a * (1 - rate_a) + rate_b * (1 - rate_b))
    n = ((z_alpha * null_spread + z_power * spread) / difference) ** 2
    return max(1, math.ceil(n - 1e-9))
