"""Jinja setup every page shares: numbers and dates formatted for the reader's language
(Babel), gettext for the words, and the words for the codes pages show."""

import weakref
from datetime import datetime
from typing import Any

from babel.dates import format_datetime
from jinja2 import Environment, pass_context
from starlette.datastructures import URL, URLPath
from starlette.requests import Request

from app.accuracy.answer import answer as accuracy_answer
from app.accuracy.answer import range_means
from app.estimate.speed.load import DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS
from app.i18n import LANGUAGE_NAMES, LOCALES, current_locale, gettext, ngettext
from app.i18n.durations import duration, duration_band
from app.i18n.labels import LABELS, flag_text, job_error_text, label, stage_label
from app.i18n.messages import message_text, messages_text
from app.i18n.numbers import decimal
from app.i18n.prose import prose
from app.i18n.sentences import render as said
from app.records.evidence.pinned import pins_of

NONE = "—"


def decimal_pattern(digits: int) -> str:
    return "#,##0" + ("." + "0" * digits if digits > 0 else "")


def thousands(value: float | int | None) -> str:
    if value is None:
        return NONE
    return decimal(value, decimal_pattern(0))


def gb(value: float | None, digits: int = 1) -> str:
    if value is None:
        return NONE
    return f"{number(value, digits)} GB"


def number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return NONE
    return decimal(value, decimal_pattern(digits))


def datetime_text(value: datetime | None, form: str = "medium") -> str:
    """A date and time in the reader's language; stored times are UTC and say so."""
    if value is None:
        return NONE
    return format_datetime(value, format=form, tzinfo="UTC", locale=current_locale())


def date_text(value: datetime | None) -> str:
    if value is None:
        return NONE
    return format_datetime(value, format="yyyy-MM-dd", tzinfo="UTC", locale=current_locale())


def knob_value(row: Any, applied: Any) -> str:
    """An applied value as the knobs table words it, in the reader's language."""
    if row.name == "context":
        return gettext("%(tokens)s tokens", tokens=thousands(applied.context))
    return str(LABELS["knob_value"].get(row.value, row.value))


# Each router's route paths by (route name, path parameters). A router is told apart by
# identity (FastAPI's routers cannot be hashed), checked through a weak reference so that an
# identity reused after a router is gone starts afresh.
_PATHS: dict[int, tuple[weakref.ref, dict[tuple, URLPath]]] = {}
PATHS_KEPT = 4096  # per router: path parameters include record ids, which have no end


def _path_for(router: Any, name: str, params: tuple[tuple[str, Any], ...]) -> URLPath:
    kept = _PATHS.get(id(router))
    if kept is None or kept[0]() is not router:
        kept = _PATHS[id(router)] = (weakref.ref(router), {})
    paths = kept[1]
    key = (name, params)
    found = paths.get(key)
    if found is None:
        found = router.url_path_for(name, **dict(params))
        if len(paths) >= PATHS_KEPT:
            paths.clear()
        paths[key] = found
    return found


@pass_context
def url_for(context: dict[str, Any], name: str, /, **path_params: Any) -> URL:
    """Starlette's `url_for` with each route's path kept: finding a route by name walks every
    router in turn, and a page names dozens of routes (the same ones on every request)."""
    request: Request = context["request"]
    router = request.scope.get("router") or request.scope.get("app")
    try:
        path = _path_for(router, name, tuple(sorted(path_params.items())))
    except TypeError:  # a parameter that cannot be a key: look the route up as Starlette does
        return request.url_for(name, **path_params)
    return path.make_absolute_url(base_url=request.base_url)


def language_links(request: Request) -> list[dict[str, Any]]:
    """The header's switcher: this same page in each language (plain links, no script)."""
    here = current_locale()
    # A page kept in the page cache is built for its URL without the parameters it does not
    # read (app.page_cache), so one reader's stray query never shows in another's links.
    here_url = getattr(request.state, "page_url", None) or request.url
    return [
        {
            "code": code,
            "name": LANGUAGE_NAMES[code],
            "current": code == here,
            "url": str(here_url.include_query_params(lang=code)),
        }
        for code in LOCALES
    ]


def register_filters(env: Environment) -> None:
    env.add_extension("jinja2.ext.i18n")
    env.policies["ext.i18n.trimmed"] = True  # babel.cfg extracts with trimmed = true too
    env.install_gettext_callables(gettext, ngettext, newstyle=True)  # type: ignore[attr-defined]
    env.filters.update(
        thousands=thousands,
        gb=gb,
        number=number,
        duration_band=duration_band,
        duration=duration,
        accuracy_answer=lambda found: said(accuracy_answer(found)),
        accuracy_range_means=lambda found: said(range_means(found)),
        datetime=datetime_text,
        date=date_text,
        verdict_label=lambda code: label("verdict", code),
        status_label=lambda code: label("status", code),
        basis_label=lambda code: label("basis", code),
        outcome_label=lambda code: label("outcome", code),
        review_state_label=lambda code: label("review_state", code),
        review_action_label=lambda code: label("review_action", code),
        memory_part_label=lambda code: label("memory_part", code),
        description_source_label=lambda code: label("description_source", code),
        check_label=lambda code: label("check", code),
        job_status_label=lambda code: label("job_status", code),
        knob_label=lambda code: label("knob", code),
        role_label=lambda code: label("role", code),
        stage_label=stage_label,
        job_error=job_error_text,
        flag_text=flag_text,
        knob_value=knob_value,
        message_text=message_text,
        messages_text=messages_text,
        prose=prose,
        said=said,
        pins=pins_of,
    )
    env.globals.update(
        current_locale=current_locale,
        language_links=language_links,
        url_for=url_for,
        # The request a figure is for when none is asked (`RequestShape.filled`).
        default_request={"prompt": DEFAULT_PROMPT_TOKENS, "output": DEFAULT_OUTPUT_TOKENS},
    )
