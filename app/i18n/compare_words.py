"""The reader's words for the compare page's summary: settings changed, what the figures
did, their noise bands and why a band is unknown.

app.records.effects and app.records.setting_changes word these in English for the JSON,
which keeps them as they are. Pages show them through these functions: the attribution is
worded again from the changes themselves, the rest from the codes and figures the effect
carries (a phrase it does not know is shown as written, never dropped).
"""

import re
from collections.abc import Mapping
from typing import Any

from babel.numbers import format_decimal

from app.i18n.catalogs import current_locale, ngettext
from app.i18n.catalogs import gettext as _
from app.i18n.catalogs import lazy_gettext as _l

EFFECT_LABELS: Mapping[str, Any] = {
    "ttft_ms": _l("TTFT"),
    "decode_tokens_per_s": _l("decode speed"),
    "peak_memory_gb_per_gpu": _l("peak memory"),
}
VERDICTS: Mapping[str, Any] = {
    "within noise": _l("within noise"),
    "beyond noise": _l("beyond noise"),
    "noise unknown": _l("noise unknown"),
}
DIRECTIONS: Mapping[str, Any] = {
    "better": _l("better"),
    "worse": _l("worse"),
}
SETTING_KINDS: Mapping[str, Any] = {
    "setup": _l("setup"),
    "command": _l("command"),
    "applied value": _l("applied value"),
    "environment": _l("environment"),
}
# app.records.setting_changes.SETUP: the settings of the setup, by the name JSON gives.
SETUP_NAMES: Mapping[str, Any] = {
    "model": _l("model"),
    "model file": _l("model file"),
    "runtime": _l("runtime"),
    "runtime version": _l("runtime version"),
    "hardware": _l("hardware"),
    "GPUs": _l("GPUs"),
    "profile": _l("profile"),
}

TASK_LABEL = re.compile(r"task (?P<name>.+) v(?P<version>\S+) pass rate")
POINT = re.compile(r"(?P<tokens>[\d,]+) tokens x (?P<concurrency>\d+)(?P<ramp> \(ramp\))?")
SAMPLE_BASIS = re.compile(r"lowest to highest of (?P<n>\d+) repeats")
WILSON_BASIS = re.compile(r"95 % Wilson interval over (?P<n>\d+) checked answers")
UNKNOWN = re.compile(
    r"record (?P<a>\d+)(?: and (?P<b>\d+))? kept a single figure, no repeats: "
    r"the band is unknown"
)


def whole(text: str) -> str:
    return format_decimal(int(text.replace(",", "")), format="#,##0", locale=current_locale())


def word(table: Mapping[str, Any], code: str | None) -> str:
    found = table.get(code or "")
    return str(found) if found is not None else str(code or "")


def setting_label(change: Any) -> str:
    """A setup setting by its translated name; a flag, value or variable as it is spelled."""
    if change.kind == "setup":
        return word(SETUP_NAMES, change.name)
    return str(change.label)


def attribution_text(changes: list[Any]) -> str:
    if not changes:
        return _("No setting changed: any difference in the figures is run-to-run noise")
    if len(changes) == 1:
        return _("1 setting changed: %(setting)s", setting=setting_label(changes[0]))
    return ngettext(
        "%(num)d setting changed: the effect cannot be attributed",
        "%(num)d settings changed: the effect cannot be attributed",
        len(changes),
        num=len(changes),
    )


def effect_label(effect: Any) -> str:
    if effect.metric in EFFECT_LABELS:
        return str(EFFECT_LABELS[effect.metric])
    found = TASK_LABEL.fullmatch(effect.label)
    if effect.metric == "task_pass_rate" and found:
        return _("task %(name)s v%(version)s pass rate", **found.groupdict())
    return str(effect.label)


def effect_point(effect: Any) -> str:
    if effect.point == "task prompts":
        return _("task prompts")
    found = POINT.fullmatch(effect.point)
    if not found:
        return str(effect.point)
    tokens, concurrency = whole(found["tokens"]), found["concurrency"]
    if found["ramp"]:
        return _(
            "%(tokens)s tokens x %(concurrency)s (ramp)", tokens=tokens, concurrency=concurrency
        )
    return _("%(tokens)s tokens x %(concurrency)s", tokens=tokens, concurrency=concurrency)


def band_basis(band: Any) -> str:
    found = SAMPLE_BASIS.fullmatch(band.basis)
    if found:
        n = int(found["n"])
        return ngettext(
            "lowest to highest of %(num)d repeat", "lowest to highest of %(num)d repeats", n, num=n
        )
    found = WILSON_BASIS.fullmatch(band.basis)
    if found:
        n = int(found["n"])
        return ngettext(
            "95 %% Wilson interval over %(num)d checked answer",
            "95 %% Wilson interval over %(num)d checked answers",
            n,
            num=n,
        )
    return str(band.basis)


def unknown_text(effect: Any) -> str:
    found = UNKNOWN.fullmatch(effect.unknown_because or "")
    if not found:
        return str(effect.unknown_because or "")
    if found["b"]:
        return _(
            "records %(a)s and %(b)s kept a single figure, no repeats: the band is unknown",
            a=found["a"],
            b=found["b"],
        )
    return _("record %(id)s kept a single figure, no repeats: the band is unknown", id=found["a"])


def verdict_text(effect: Any) -> str:
    verdict = word(VERDICTS, effect.verdict)
    if effect.direction:
        return _(
            "%(verdict)s (%(direction)s)",
            verdict=verdict,
            direction=word(DIRECTIONS, effect.direction),
        )
    return verdict
