"""Jinja filters that format numbers the way every page shows them."""

from jinja2 import Environment


def thousands(value: float | int | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}"


def gb(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f} GB"


def number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def register_filters(env: Environment) -> None:
    env.filters.update(thousands=thousands, gb=gb, number=number)
