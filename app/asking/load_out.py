"""JSON of the step model's figures at a load: per-request decode, total throughput, first
token, where the step's time goes, and what the range held. Reads what the resolution holds."""

from typing import Any

from app.accuracy.labels import class_anchor
from app.estimate.messages import Code, Message, message
from app.estimate.speed.load import Band, LoadEstimate
from app.estimate.speed.model import TERM_CODES, decode_notes
from app.estimate.speed.step import TERMS
from app.i18n.messages import english, messages_json
from app.resolve import ResolvedRecipe
from app.resolve.advice import Advice, recipe_advice
from app.resolve.figures import Evidence, SpeedFigure, estimated_evidence

COVERAGE_CODES = (
    Code.DECODE_RANGE_HELD,
    Code.DECODE_RANGE_BORROWED,
    Code.DECODE_RANGE_FEW_PUBLISHERS,
    Code.DECODE_RANGE_CALIBRATED,
)


def band_out(band: Band, basis: str = Evidence.ESTIMATED.value) -> dict[str, Any]:
    return {"low": band.low, "high": band.high, "basis": basis}


def _note(load: LoadEstimate, codes: tuple[Code, ...]) -> Message | None:
    """The clause of the decode figure's notes with one of these codes (the estimator words
    the range and the speed-up once, for the figure's note and for this block alike)."""
    return next((note for note in decode_notes(load) if note.code in codes), None)


def coverage_message(load: LoadEstimate) -> Message | None:
    """What the range held on its class's checking measurements, or that it was widened."""
    return _note(load, COVERAGE_CODES)


def speculative_message(load: LoadEstimate) -> Message | None:
    """Speculative decoding's speed-up, where the figures count it."""
    return _note(load, (Code.SPECULATIVE_SPEEDUP,))


def coverage_out(load: LoadEstimate) -> dict[str, Any]:
    """The range's class: the share it is meant to hold and what it held on its checks."""
    found = load.range
    said = coverage_message(load)
    return {
        "segment": found.key,
        "stated": found.stated,
        "measured": found.held,
        "checks": found.checks,
        "widened": found.borrowed,
        "records": found.records,
        "note": english(said) if said else None,
        "note_messages": messages_json([said] if said else []),
    }


def load_out(load: LoadEstimate, single_speed: SpeedFigure | None = None) -> dict[str, Any]:
    """One concurrency's figures. At one request a measured or reported speed (the table's
    figure) stands for the estimate's decode, with its basis."""
    basis = estimated_evidence(load).value
    decode = band_out(load.decode, basis)
    throughput = band_out(load.throughput, basis)
    if single_speed is not None and load.concurrency == 1:
        decode = single_speed.as_json()
        if single_speed.basis.value != basis:
            # A measured or reported request: its total is its own speed, as measured.
            throughput = {"low": single_speed.low, "high": single_speed.high}
            throughput["basis"] = single_speed.basis.value
    speedup = load.speculative_speedup
    return {
        "concurrency": load.concurrency,
        "running": load.running,
        "prompt_tokens": load.prompt_tokens,
        "output_tokens": load.output_tokens,
        "depth_tokens": load.depth,
        "decode_tokens_per_s": decode,
        "throughput_tokens_per_s": throughput,
        "ttft_ms": band_out(load.ttft_ms, basis),
        "ttft_burst_ms": band_out(load.ttft_burst_ms, basis),
        "step_ms": round(load.step.total * 1e3, 3),
        "breakdown": load.shares(),
        "speculative": (
            {"method": load.speculative, "speedup": {"low": speedup.low, "high": speedup.high}}
            if speedup is not None
            else None
        ),
        "coverage": coverage_out(load),
    }


def single_line(recipe: ResolvedRecipe) -> dict[str, Any] | None:
    """One request's figures as every surface shows them (None where no speed is shown)."""
    if recipe.single is None or recipe.unsupported:
        return None
    return load_out(recipe.single, recipe.token_generation)


def profile_line(recipe: ResolvedRecipe) -> dict[str, Any] | None:
    """The figures at the profile's own concurrency (None where no speed is shown)."""
    if recipe.load is None or recipe.unsupported:
        return None
    return load_out(recipe.load, recipe.token_generation)


def step_terms(load: LoadEstimate) -> list[dict[str, Any]]:
    """Where one decode step's time goes: each term with a share, its words and its percent
    of the bar (the terms that take none are left out)."""
    shares = load.shares()
    return [
        {
            "term": term,
            "words": message(TERM_CODES[term]),
            "share": shares[term],
            "percent": round(100 * shares[term], 1),
        }
        for term in TERMS
        if shares[term] > 0
    ]


def advice_out(advice: Advice | None) -> dict[str, Any] | None:
    """The one change most likely to help, what it does, and its sentence."""
    if advice is None:
        return None
    return {
        "change": advice.change,
        "decode_factor": advice.decode_factor,
        "throughput_factor": advice.throughput_factor,
        "message": messages_json([advice.message])[0],
        "text": english(advice.message),
    }


def speed_at_load(recipe: ResolvedRecipe) -> dict[str, Any] | None:
    """The detail page's "Speed at load" block: one request and the profile's concurrency,
    what the range held, speculative decoding's speed-up, where the step's time goes at the
    profile's load, and the one change most likely to help (None where no speed is shown)."""
    single, line = single_line(recipe), profile_line(recipe)
    if single is None or line is None or recipe.load is None:
        return None
    load = recipe.load
    return {
        "single": single,
        "load": line,
        "coverage": coverage_message(load),
        "accuracy_anchor": class_anchor(load.range.key),
        "accuracy_class": load.range.key,
        "speculative": speculative_message(load),
        "step_ms": line["step_ms"],
        "terms": step_terms(load),
        "advice": recipe_advice(recipe),
    }


def asked_load_out(recipe: ResolvedRecipe, concurrency: int | None) -> dict[str, Any]:
    """The estimate answer's top-level speed figures at the concurrency asked (one request
    when none is): what `servebook estimate --json` and `POST /api/estimate` put first."""
    asked = recipe.load if concurrency and concurrency > 1 else recipe.single
    if asked is None:
        return {
            "concurrency": concurrency or 1,
            "throughput_tokens_per_s": None,
            "ttft_ms": None,
            "breakdown": None,
            "coverage": None,
        }
    out = load_out(asked, recipe.token_generation)
    return {
        "concurrency": out["concurrency"],
        "running": out["running"],
        "decode_tokens_per_s": out["decode_tokens_per_s"],
        "throughput_tokens_per_s": out["throughput_tokens_per_s"],
        "ttft_ms": out["ttft_ms"],
        "ttft_burst_ms": out["ttft_burst_ms"],
        "breakdown": out["breakdown"],
        "speculative": out["speculative"],
        "coverage": out["coverage"],
        "request_shape": {
            "prompt_tokens": out["prompt_tokens"],
            "output_tokens": out["output_tokens"],
            "depth_tokens": out["depth_tokens"],
        },
    }
