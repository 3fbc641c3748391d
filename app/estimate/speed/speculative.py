"""Speculative decoding: how many tokens a step yields, from published acceptance lengths.

A speculative step drafts `draft_tokens` per request and verifies them in one target step;
it yields the accepted tokens plus one. The speed-up at batch B is the mean accepted length
times the plain step's time over the verifying step's (which checks draft_tokens + 1 tokens
per request, so it turns compute-bound sooner), less the drafting's own cost. At batch 1
on a memory-bound card it is close to the accepted length; at large batch it shrinks, and
can fall below 1.

Accepted lengths are ranges over the published figures, since they vary by model, task and
draft settings; every figure with its source and quote is in `tests/accuracy/speculative.yaml`.
"""

from __future__ import annotations

import msgspec


class Method(msgspec.Struct, frozen=True):
    """One way of drafting, with its accepted length per step (tokens, the bonus one included)."""

    name: str
    draft_tokens: int
    accepted: tuple[float, float]  # mean tokens per verifying step, low and high
    draft_cost: float  # drafting time as a share of a plain step


# MTP heads (vLLM `{"method": "mtp"}` with one token per MTP layer; SGLang EAGLE over them,
# `--speculative-num-steps 3 --speculative-num-draft-tokens 4`):
# - one MTP module: 85-90% acceptance of the second token, so 1.85-1.90 tokens per step
#   (DeepSeek-V3 technical report, https://arxiv.org/abs/2412.19437; SGLang PR 11854 measures
#   1.90-1.93, https://github.com/sgl-project/sglang/pull/11854);
# - chains of 3-4 draft tokens: 2.18-2.44 (LMSYS blog, 2025-07-17, https://github.com/lm-sys/
#   lm-sys.github.io/blob/0947bdc/blog/2025-07-17-mtp.md), 2.5-3 with topk 4 (SGLang PR 3582,
#   https://github.com/sgl-project/sglang/pull/3582).
# Each draft step runs one MTP layer: about a tenth of a plain step.
MTP = Method("mtp", 3, (1.85, 2.5), 0.12)
# Prompt lookup (n-gram) drafts only where the output repeats the prompt: on chat it can even
# slow decoding (0.89x in SpecDecode-Bench, https://specdecode-bench.github.io), on editing and
# extraction it gains more; 1.0-1.5 tokens per step; drafting costs next to nothing.
NGRAM = Method("ngram", 4, (1.0, 1.5), 0.01)
METHODS = {method.name: method for method in (MTP, NGRAM)}


def method_for(mtp_layers: int) -> Method:
    """The method the runtimes' commands use: MTP where the weights ship MTP layers (as the
    commands render it), else prompt lookup."""
    return MTP if mtp_layers else NGRAM
