"""The estimator's and the resolution's messages: every code has an English template with
Korean and Japanese translations, numbers are formatted for the reader, and JSON carries
codes that come back as the same messages."""

import re

import pytest

from app.estimate.messages import Code, Message, message
from app.i18n.catalogs import reset_locale, set_locale, translations
from app.i18n.message_templates import TEMPLATES
from app.i18n.messages import as_message, english, message_text, messages_text

PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# Two Latin words in a row: an English phrase left in a Korean or Japanese sentence.
ENGLISH_PHRASE = re.compile(r"[A-Za-z]{2,}(?:[ \t]+[A-Za-z]{2,})+")

# Parameters like the ones each code is given where it is produced.
SAMPLES: dict[Code, dict] = {
    Code.FITS_WITH_SPARE: {"tokens": 8192, "spare": 3.4},
    Code.FITS: {"tokens": 16384},
    Code.FITS_WITH_REQUESTS: {"tokens": 16384, "requests": 4},
    Code.FITS_WITH_PAGED_REQUESTS: {"tokens": 16384, "requests": 16, "held": 1280},
    Code.FITS_UP_TO: {"tokens": 32768},
    Code.FITS_UP_TO_NOT_ASKED: {"largest": 32768, "asked": 131072},
    Code.PAIRING_UNVERIFIED: {},
    Code.COMPRESSED_UNVERIFIED: {},
    Code.RUNS_WITH_OFFLOAD: {
        "tokens": 4096,
        "split": message(Code.OFFLOAD_SPLIT_LAYERS, gpu=20.0, host=23.1, layers=40),
    },
    Code.NEEDS_MEMORY: {"needed": 412.3, "usable": 127.2},
    Code.FITS_BELOW_MINIMUM: {"tokens": 1024, "least": 4096},
    Code.NO_RUNTIME_RUNS_FORMATS: {"formats": ("gguf", "safetensors"), "platform": "metal"},
    Code.NO_RUNTIME_RUNS_MODEL: {"platform": "rocm"},
    Code.CANNOT_ESTIMATE: {"why": message(Code.INPUT_REFUSED, field="hidden_size")},
    Code.OFFLOAD_SPLIT_LAYERS: {"gpu": 20.0, "host": 23.1, "layers": 40},
    Code.OFFLOAD_SPLIT_EXPERTS: {"gpu": 19.6, "host": 43.8, "layers": 26},
    Code.OFFLOAD_SPLIT_BYTES: {"gpu": 20.1, "host": 22.3},
    Code.OFFLOAD_SPLIT_LAYERS_CARDS: {"gpu": 41.3, "cards": 2, "host": 1.8, "layers": 76},
    Code.OFFLOAD_SPLIT_EXPERTS_CARDS: {"gpu": 39.2, "cards": 2, "host": 24.2, "layers": 12},
    Code.PCIE_TENSOR_PARALLEL: {},
    Code.IDLE_GPUS: {"used": 1, "count": 8},
    Code.LAYER_SPLIT_IN_TURN: {"count": 2},
    Code.BEYOND_NATIVE_CONTEXT: {"context": 262144, "model": "llama-8b", "native": 131072},
    Code.UNCAPPED_SLIDING_WINDOW: {"runtime": "llama-cpp", "layers": 18},
    Code.Q4_KV_LONG_CONTEXT: {"tokens": 32768},
    Code.SPECULATIVE_WITH_MTP: {"layers": 1},
    Code.MTP_LAYERS: {"layers": 3},
    Code.SPECULATIVE_ON: {},
    Code.OFFLOAD_SLOWER: {},
    Code.KV_UNKNOWN: {},
    Code.INPUT_REFUSED: {"field": "memory_fraction"},
    Code.KV_FIELDS_MISSING: {"model": "32b-model", "fields": "num_layers, head_dim"},
    Code.ATTENTION_UNKNOWN: {"model": "32b-model", "attention": "ring"},
    Code.FIELD_BELOW: {"model": "32b-model", "field": "head_dim", "lowest": 1},
    Code.LAYERS_CONTRADICT: {"model": "32b-model"},
    Code.EXPERTS_PER_TOKEN_RANGE: {"active": 9, "experts": 8},
    Code.LAYER_TYPES_COUNT: {"layers": 48},
    Code.MODEL_COUNTS_INVALID: {"model": "32b-model", "field": "params_total_b"},
    Code.HEADS_UNKNOWN: {"model": "32b-model", "size": 8},
    Code.UNKNOWN_QUANT: {"name": "Q4_K_XX"},
    Code.UNKNOWN_QUANT_CLOSE: {"name": "Q4_K_XX", "close": ("Q4_K_XL", "Q4_K_M")},
    Code.HEADS_NOT_DIVISIBLE: {"size": 3, "heads": 64, "model": "32b-model"},
    Code.TOO_FEW_GPUS: {"size": 4, "hardware": "rtx-4090-24gb", "count": 1},
    Code.TP_HEADS_ASSUMED: {"size": 8},
    Code.ASSUMED_NATIVE_CONTEXT: {"tokens": 4096},
    Code.USABLE_FROM_CATALOG: {"gb": 22.5, "hardware": "RTX 4090 24GB"},
    Code.LENGTHS_DEFAULTED: {"prompt": 1024, "output": 256},
    Code.GPU_SIZE_ASSUMED: {
        "name": "A100",
        "size": "A100 SXM 80 GB",
        "others": ("A100 SXM 40 GB",),
    },
    Code.NO_TENSOR_PARALLEL: {"runtime": "llama-cpp"},
    Code.KV_DTYPE_NOT_ACCEPTED: {"runtime": "mlx-lm", "kv_dtype": "fp8"},
    Code.TP_ONE_CARD: {},
    Code.TP_SPLIT_BY_LAYER: {"runtime": "llama.cpp"},
    Code.TP_NO_SPLIT: {"runtime": "MLX-LM"},
    Code.TP_HEADS_DIVIDE: {"size": 8, "heads": 64},
    Code.TP_HEADS_DO_NOT_SPLIT: {"heads": 64, "count": 6, "size": 4},
    Code.CONTEXT_LOWERED: {"tokens": 40960},
    Code.CONCURRENCY_LOWERED: {"requests": 4},
    Code.START_LOWERED: {"tokens": 32768, "most": 32768},
    Code.ONE_REQUEST_OFFLOAD: {
        "split": message(Code.OFFLOAD_SPLIT_EXPERTS, gpu=19.6, host=43.8, layers=26)
    },
    Code.ONE_REQUEST_NO_MORE_KV: {},
    Code.WEIGHTS_FROM_PARAMS: {"params": 70, "bits": 4.5},
    Code.WEIGHTS_RECORDED: {"note": "model.safetensors"},  # the catalog's own note, as it is
    Code.WEIGHTS_RECORDED_FILE: {},
    Code.WEIGHTS_BY_TENSOR_KIND: {"quant": "Q4_K_M"},
    Code.TENSOR_KIND_EXPERTS: {"params": 112.25, "bits": 4.5},
    Code.TENSOR_KIND_LINEAR: {"params": 4.2, "bits": 6},
    Code.TENSOR_KIND_EMBEDDINGS: {"params": 1.07, "bits": 8},
    Code.WEIGHTS_DESCRIBED: {"params": 32, "bits": 16, "quant": "BF16"},
    Code.WEIGHTS_STATED: {"source": "safetensors.index.json"},
    Code.WEIGHTS_GGUF_HEADER: {"types": "339 Q4_K, 121 F32"},
    Code.WEIGHTS_SPLIT_OVER: {"count": 8},
    Code.WEIGHTS_SPLIT_BY_LAYER: {"count": 2},
    Code.WEIGHTS_IN_SYSTEM_MEMORY: {"gb": 43.8},
    Code.KV_AT: {"requests": 4, "tokens": 32768, "kv_dtype": "fp8"},
    Code.KV_NOT_COUNTED: {"kv": message(Code.KV_AT, requests=1, tokens=4096, kv_dtype="auto")},
    Code.USABLE_UNIFIED: {},
    Code.USABLE_PER_GPU: {},
    Code.RESERVE_GPU_MEMORY_UTILIZATION: {
        "fraction": 0.9,
        "free": 14.1,
        "beyond": 11.3,
        "non_torch": 0.5,
    },
    Code.RESERVE_MEMORY_FRACTION: {"fraction": 0.85, "free": 3.6, "beyond": 0.0, "non_torch": 0.5},
    Code.RESERVE_CUDA_GRAPHS: {"gb": 1.0},
    Code.RESERVE_SGLANG: {"mib": 8960, "gb": 9.4},
    Code.RESERVE_FIXED: {"gb": 1},
    Code.WORKSPACE_IN_SGLANG_RESERVE: {},
    Code.WORKSPACE_HIDDEN_UNKNOWN: {"gb": 0.5},
    Code.WORKSPACE_PREFILL: {"tokens": 8192, "bytes": 81920},
    Code.DECODE_READ: {"gb": 5.45, "tokens": 4096},
    Code.DECODE_READ_IN_TURN: {"gb": 42.9, "count": 2, "tokens": 4096},
    Code.DECODE_BANDWIDTH_DENSE: {
        "share": 0.62,
        "bandwidth": 4800,
        "family": "cuda",
        "overhead": 1.28,
    },
    Code.DECODE_BANDWIDTH_MOE: {
        "share": 0.45,
        "bandwidth": 1008,
        "family": "cuda",
        "overhead": 2.5,
    },
    Code.DECODE_LAYERS_ASSUMED: {"layers": 32},
    Code.DECODE_FROM_SYSTEM_MEMORY: {"gb": 1.0, "share": 0.6, "bandwidth": 80},
    Code.DECODE_LONG_CONTEXT: {"factor": 0.8},
    Code.DECODE_TENSOR_PARALLEL: {"factor": 0.9},
    Code.DECODE_RUNTIME_FACTOR: {"factor": 1.2, "runtime": "mlx-lm"},
    Code.DECODE_RANGE_COVERS: {"share": "80%"},
    Code.DECODE_STEP: {
        "ms": 4.28,
        "requests": 1,
        "tokens": 16384,
        "gpus": 8,
        "term": message(Code.TERM_FIXED),
        "share": 60,
    },
    Code.DECODE_RANGE_HELD: {"held": 78, "checks": 41, "segment": "sglang/cuda/multi/c1"},
    Code.DECODE_RANGE_CALIBRATED: {
        "records": 12,
        "held": 80,
        "checks": 11,
        "segment": "vllm/rocm+vulkan/multi/cN",
    },
    Code.DECODE_RANGE_BORROWED: {
        "checks": 3,
        "segment": "vllm/rocm/multi/cN",
        "family": "vllm/*/*/*",
        "held": 78,
        "family_checks": 27,
    },
    Code.DECODE_RANGE_FEW_PUBLISHERS: {
        "checks": 156,
        "segment": "sglang/cuda/multi/cN",
        "family": "sglang/*/*/*",
        "held": 79,
        "family_checks": 249,
        "publishers": 2,
        "needed": 3,
    },
    Code.DECODE_CALIBRATED: {"error": 4.2, "spread": 10},
    Code.SPECULATIVE_SPEEDUP: {"method": "mtp", "low": 1.11, "high": 1.51},
    Code.TERM_WEIGHTS: {},
    Code.TERM_KV_CACHE: {},
    Code.TERM_COMPUTE: {},
    Code.TERM_COMMUNICATION: {},
    Code.TERM_FIXED: {},
    Code.TERM_OFFLOAD: {},
    Code.ADVICE_TENSOR_PARALLEL: {"now": 8, "then": 4, "before": 31, "after": 18, "factor": 1.3},
    Code.ADVICE_CONCURRENCY: {"now": 16, "then": 8, "factor": 1.2, "total": 0.6},
    Code.ADVICE_SPECULATIVE: {"method": "mtp", "low": 1.49, "high": 2.03},
    Code.ADVICE_CUDA_GRAPHS: {"before": 60, "after": 20, "factor": 1.9},
    Code.ADVICE_KV_FP8: {"before": 40, "after": 25, "factor": 1.2},
    Code.PREFILL_MFU: {"low": 0.3, "high": 0.5, "gpus": 8, "tflops": 989},
    Code.PREFILL_ATTENTION_NOT_COUNTED: {},
    Code.MEASURED_SPEED_ONE: {"span": message(Code.TOKENS_AT, tokens=4096)},
    Code.MEASURED_SPEED: {"records": 3, "span": message(Code.TOKENS_SPAN, low=4096, high=32768)},
    Code.MEASURED_PEAK_ONE: {"span": message(Code.TOKENS_AT, tokens=4096)},
    Code.MEASURED_PEAK: {"records": 2, "span": message(Code.TOKENS_AT, tokens=32768)},
    Code.TOKENS_AT: {"tokens": 4096},
    Code.TOKENS_SPAN: {"low": 4096, "high": 32768},
    Code.ESTIMATED_EXACT: {},
    Code.ESTIMATED_PUBLISHED: {},
    Code.ESTIMATED_DERIVED: {},
    Code.ESTIMATED_ASSUMED: {},
    Code.ESTIMATED_ON_GPU: {"gb": 43.8},
    Code.SPECULATIVE_NOT_MODELLED: {},
    Code.REPORTED: {"note": "llama-bench"},
    Code.KNOB_SPLITS_BY_LAYER: {"runtime": "Ollama"},
    Code.KNOB_FIXED_MARGIN: {"runtime": "llama.cpp"},
    Code.KNOB_NEEDS_DRAFT: {"runtime": "MLX-LM", "flag": "--draft-model"},
    Code.KNOB_OWN_CUDA_GRAPHS: {"runtime": "llama.cpp"},
    Code.KNOB_ONE_APPLE_GPU: {"runtime": "MLX-LM"},
    Code.KNOB_NO_CONTEXT_FLAG: {"server": "mlx_lm.server"},
    Code.KNOB_KV_AT_MODEL_PRECISION: {"server": "mlx_lm.server"},
    Code.KNOB_NO_PREFILL_FLAG: {"server": "mlx_lm.server"},
    Code.KNOB_NO_CONCURRENCY_FLAG: {"server": "mlx_lm.server"},
    Code.KNOB_UNIFIED_SHARE: {"runtime": "MLX"},
    Code.KNOB_NOT_CUDA: {},
    Code.KNOB_BATCH_PER_MODEL: {"runtime": "Ollama"},
    Code.KNOB_NO_SPECULATIVE: {"runtime": "Ollama"},
    Code.KNOB_MODEL_PRECISION: {},
    Code.KNOB_ON_BY_DEFAULT: {},  # the catalog's own note, as it is
    # A figure's notes are clauses, joined as a reason's are.
    Code.ASSUMED_WEIGHTS: {
        "note": (message(Code.WEIGHTS_DESCRIBED, params=32, bits=4.9, quant="Q4_K_XL"),)
    },
    Code.ASSUMED_KV_CACHE: {"note": (message(Code.KV_NOT_COUNTED, kv="auto"),)},
    Code.ASSUMED_PREFILL_WORKSPACE: {"note": (message(Code.WORKSPACE_HIDDEN_UNKNOWN, gb=0.5),)},
    Code.ASSUMED_RUNTIME_RESERVE: {
        "note": (message(Code.RESERVE_FIXED, gb=1.074), message(Code.RESERVE_CUDA_GRAPHS, gb=0.5))
    },
    Code.ASSUMED_HARDWARE: {
        "field": "usable_memory_gb",
        "note": message(Code.CUSTOM_USABLE_SHARE, share="90%"),
    },
    Code.ASSUMED_QUANT: {
        "quant": "Q4_K_XL",
        "note": message(
            Code.QUANT_SIZED_LIKE, source="UNSLOTH-DYNAMIC", like="Q4_K_M", bits="4.8944"
        ),
    },
    Code.QUANT_SIZED_LIKE: {"source": "UNSLOTH-DYNAMIC", "like": "Q4_K_M", "bits": "4.8944"},
    Code.CUSTOM_USABLE_SHARE: {"share": "90%"},
    Code.DESCRIBED_DENSE: {"params": 32},
    Code.DESCRIBED_MOE: {"params": 30, "active": 3},
    Code.DESCRIBED_SAFETENSORS: {"params": 3.5},
    Code.VERSIONS_BETWEEN: {"low": "0.8.5", "high": "0.9.1"},
    Code.VERSIONS_FROM: {"low": "0.8.5"},
    Code.VERSIONS_ANY: {},
    Code.SHARED_WITH_KEY: {"flags": "--api-key <key>"},
    Code.SHARED_NO_ACCESS_CONTROL: {"runtime": "Ollama"},
}


