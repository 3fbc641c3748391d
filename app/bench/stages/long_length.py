"""A length past the needle threshold, added when the configuration's context allows it.

A plan that asks for it (``add_long_length``) gets one extra length, at most
``LONG_LENGTH`` tokens, so the needle checks long-context accuracy on a default run. The
context comes from the plan (the configuration's own) or, failing that, from the server's
``/v1/models`` listing (vLLM and SGLang report ``max_model_len`` there). When neither says
the context is long enough, the run's notes say so, and why no needle ran.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import httpx

from app.bench.plan import BenchPlan
from app.bench.stages.context import RunContext

LONG_LENGTH = 32 * 1024


def long_length_for(plan: BenchPlan, context: int | None) -> tuple[int | None, str]:
    """(the length to add or None, a note saying what was decided and on what basis)."""
    threshold = plan.needle_min_length
    if plan.needle is False or any(length > threshold for length in plan.lengths):
        return None, ""
    if context is None:
        return None, (
            f"no length past {threshold:,} tokens was added, so no needle ran: the context "
            "length is unknown (the server reported no max_model_len); give it to run one"
        )
    if context <= threshold:
        return None, (
            f"no needle ran: the context of {context:,} tokens allows no length past {threshold:,}"
        )
    length = min(LONG_LENGTH, context)
    return length, (
        f"length {length:,} added for the needle (the context allows {context:,} tokens)"
    )


async def add_long_length(run: RunContext) -> None:
    plan = run.plan
    if not plan.add_long_length:
        return
    context = await known_context(run)
    length, note = long_length_for(plan, context)
    if length is not None and length not in run.lengths:
        run.lengths = sorted([*run.lengths, length])
    if note:
        run.notes.append(note)


async def known_context(run: RunContext) -> int | None:
    """The plan's context, else the server's ``max_model_len`` (asked once per run)."""
    if run.plan.context_length:
        return run.plan.context_length
    if not run.context_asked:
        run.served_context = await served_context(run.http, run.plan.base_url, run.plan.model)
        run.context_asked = True
    return run.served_context


async def served_context(http: httpx.AsyncClient, base_url: str, model: str) -> int | None:
    """The served model's ``max_model_len`` from ``/v1/models``, or None when not reported."""
    try:
        response = await http.get(models_url(base_url), timeout=10.0)
        entries = response.json().get("data", []) if response.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not isinstance(entries, list):
        return None
    entries = [entry for entry in entries if isinstance(entry, dict)]
    chosen = next((entry for entry in entries if entry.get("id") == model), None)
    if chosen is None and len(entries) == 1:
        chosen = entries[0]
    value = chosen.get("max_model_len") if chosen else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def models_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path = f"{path}/v1"
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/models", "", ""))
