"""Medians computed in the database, on SQLite and PostgreSQL alike.

SQLite has no percentile function, so each value is ranked within its group with
ROW_NUMBER (NULLs ranked last) beside COUNT of the values present; the median is the mean
of the one or two middle ranks, exactly as `statistics.median` takes it.
"""

from collections.abc import Sequence

from sqlalchemy import ColumnElement, Integer, case, func, select
from sqlalchemy.sql import Subquery


def ranked(points: Subquery, groups: Sequence[str], metrics: Sequence[str]) -> Subquery:
    """`points` with, per metric, each row's rank in its group and the group's value count."""
    partition = [points.c[g] for g in groups]
    windows = []
    for metric in metrics:
        value = points.c[metric]
        windows += [
            func.row_number()
            .over(partition_by=partition, order_by=value.asc().nulls_last())
            .label(f"{metric}__rank"),
            func.count(value).over(partition_by=partition).label(f"{metric}__count"),
        ]
    return select(points, *windows).subquery("ranked")


def median(rows: Subquery, metric: str) -> ColumnElement[float]:
    """An aggregate over `ranked` rows: the metric's median in the group (NULL when none)."""
    rank = rows.c[f"{metric}__rank"]
    count = rows.c[f"{metric}__count"]
    middle = rank.between((count + 1) // 2, (count + 2) // 2) & (count > 0)
    return func.avg(case((middle, rows.c[metric])))


def distinct_count(rows: Subquery, column: str) -> ColumnElement[int]:
    return func.count(rows.c[column].distinct()).cast(Integer)