@pytest.fixture
def in_language(request: pytest.FixtureRequest):  # noqa: ANN201
    tokens = []

    def use(locale: str) -> None:
        tokens.append(set_locale(locale))

    yield use
    for token in reversed(tokens):
        reset_locale(token)


def template_id(code: Code) -> str:
    return TEMPLATES[code]._args[0]  # the msgid the lazy template was marked with


def test_every_code_has_a_template_and_a_sample() -> None:
    assert set(TEMPLATES) == set(Code)
    assert set(SAMPLES) == set(Code)


@pytest.mark.parametrize("code", list(Code))
@pytest.mark.parametrize("locale", ["ko", "ja"])
def test_every_template_is_translated_with_the_same_placeholders(code: Code, locale: str) -> None:
    msgid = template_id(code)
    translated = translations(locale).ugettext(msgid)
    assert translated != msgid
    assert sorted(PLACEHOLDER.findall(translated)) == sorted(PLACEHOLDER.findall(msgid))
    assert sorted(set(PLACEHOLDER.findall(msgid))) == sorted(SAMPLES[code])


@pytest.mark.parametrize("code", list(Code))
@pytest.mark.parametrize("locale", ["ko", "ja"])
def test_no_english_phrase_is_left_in_korean_or_japanese(in_language, code, locale) -> None:  # noqa: ANN001
    in_language(locale)
    text = message_text(Message(code, SAMPLES[code]))
    assert text and not ENGLISH_PHRASE.search(text), text


