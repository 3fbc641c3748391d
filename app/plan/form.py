"""The `/plan` page's query: its fields as the JSON request `POST /api/plan` takes, so the
page's answer is the API's own. Every field is a query parameter: the URL is the question."""

from typing import Any

from starlette.datastructures import QueryParams

from app.i18n.catalogs import lazy_gettext as _l

NUMBERS = ("users", "min_decode_tokens_per_s", "max_ttft_ms", "prompt_tokens", "output_tokens")
PAGE_FIELDS = ("model", *NUMBERS, "price_per_gpu_hour", "runtime", "hardware")
LABELS = {
    "model": _l("Model"),
    "users": _l("Concurrent users"),
    "min_decode_tokens_per_s": _l("Each at least (tok/s)"),
    "max_ttft_ms": _l("First token within (ms)"),
    "prompt_tokens": _l("Prompt tokens"),
    "output_tokens": _l("Output tokens"),
    "price_per_gpu_hour": _l("Price per GPU-hour"),
    "runtime": _l("Runtime"),
    "hardware": _l("Hardware"),
}


def field_label(name: str) -> str:
    """An error's field as the form labels it ("hardware.0" is the hardware list's)."""
    head = name.split(".")[0]
    return str(LABELS.get(head, name))


def _number(text: str) -> Any:
    """A typed number as JSON would carry it; text that is none stays text (refused by name)."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text else value


def page_body(query: QueryParams) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON body of the page's question (blank fields left out), and nothing refused
    here: every refusal is the API's own, by field."""
    body: dict[str, Any] = {}
    model = query.get("model", "").strip()
    if model:
        body["model"] = model
    for name in (*NUMBERS, "price_per_gpu_hour"):
        text = query.get(name, "").strip()
        if text:
            body[name] = _number(text)
    runtime = query.get("runtime", "").strip()
    if runtime:  # blank: every runtime the route table weighs
        body["runtime"] = runtime
    hardware = [slug for slug in query.getlist("hardware") if slug]
    if hardware:
        body["hardware"] = hardware
    return body, {}
