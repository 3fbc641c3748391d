"""Speculative decoding: how many tokens a step yields, from published acceptance lengths.

A speculative step drafts `draft_tokens` per request and verifies them in one target step;
it yields the accepted tokens plus one. The speed-up at batch B is the mean accepted length
times the plain step's time over the verifying step's (which checks draft_tokens + 1 tokens
per request, so it turns compute-bound sooner), less the drafting's own cost. At batch 1
on a memory-bound card it is close to the accepted length; at large batch it shrinks, and
can fall below 1.

Accepted lengths are ranges over the published figures (sources in `seed_data/SOURCES.md`,
"Speculative decoding"), since they vary by model and task.
"""

from __future__ import annotations

import msgspec


class Method(msgspec.Struct, frozen=True):
    """One way of drafting, with its accepted length per step (tokens, the bonus one included)."""

    name: str
    draft_tokens: int
    accepted: tuple[float, float]  # mean tokens per verifying step, low and high
    draft_cost: float  # drafting time as a share of a plain step


# MTP heads driven as EAGLE (SGLang `--speculative-num-steps 3 --speculative-num-draft-tokens
# 4`, vLLM `{"method": "mtp"}`): DeepSeek-V3 reports 85-90% acceptance of the second token
# for one MTP module; chains of 3 reach an accepted length of about 2.4-3.0 on chat and code
# (SGLang's DeepSeek MTP figures); each draft step runs one MTP layer.
MTP = Method("mtp", 3, (2.2, 3.0), 0.12)
# Prompt lookup (n-gram): drafts only where the output repeats the prompt; on chat about
# 1.1-1.5 tokens per step, more on editing and extraction tasks; drafting costs nothing.
NGRAM = Method("ngram", 4, (1.1, 1.5), 0.01)
METHODS = {method.name: method for method in (MTP, NGRAM)}


def method_for(mtp_layers: int) -> Method:
    """The method the runtimes' commands use: MTP where the weights ship MTP layers (as the
    commands render it), else prompt lookup."""
    return MTP if mtp_layers else NGRAM
