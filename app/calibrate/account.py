"""The account of a calibration profile: fitted figures beside the datasheet's, the fit's
error, and whether it was stored as the hardware's coefficients or failed, and why."""

from __future__ import annotations

from app.calibrate.words import (
    BANDWIDTH,
    COMMUNICATION,
    FAILED,
    FIRST_TOKEN,
    FIT_ERROR,
    LAYER_TIME,
    PREFILL,
    STORED,
    refusal_sentence,
)
from app.i18n.sentences import Sentence, english
from app.models import CalibrationProfile


def account(profile: CalibrationProfile, hardware: str) -> list[Sentence]:
    """The sentences of a profile's account, in the order they are read."""
    figures = profile.figures or {}
    said: list[Sentence] = []
    if figures:
        said.append(
            BANDWIDTH(
                fitted=figures["effective_bandwidth_tb_s"],
                datasheet=figures["datasheet_bandwidth_tb_s"],
                share=round(100 * figures["bandwidth_share"]),
            )
        )
        said.append(LAYER_TIME(fitted=figures["layer_us"], shipped=figures["shipped_layer_us"]))
        if "communication_ms" in figures:
            said.append(
                COMMUNICATION(
                    fitted=figures["communication_ms"],
                    gpus=figures["gpus"],
                    shipped=figures["shipped_communication_ms"],
                )
            )
    if figures.get("prefill_fitted"):
        low, high = figures["shipped_prefill_utilisation"]
        said.append(
            PREFILL(
                fitted=round(100 * figures["prefill_utilisation"], 1),
                low=round(100 * low),
                high=round(100 * high),
            )
        )
        if "first_token_ms" in figures:  # profiles stored before it was fitted lack it
            said.append(
                FIRST_TOKEN(
                    fitted=figures["first_token_ms"], shipped=figures["shipped_first_token_ms"]
                )
            )
    if profile.fit_error is not None:
        prefill = profile.prefill_error
        said.append(
            FIT_ERROR(
                error=round(100 * profile.fit_error, 1),
                points=len((profile.points or {}).get("decode", [])),
                prefill="—" if prefill is None else f"{round(100 * prefill, 1)}%",
            )
        )
    if profile.status == "ok":
        said.append(STORED(hardware=hardware, runtime=profile.runtime))
    else:
        reason = refusal_sentence(profile.refusal) if profile.refusal else profile.reason
        said.append(FAILED(hardware=hardware, runtime=profile.runtime, reason=reason))
    return said


def account_lines(profile: CalibrationProfile, hardware: str) -> list[str]:
    """The account in English, one line per sentence (the CLI's output)."""
    return [english(sentence) for sentence in account(profile, hardware)]
