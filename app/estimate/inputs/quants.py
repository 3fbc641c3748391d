"""One table from quant name to bits per weight, with the source of every row.

A row gives the bits of the linear layers of a dense model (`bits`), and, where the format
keeps some tensors at another precision, the bits of routed-expert tensors, of the other
linear layers of an MoE file, and of the embeddings and output head. `weight_bits` sizes a
model tensor kind by tensor kind; `bits` alone is the whole-file figure for bare numbers.

Sources (ids used in the rows):
  GGUF-CONSTANTS   the `gguf` package 0.19.0, gguf/constants.py GGML_QUANT_SIZES (= llama.cpp
                   gguf-py): block size and bytes per block of every ggml type -> exact bits.
  QUANTIZE-README  github.com/ggml-org/llama.cpp tools/quantize/README.md (commit 311c2c9f):
                   file bits per weight of each llama-quantize type on Llama-3.1-8B.
  UNSLOTH-DSV3     huggingface.co/unsloth/DeepSeek-V3-GGUF: Q4_K_M 377 GB, Q8_0 712 GB for 671B
                   parameters (MoE files sit at the base block rate).
  UNSLOTH-DYNAMIC  docs.unsloth.ai/basics/unsloth-dynamic-v2.0-ggufs: UD / _XL files choose a
                   type per layer and model, keeping sensitive layers higher.
  MLX-QUANTIZE     ml-explore.github.io/mlx/.../mlx.core.quantize.html: affine g64 default,
                   one 16-bit scale and bias per group; mxfp4/nvfp4/mxfp8 group scales.
  AWQ-GPTQ         AutoAWQ / GPTQ checkpoints: 4-bit weights, group 128, fp16 scales and
                   packed 4-bit zeros; embeddings and lm_head kept in 16 bit.
  QLORA            arXiv 2305.14314 (QLoRA): NF4 block 64 with fp32 absmax = +0.5 bit,
                   0.127 bit with double quantization; LLM.int8 keeps a scale per row.
  FP8-BLOCK        DeepSeek-V3 config (weight_block_size 128x128): FP8 e4m3 + one fp32 scale
                   per 128x128 block; embeddings and head in BF16.
  NVFP4            NVIDIA ModelOpt / RedHatAI GLM-4.6-NVFP4 config: 4-bit e2m1, group 16,
                   fp8 e4m3 scale per group; embeddings and head in BF16.
  GPT-OSS          huggingface.co/openai/gpt-oss-20b: MXFP4 (group 32, e8m0 scale) for MoE
                   expert weights only; attention, router, embeddings in BF16.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from app.estimate.basis import Basis
from app.estimate.errors import EstimateError
from app.estimate.messages import Code, Message, message

GGUF, SAFETENSORS, MLX = "gguf", "safetensors", "mlx"
BF16_BITS = 16.0


@dataclass(frozen=True)
class QuantType:
    name: str
    format: str  # the file format a runtime loads: gguf | safetensors | mlx
    bits: float  # linear layers of a dense model; the whole-file figure for bare numbers
    basis: Basis
    source: str
    note: str
    expert_bits: float | None = None  # routed-expert tensors of an MoE file
    moe_dense_bits: float | None = None  # attention and other non-expert linears of an MoE file
    embedding_bits: float | None = None  # token embeddings and output head
    # The note as a code, where the project worded it (an assumed size); `note` is its English.
    note_words: Message | None = None

    def bits_for(self, kind: str, moe: bool) -> float:
        """Bits of one tensor kind: "expert", "linear" or "embedding"."""
        if kind == "expert":
            return self.expert_bits or self.bits
        if kind == "embedding":
            return self.embedding_bits or self.bits
        return (self.moe_dense_bits or self.bits) if moe else self.bits


def _block(name: str, weights: int, nbytes: int, note: str = "") -> QuantType:
    """A single ggml tensor type: bits are exact from its block layout."""
    bits = nbytes * 8 / weights
    text = f"{nbytes} bytes per {weights} weights" + (f"; {note}" if note else "")
    return QuantType(name, GGUF, bits, Basis.EXACT, "GGUF-CONSTANTS", text)


def _mix(name: str, file_bits: float, base: str, source: str = "QUANTIZE-README") -> QuantType:
    """A llama-quantize type: a mix measured on a dense model; MoE experts at the base rate."""
    base_bits = _BLOCK_BITS[base]
    note = (
        f"file mix {file_bits} bits on Llama-3.1-8B; MoE expert tensors at the {base} block "
        f"rate {base_bits:g} (DeepSeek-V3 Q4_K_M: 377 GB for 671B, UNSLOTH-DSV3)"
    )
    return QuantType(name, GGUF, file_bits, Basis.PUBLISHED, source, note, expert_bits=base_bits)


_BLOCKS = [
    _block("F32", 1, 4),
    _block("F16", 1, 2),
    _block("BF16", 1, 2),
    _block("Q8_0", 32, 34),
    _block("Q8_1", 32, 40),
    _block("Q5_0", 32, 22),
    _block("Q5_1", 32, 24),
    _block("Q4_0", 32, 18),
    _block("Q4_1", 32, 20),
    _block("Q8_K", 256, 292),
    _block("Q6_K", 256, 210),
    _block("Q5_K", 256, 176),
    _block("Q4_K", 256, 144),
    _block("Q3_K", 256, 110),
    _block("Q2_K", 256, 84),
    _block("IQ4_NL", 32, 18),
    _block("IQ4_XS", 256, 136),
    _block("IQ3_S", 256, 110),
    _block("IQ3_XXS", 256, 98),
    _block("IQ2_S", 256, 82),
    _block("IQ2_XS", 256, 74),
    _block("IQ2_XXS", 256, 66),
    _block("IQ1_M", 256, 56),
    _block("IQ1_S", 256, 50),
    _block("TQ2_0", 256, 66),
    _block("TQ1_0", 256, 54),
    _block("Q1_0", 128, 18),
]
_BLOCK_BITS = {row.name: row.bits for row in _BLOCKS}

# llama-quantize types measured on Llama-3.1-8B (QUANTIZE-README), with their base block type.
_MIXES = [
    _mix("IQ1_S", 2.0042, "IQ1_S"),
    _mix("IQ1_M", 2.1460, "IQ1_M"),
    _mix("IQ2_XXS", 2.3824, "IQ2_XXS"),
    _mix("IQ2_XS", 2.5882, "IQ2_XS"),
    _mix("IQ2_S", 2.7403, "IQ2_S"),
    _mix("IQ2_M", 2.9294, "IQ2_S"),
    _mix("Q2_K_S", 2.9697, "Q2_K"),
    _mix("Q2_K", 3.1593, "Q2_K"),
    _mix("IQ3_XXS", 3.2548, "IQ3_XXS"),
    _mix("IQ3_XS", 3.4977, "IQ3_XXS"),
    _mix("Q3_K_S", 3.6429, "Q3_K"),
    _mix("IQ3_S", 3.6606, "IQ3_S"),
    _mix("IQ3_M", 3.7628, "IQ3_S"),
    _mix("Q3_K_L", 4.2979, "Q3_K"),
    _mix("IQ4_XS", 4.4597, "IQ4_XS"),
    _mix("Q4_K_S", 4.6672, "Q4_K"),
    _mix("IQ4_NL", 4.6818, "IQ4_NL"),
    _mix("Q4_K_M", 4.8944, "Q4_K"),
    _mix("Q5_K_S", 5.5704, "Q5_K"),
    _mix("Q5_K_M", 5.7036, "Q5_K"),
    _mix("Q6_K", 6.5633, "Q6_K"),
    _mix("Q8_0", 8.5008, "Q8_0"),
    _mix("F16", 16.0005, "F16"),
]


def _derived_mix(name: str, base: str, low: str, high: str) -> QuantType:
    """A type the README does not measure: midway between its measured neighbours."""
    by_name = {row.name: row for row in _MIXES}
    bits = round((by_name[low].bits + by_name[high].bits) / 2, 4)
    note = f"not measured in QUANTIZE-README: midway between {low} and {high}"
    return QuantType(
        name, GGUF, bits, Basis.DERIVED, "QUANTIZE-README", note, expert_bits=_BLOCK_BITS[base]
    )


def _legacy(name: str) -> QuantType:
    """Q4_0 / Q4_1 / Q5_0 / Q5_1 files: every weight at the block rate, output at Q6_K."""
    bits = _BLOCK_BITS[name]
    note = "block rate; llama-quantize keeps the output tensor at Q6_K (a small addition)"
    return QuantType(name, GGUF, bits, Basis.DERIVED, "GGUF-CONSTANTS", note)


def _dynamic(name: str, like: str) -> QuantType:
    """Community per-layer mixes (_XL, UD-): sized like the nearest standard mix."""
    ref = next(row for row in _MIXES if row.name == like)
    # The bits as the table states them (four decimals), not rounded for display.
    words = message(Code.QUANT_SIZED_LIKE, source="UNSLOTH-DYNAMIC", like=like, bits=str(ref.bits))
    note = (
        f"per-model layer choice (UNSLOTH-DYNAMIC); assumed like {like} ({ref.bits} bits); "
        "give the GGUF header for exact bytes"
    )
    return QuantType(
        name,
        GGUF,
        ref.bits,
        Basis.ASSUMED,
        "UNSLOTH-DYNAMIC",
        note,
        expert_bits=ref.expert_bits,
        note_words=words,
    )


def _mlx(bits: int) -> QuantType:
    note = f"affine, group 64, 16-bit scale and bias: {bits} + 32/64"
    return QuantType(f"MLX-{bits}BIT", MLX, bits + 0.5, Basis.DERIVED, "MLX-QUANTIZE", note)


def _packed(name: str, bits: float, source: str, note: str, **kinds: float) -> QuantType:
    """A safetensors quantization: embeddings and output head stay in 16 bit."""
    kinds.setdefault("embedding_bits", BF16_BITS)
    return QuantType(name, SAFETENSORS, bits, Basis.DERIVED, source, note, **kinds)


_OTHERS = [
    _derived_mix("Q3_K_M", "Q3_K", "Q3_K_S", "Q3_K_L"),
    *(_legacy(name) for name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1")),
    _dynamic("Q2_K_XL", "Q2_K"),
    _dynamic("Q3_K_XL", "Q3_K_L"),
    _dynamic("Q4_K_XL", "Q4_K_M"),
    _dynamic("Q5_K_XL", "Q5_K_M"),
    _dynamic("Q6_K_XL", "Q6_K"),
    _dynamic("Q8_K_XL", "Q8_0"),
    _dynamic("UD-IQ1_S", "IQ1_S"),
    _dynamic("UD-IQ1_M", "IQ1_M"),
    _dynamic("UD-IQ2_XXS", "IQ2_XXS"),
    _dynamic("UD-IQ2_M", "IQ2_M"),
    _dynamic("UD-IQ3_XXS", "IQ3_XXS"),
    _dynamic("UD-Q2_K_XL", "Q2_K"),
    _dynamic("UD-Q3_K_XL", "Q3_K_L"),
    _dynamic("UD-Q4_K_XL", "Q4_K_M"),
    _dynamic("UD-Q5_K_XL", "Q5_K_M"),
    _dynamic("UD-Q6_K_XL", "Q6_K"),
    _dynamic("UD-Q8_K_XL", "Q8_0"),
    QuantType("BF16", SAFETENSORS, 16.0, Basis.EXACT, "GGUF-CONSTANTS", "2 bytes per weight"),
    QuantType("FP16", SAFETENSORS, 16.0, Basis.EXACT, "GGUF-CONSTANTS", "2 bytes per weight"),
    QuantType("FP32", SAFETENSORS, 32.0, Basis.EXACT, "GGUF-CONSTANTS", "4 bytes per weight"),
    _packed("FP8", 8.002, "FP8-BLOCK", "e4m3 + one fp32 scale per 128x128 block: 8 + 32/16384"),
    _packed("INT8", 8.0, "QLORA", "8-bit weights, one scale per output row (W8A16 / W8A8)"),
    _packed("AWQ", 4.156, "AWQ-GPTQ", "4-bit, group 128, fp16 scale + 4-bit zero: 4 + 20/128"),
    _packed("GPTQ-INT4", 4.156, "AWQ-GPTQ", "4-bit, group 128, fp16 scale + 4-bit zero"),
    _packed("GPTQ-INT8", 8.156, "AWQ-GPTQ", "8-bit, group 128, fp16 scale + packed zero"),
    _packed("BNB-NF4", 4.5, "QLORA", "NF4, block 64, fp32 absmax: 4 + 32/64"),
    _packed("BNB-NF4-DQ", 4.127, "QLORA", "NF4 with double quantization: 4 + 0.127"),
    _packed("BNB-INT8", 8.0, "QLORA", "LLM.int8: 8-bit weights, one scale per row"),
    _packed("NVFP4", 4.5, "NVFP4", "e2m1, group 16, fp8 scale: 4 + 8/16"),
    _packed(
        "MXFP4",
        4.25,
        "GPT-OSS",
        "e2m1, group 32, e8m0 scale: 4 + 8/32; gpt-oss keeps non-expert linears in BF16",
        moe_dense_bits=BF16_BITS,
    ),
    *(_mlx(bits) for bits in (2, 3, 4, 5, 6, 8)),
]

# Names people write for the same type.
ALIASES: dict[str, str] = {
    "FP8_E4M3": "FP8",
    "FP8_DYNAMIC": "FP8",
    "W8A8_FP8": "FP8",
    "FP8_STATIC": "FP8",
    "FP8_BLOCK": "FP8",
    "INT4": "AWQ",
    "AWQ_INT4": "AWQ",
    "INT4_AWQ": "AWQ",
    "AWQ_4BIT": "AWQ",
    "W4A16": "GPTQ-INT4",
    "GPTQ": "GPTQ-INT4",
    "INT4_GPTQ": "GPTQ-INT4",
    "GPTQ_4BIT": "GPTQ-INT4",
    "W8A16": "INT8",
    "W8A8": "INT8",
    "W8A8_INT8": "INT8",
    "INT8_W8A8": "INT8",
    "W4A4_NVFP4": "NVFP4",
    "NVFP4_A16": "NVFP4",
    "NF4": "BNB-NF4",
    "BNB_4BIT": "BNB-NF4",
    "BNB_8BIT": "BNB-INT8",
    "BITSANDBYTES_4BIT": "BNB-NF4",
    "BITSANDBYTES_8BIT": "BNB-INT8",
    "FLOAT16": "FP16",
    "FLOAT32": "FP32",
    "BFLOAT16": "BF16",
    "MXFP4_MOE": "MXFP4",
    **{f"{bits}BIT": f"MLX-{bits}BIT" for bits in (2, 3, 4, 5, 6, 8)},
    **{f"MLX_{bits}": f"MLX-{bits}BIT" for bits in (2, 3, 4, 5, 6, 8)},
}


def _key(name: str) -> str:
    """Compare names without case, spacing or '-' / '_' / '.' differences."""
    return re.sub(r"[\s\-_.]+", "_", name.strip().upper())


def _table() -> dict[str, QuantType]:
    rows: dict[str, QuantType] = {}
    # File mixes replace the bare block type of the same name (Q4_K is a block type only).
    for row in [*_BLOCKS, *_MIXES, *_OTHERS]:
        rows[_key(row.name)] = row
    return rows


QUANTS: dict[str, QuantType] = _table()
_ALIASES = {_key(alias): QUANTS[_key(name)] for alias, name in ALIASES.items()}


def quant_names() -> list[str]:
    """Every name in the table, as written."""
    return sorted({row.name for row in QUANTS.values()})


def lookup_quant(name: str) -> QuantType:
    """The table's row for a quant name; unknown names list the closest ones."""
    key = _key(name)
    found = QUANTS.get(key) or _ALIASES.get(key)
    if found is None and key.startswith("UD_"):
        found = QUANTS.get(key.removeprefix("UD_"))
    if found is not None:
        return found
    raise UnknownQuant(name, close_quant_names(name))


def is_quant(name: str, table_name: str) -> bool:
    """Whether a quant name (as written, or an alias) is the table's row `table_name`."""
    key = _key(name)
    found = QUANTS.get(key) or _ALIASES.get(key)
    return (found.name if found else name).upper() == table_name.upper()


def close_quant_names(name: str) -> list[str]:
    names = {_key(n): n for n in quant_names()} | {_key(a): a for a in ALIASES}
    close = difflib.get_close_matches(_key(name), list(names), n=5, cutoff=0.5)
    return [names[k] for k in close]


class UnknownQuant(EstimateError):
    """A quant name the table does not know, with the closest names it does."""

    def __init__(self, name: str, close_matches: list[str]) -> None:
        hint = f"; did you mean {', '.join(close_matches)}?" if close_matches else ""
        reason = (
            message(Code.UNKNOWN_QUANT_CLOSE, name=name, close=tuple(close_matches))
            if close_matches
            else message(Code.UNKNOWN_QUANT, name=name)
        )
        super().__init__("quant", f"unknown quant {name!r}{hint} (see the quant table)", reason)
        self.close_matches = close_matches
