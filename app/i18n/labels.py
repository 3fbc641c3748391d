"""The words pages show for the codes the resolution, the estimator and the records use.

The codes stay the same everywhere (JSON, CLI, URLs); only what a reader sees is
translated, when it is shown, in the reader's language.
"""

import re
from collections.abc import Mapping
from typing import Any

from app.i18n.catalogs import gettext
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.numbers import decimal
from app.i18n.sentences import Sentence, is_registered, render

VERDICTS: Mapping[str, Any] = {
    "fits": _l("fits"),
    "fits_reduced_context": _l("fits with reduced context"),
    "experimental": _l("experimental"),
    "fits_with_offload": _l("fits with offload to system memory"),
    "exceeds_memory": _l("exceeds memory (unsupported)"),
    "cannot_estimate": _l("cannot estimate"),
}
STATUSES: Mapping[str, Any] = {
    "verified": _l("verified"),
    "verification_pending": _l("verification pending"),
}
BASES: Mapping[str, Any] = {
    "measured": _l("measured"),
    "reported": _l("reported"),
    "estimated": _l("estimated"),
    "calibrated": _l("calibrated on this hardware"),
    "exact": _l("exact"),
    "published": _l("published"),
    "derived": _l("derived"),
    "assumed": _l("assumed"),
}
OUTCOMES: Mapping[str, Any] = {
    "ok": _l("loaded and answered"),
    "load_failure": _l("failed to load"),
    "long_context_failure": _l("failed on long input"),
    "wrong_answer": _l("answered, but missed the needle"),
    "inconclusive": _l("answered, but its decode could not be timed"),
}
REVIEW_STATES: Mapping[str, Any] = {
    "pending": _l("pending"),
    "accepted": _l("accepted"),
    "rejected": _l("rejected"),
    "retracted": _l("retracted"),
}
REVIEW_ACTIONS: Mapping[str, Any] = {
    "accept": _l("accept"),
    "reject": _l("reject"),
    "retract": _l("retract"),
    "submit": _l("submit"),
    # What a record's history stores: the first event, then the state each review moved to.
    "submitted": _l("submitted"),
    "accepted": _l("accepted"),
    "rejected": _l("rejected"),
    "retracted": _l("retracted"),
}
JOB_STATUSES: Mapping[str, Any] = {
    "queued": _l("queued"),
    "confirming": _l("queued again to confirm a regression"),  # a re-check's second run
    "running": _l("running"),
    "succeeded": _l("succeeded"),
    "failed": _l("failed"),
}
MEMORY_PARTS: Mapping[str, Any] = {
    "weights": _l("Weights"),
    "kv_cache": _l("KV cache"),
    "prefill_workspace": _l("Prefill workspace"),
    "runtime_reserve": _l("Runtime reserve"),
}
# Where a described model's numbers were read.
DESCRIPTION_SOURCES: Mapping[str, Any] = {
    "hf_config": _l("config.json"),
    "safetensors": _l("safetensors header"),
    "gguf": _l("GGUF header"),
    "numbers": _l("numbers given"),
    "repo": _l("Hub repository"),
}
# How a measurement sits against the estimate (app.resolve.figures.Check.verdict).
CHECKS: Mapping[str, Any] = {
    "below the estimated range": _l("below the estimated range"),
    "above the estimated range": _l("above the estimated range"),
    "within range": _l("within range"),
    "above the estimate": _l("above the estimate"),
    "at or below the estimate": _l("at or below the estimate"),
}
# The applied-values table (app.recipes.knobs): the JSON keeps its English labels.
KNOBS: Mapping[str, Any] = {
    "tensor_parallel": _l("Tensor-parallel size"),
    "context": _l("Starting context"),
    "kv_cache_dtype": _l("KV cache dtype"),
    "prefill_tokens": _l("Prefill batch (chunked prefill tokens)"),
    "max_concurrency": _l("Maximum concurrent requests"),
    "memory_fraction": _l("Memory fraction"),
    "speculative_decoding": _l("Speculative decoding"),
    "cuda_graphs": _l("CUDA graphs"),
}
KNOB_VALUES: Mapping[str, Any] = {
    "on": _l("on"),
    "off": _l("off"),
    "runtime margin (fixed)": _l("runtime margin (fixed)"),
}
# Access-token roles (app.security.tokens.ROLES), as refusals and the sign-in page name them.
ROLES: Mapping[str, Any] = {
    "submitter": _l("submitter"),
    "maintainer": _l("maintainer"),
    "worker": _l("worker"),
}
ATTENTION: Mapping[str, Any] = {
    "hybrid_linear": _l("hybrid linear"),
}

LABELS: Mapping[str, Mapping[str, Any]] = {
    "verdict": VERDICTS,
    "status": STATUSES,
    "basis": BASES,
    "outcome": OUTCOMES,
    "review_state": REVIEW_STATES,
    "review_action": REVIEW_ACTIONS,
    "memory_part": MEMORY_PARTS,
    "description_source": DESCRIPTION_SOURCES,
    "check": CHECKS,
    "job_status": JOB_STATUSES,
    "knob": KNOBS,
    "knob_value": KNOB_VALUES,
    "role": ROLES,
}


def label(kind: str, code: Any) -> str:
    """The reader's word for a code; an unknown code is shown as itself, never dropped."""
    key = getattr(code, "value", code)
    found = LABELS[kind].get(str(key))
    return str(found) if found is not None else str(key).replace("_", " ")


# A benchmark's stage as its progress names it ("smoke", "length:4096", "concurrency:8").
STAGES: Mapping[str, Any] = {
    "queued": _l("queued"),
    "confirming": _l("queued again to confirm a regression"),  # a re-check's second run
    "done": _l("done"),
    "smoke": _l("smoke test"),
    "warmup": _l("warm-up"),
    "length": _l("length %(value)s"),
    "needle": _l("needle at %(value)s"),
    "long": _l("long input %(value)s"),
    "concurrency": _l("%(value)s at once"),
    "task": _l("task %(value)s"),
}


def stage_label(step: Any) -> str:
    """A stage in the reader's words, its figure formatted for the reader's language; a stage
    this table does not know is shown as itself."""
    kind, _, value = str(step).partition(":")
    found = STAGES.get(kind)
    if found is None:
        return str(step)
    if not value:
        return str(found)
    shown = decimal(int(value)) if value.isdigit() else value
    return str(found) % {"value": shown}


# A failed job's error, stored in English as the benchmark client words it.
UNREACHABLE = re.compile(r"^could not connect to (?P<url>\S+): (?P<reason>.*)$", re.DOTALL)


def job_error_text(error: str) -> str:
    """A failed job's error in the reader's words where its shape is known (the reason the
    connection gave stays as the system wrote it)."""
    found = UNREACHABLE.match(error or "")
    if found is None:
        return error
    return gettext("could not connect to %(url)s: %(reason)s", **found.groupdict())


def flag_text(flag: Mapping[str, Any]) -> str:
    """A record's flag in the reader's words: registered as `record.flag.<code>` (a variant
    its params name appended), worded from its params; a flag stored before flags kept
    their params is shown in the English it was stored with."""
    params = flag.get("params")
    if params is None:
        return str(flag.get("message", ""))
    variant = params.get("variant")
    code = f"record.flag.{flag.get('code')}" + (f"_{variant}" if variant else "")
    if not is_registered(code):
        return str(flag.get("message", ""))
    return render(Sentence(code, {k: v for k, v in params.items() if k != "variant"}))