def test_the_english_wording_is_an_english_phrase() -> None:
    # The check above would see English, had the translations fallen back to it.
    text = english(message(Code.NEEDS_MEMORY, needed=412.3, usable=127.2))
    assert text == "needs 412.3 GB per GPU, 127.2 GB usable"
    assert ENGLISH_PHRASE.search(text)


def test_an_unregistered_code_is_refused_where_the_message_is_made() -> None:
    with pytest.raises(ValueError, match="no_such_code"):
        Message("no_such_code", {})
    assert Message("fits", {"tokens": 1}).code is Code.FITS


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        (
            "en",
            "runtime pairing needs verification; fits up to 32,768 tokens, not the 131,072 asked",
        ),
        ("ko", "런타임 조합 검증 필요; 요청한 131,072 토큰이 아니라 최대 32,768 토큰까지 들어감"),
        (
            "ja",
            "ランタイムの組み合わせは検証待ち。要求された 131,072 トークンではなく、"
            "最大 32,768 トークンまで収まる",
        ),
    ],
)
def test_clauses_are_joined_and_numbers_grouped_the_readers_way(in_language, locale, expected):  # noqa: ANN001
    in_language(locale)
    reason = (
        message(Code.PAIRING_UNVERIFIED),
        message(Code.FITS_UP_TO_NOT_ASKED, largest=32768, asked=131072),
    )
    assert messages_text(reason) == expected


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("en", "no runtime in the catalog runs gguf or safetensors on metal"),
        ("ko", "카탈로그에 metal에서 gguf 또는 safetensors을(를) 실행하는 런타임이 없음"),
        ("ja", "カタログに metal で ggufまたはsafetensors を実行できるランタイムがない"),  # CLDR
    ],
)
def test_a_list_reads_as_alternatives_in_the_readers_language(in_language, locale, expected):  # noqa: ANN001
    in_language(locale)
    found = message(Code.NO_RUNTIME_RUNS_FORMATS, formats=["gguf", "safetensors"], platform="metal")
    assert message_text(found) == expected


