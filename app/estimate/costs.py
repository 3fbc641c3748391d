"""What serving costs at a price per GPU-hour the user gives: per million output tokens at
a throughput, and per solved task over the time a task ran. No price is built in (prices
move), and none is kept: every figure is computed here from the price asked with."""

SECONDS_PER_HOUR = 3600
MILLION = 1_000_000
COST_DIGITS = 4


def gpu_hours_per_million_tokens(gpus: int, throughput_tokens_per_s: float) -> float | None:
    """GPU-hours that a million output tokens take at this total throughput (None at none):
    times a price per GPU-hour, the cost per million output tokens."""
    if gpus < 1 or throughput_tokens_per_s <= 0:
        return None
    return gpus / (throughput_tokens_per_s * SECONDS_PER_HOUR) * MILLION


def cost_per_million_tokens(
    price_per_gpu_hour: float, gpus: int, throughput_tokens_per_s: float
) -> float | None:
    """price x GPUs / (throughput x 3600) x 1e6."""
    hours = gpu_hours_per_million_tokens(gpus, throughput_tokens_per_s)
    return None if hours is None else round(price_per_gpu_hour * hours, COST_DIGITS)


def cost_per_solved_task(
    price_per_gpu_hour: float, gpus: int, seconds: float, solved: int
) -> float | None:
    """price x GPUs x the hours the task ran, over the answers that passed (None when none
    passed: no task was solved at any cost)."""
    if solved < 1 or gpus < 1 or seconds < 0:
        return None
    return round(price_per_gpu_hour * gpus * seconds / SECONDS_PER_HOUR / solved, COST_DIGITS)