def test_a_nested_message_is_worded_in_turn(in_language) -> None:  # noqa: ANN001
    in_language("ko")
    why = message(Code.HEADS_UNKNOWN, model="32b-model", size=8)
    assert message_text(message(Code.CANNOT_ESTIMATE, why=why)) == (
        "추정할 수 없음: 32b-model: 어텐션 헤드 수를 몰라 텐서 병렬 8을(를) 확인할 수 없음"
    )


def test_json_carries_codes_that_come_back_as_the_same_message() -> None:
    split = message(Code.OFFLOAD_SPLIT_EXPERTS, gpu=19.6, host=43.8, layers=26)
    reason = message(Code.RUNS_WITH_OFFLOAD, tokens=4096, split=split)
    data = reason.as_json()
    assert data == {
        "code": "runs_with_offload",
        "params": {
            "tokens": 4096,
            "split": {
                "code": "offload_split_experts",
                "params": {"gpu": 19.6, "host": 43.8, "layers": 26},
            },
        },
    }
    assert as_message(data) == reason
    listed = message(Code.NO_RUNTIME_RUNS_FORMATS, formats=["gguf"], platform="cpu")
    assert listed.as_json()["params"]["formats"] == ["gguf"]
    assert as_message(listed.as_json()) == listed
    assert hash(as_message(data)) == hash(reason)
