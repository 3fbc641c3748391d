"""The English template of every estimator and resolution message code, marked for
gettext: app/i18n/messages.py words a message in the reader's language from these."""

from collections.abc import Mapping
from typing import Any

from app.estimate.messages import Code
from app.i18n.catalogs import lazy_gettext as _l

TEMPLATES: Mapping[Code, Any] = {
    Code.FITS_WITH_SPARE: _l("fits %(tokens)s tokens with %(spare)s GB per GPU to spare"),
    Code.FITS: _l("fits %(tokens)s tokens"),
    Code.FITS_WITH_REQUESTS: _l("fits %(tokens)s tokens x %(requests)s requests"),
    Code.FITS_WITH_PAGED_REQUESTS: _l(
        "fits one request of %(tokens)s tokens, and %(requests)s requests of %(held)s tokens "
        "each at once"
    ),
    Code.FITS_UP_TO: _l("fits up to %(tokens)s tokens"),
    Code.FITS_UP_TO_NOT_ASKED: _l("fits up to %(largest)s tokens, not the %(asked)s asked"),
    Code.PAIRING_UNVERIFIED: _l("runtime pairing needs verification"),
    Code.COMPRESSED_UNVERIFIED: _l("compressed runtime needs verification"),
    Code.RUNS_WITH_OFFLOAD: _l("runs at %(tokens)s tokens with %(split)s"),
    Code.NEEDS_MEMORY: _l("needs %(needed)s GB per GPU, %(usable)s GB usable"),
    Code.FITS_BELOW_MINIMUM: _l("fits only %(tokens)s tokens, below the %(least)s minimum"),
    Code.NO_RUNTIME_RUNS_FORMATS: _l("no runtime in the catalog runs %(formats)s on %(platform)s"),
    Code.NO_RUNTIME_RUNS_MODEL: _l("no runtime in the catalog runs this model on %(platform)s"),
    Code.CANNOT_ESTIMATE: _l("cannot estimate: %(why)s"),
    Code.OFFLOAD_SPLIT_LAYERS: _l(
        "%(gpu)s GB of weights on the GPU, %(host)s GB in system memory "
        "(%(layers)s layers on the GPU)"
    ),
    Code.OFFLOAD_SPLIT_EXPERTS: _l(
        "%(gpu)s GB of weights on the GPU, %(host)s GB in system memory "
        "(experts of %(layers)s layers in system memory)"
    ),
    Code.OFFLOAD_SPLIT_BYTES: _l(
        "%(gpu)s GB of weights on the GPU, %(host)s GB in system memory "
        "(layer count unknown: split by size)"
    ),
    Code.OFFLOAD_SPLIT_LAYERS_CARDS: _l(
        "%(gpu)s GB of weights on %(cards)s GPUs, %(host)s GB in system memory "
        "(%(layers)s layers on the GPUs)"
    ),
    Code.OFFLOAD_SPLIT_EXPERTS_CARDS: _l(
        "%(gpu)s GB of weights on %(cards)s GPUs, %(host)s GB in system memory "
        "(experts of %(layers)s layers in system memory)"
    ),
    Code.PCIE_TENSOR_PARALLEL: _l("tensor parallel over PCIe: all-reduce traffic slows decode"),
    Code.IDLE_GPUS: _l("estimate uses %(used)s of %(count)s GPUs; the others are not counted"),
    Code.LAYER_SPLIT_IN_TURN: _l(
        "layers split over %(count)s cards: each holds its share of the weights and KV cache, "
        "but the cards run in turn, so decode is no faster than on one card"
    ),
    Code.BEYOND_NATIVE_CONTEXT: _l(
        "context %(context)s exceeds the native context of %(model)s (%(native)s)"
    ),
    Code.UNCAPPED_SLIDING_WINDOW: _l(
        "%(runtime)s caches the %(layers)s sliding-window layers at full context length"
    ),
    Code.Q4_KV_LONG_CONTEXT: _l(
        "a q4_0 KV cache above %(tokens)s tokens is known to hurt recall and tool calls"
    ),
    Code.SPECULATIVE_WITH_MTP: _l(
        "speculative decoding with the model's MTP layers (%(layers)s) is on: the speed counts "
        "it from published acceptance lengths, and the gain on your own task may differ"
    ),
    Code.MTP_LAYERS: _l(
        "the model has MTP layers (%(layers)s): the speed profile turns speculative decoding "
        "on, and its page shows what it buys"
    ),
    Code.SPECULATIVE_ON: _l(
        "speculative decoding is on: the speed counts it from published acceptance lengths, "
        "and the gain on your own task may differ"
    ),
    Code.OFFLOAD_SLOWER: _l(
        "part of the weights stay in system memory and are read by the CPU each token: decode "
        "is bound by system-memory bandwidth"
    ),
    Code.KV_UNKNOWN: _l(
        "KV cache unknown: without the model's architecture, memory and speed count the "
        "weights only and there is no largest context; give its config.json to size them"
    ),
    Code.INPUT_REFUSED: _l("the value given for %(field)s cannot be used"),
    Code.KV_FIELDS_MISSING: _l("%(model)s: cannot size the KV cache without %(fields)s"),
    Code.ATTENTION_UNKNOWN: _l("%(model)s: unknown attention %(attention)s"),
    Code.FIELD_BELOW: _l("%(model)s: %(field)s must be at least %(lowest)s"),
    Code.LAYERS_CONTRADICT: _l("%(model)s: the layer counts contradict each other"),
    Code.EXPERTS_PER_TOKEN_RANGE: _l("%(active)s experts per token of %(experts)s"),
    Code.LAYER_TYPES_COUNT: _l("layer_types must list one kind per layer (%(layers)s layers)"),
    Code.MODEL_COUNTS_INVALID: _l("%(model)s: %(field)s is out of range"),
    Code.UNKNOWN_QUANT: _l("unknown quant '%(name)s' (see the quant table)"),
    Code.UNKNOWN_QUANT_CLOSE: _l(
        "unknown quant '%(name)s'; did you mean %(close)s? (see the quant table)"
    ),
    Code.HEADS_UNKNOWN: _l(
        "%(model)s: the attention heads are unknown, so tensor parallel %(size)s cannot be checked"
    ),
    Code.HEADS_NOT_DIVISIBLE: _l(
        "tensor parallel %(size)s does not divide the %(heads)s attention heads of %(model)s"
    ),
    Code.TOO_FEW_GPUS: _l(
        "tensor parallel %(size)s needs %(size)s GPUs; %(hardware)s has %(count)s"
    ),
    Code.NO_TENSOR_PARALLEL: _l("%(runtime)s cannot split a model across GPUs"),
    Code.TP_HEADS_ASSUMED: _l(
        "tensor parallel %(size)s assumed valid: the attention heads are unknown, so the split "
        "over them is not checked"
    ),
    Code.ASSUMED_NATIVE_CONTEXT: _l(
        "native context: the config names none, so the answer is at %(tokens)s tokens"
    ),
    Code.GPU_SIZE_ASSUMED: _l("%(name)s taken as the common %(size)s; also sold as %(others)s"),
    Code.USABLE_FROM_CATALOG: _l(
        "usable memory %(gb)s GB per card, the catalog's figure for %(hardware)s"
    ),
    Code.LENGTHS_DEFAULTED: _l(
        "request lengths not all given: each request is counted as %(prompt)s tokens of prompt "
        "and %(output)s of output, the stated default; give the lengths you serve"
    ),
    Code.KV_DTYPE_NOT_ACCEPTED: _l("%(runtime)s does not accept a %(kv_dtype)s KV cache"),
    Code.TP_ONE_CARD: _l("one card"),
    Code.TP_SPLIT_BY_LAYER: _l("%(runtime)s splits across cards by layer"),
    Code.TP_NO_SPLIT: _l("%(runtime)s does not split a model across cards"),
    Code.TP_HEADS_DIVIDE: _l("%(size)s cards; %(heads)s attention heads divide evenly"),
    Code.TP_HEADS_DO_NOT_SPLIT: _l(
        "%(heads)s attention heads do not split over %(count)s cards; using %(size)s"
    ),
    Code.CONTEXT_LOWERED: _l("lowered to %(tokens)s, the largest that fits"),
    Code.CONCURRENCY_LOWERED: _l("lowered to %(requests)s so the KV cache fits"),
    Code.START_LOWERED: _l(
        "starts at %(tokens)s (at most %(most)s); once it loads and answers, raise it step by "
        'step as "Raising the context" shows'
    ),
    Code.ONE_REQUEST_OFFLOAD: _l("one request; %(split)s"),
    Code.ONE_REQUEST_NO_MORE_KV: _l("one request: the GPU holds no more KV cache"),
    Code.WEIGHTS_FROM_PARAMS: _l("%(params)sB params x %(bits)s bits per weight"),
    Code.WEIGHTS_RECORDED: _l("recorded file size: %(note)s"),
    Code.WEIGHTS_RECORDED_FILE: _l("recorded file size"),
    Code.WEIGHTS_BY_TENSOR_KIND: _l("%(quant)s by tensor kind"),
    Code.TENSOR_KIND_EXPERTS: _l("experts %(params)sB x %(bits)s bits"),
    Code.TENSOR_KIND_LINEAR: _l("other layers %(params)sB x %(bits)s bits"),
    Code.TENSOR_KIND_EMBEDDINGS: _l("embeddings %(params)sB x %(bits)s bits"),
    Code.WEIGHTS_DESCRIBED: _l("%(params)sB params x %(bits)s bits (%(quant)s)"),
    Code.WEIGHTS_STATED: _l("bytes stated by the %(source)s"),
    Code.WEIGHTS_GGUF_HEADER: _l("sum of tensor bytes in the GGUF header (%(types)s)"),
    Code.WEIGHTS_SPLIT_OVER: _l("split over %(count)s GPUs"),
    Code.WEIGHTS_SPLIT_BY_LAYER: _l("layers split evenly over %(count)s GPUs"),
    Code.WEIGHTS_IN_SYSTEM_MEMORY: _l("%(gb)s GB of it in system memory"),
    Code.KV_AT: _l("%(requests)s x %(tokens)s tokens at %(kv_dtype)s"),
    Code.KV_NOT_COUNTED: _l("unknown: no architecture given, not counted (%(kv)s)"),
    Code.USABLE_UNIFIED: _l("GPU share of unified memory"),
    Code.USABLE_PER_GPU: _l("usable memory per GPU"),
    Code.RESERVE_GPU_MEMORY_UTILIZATION: _l(
        "gpu_memory_utilization %(fraction)s leaves %(free)s GB free (%(beyond)s GB beyond the "
        "usable figure) + %(non_torch)s GB non-torch"
    ),
    Code.RESERVE_MEMORY_FRACTION: _l(
        "memory fraction %(fraction)s leaves %(free)s GB free (%(beyond)s GB beyond the usable "
        "figure) + %(non_torch)s GB non-torch"
    ),
    Code.RESERVE_CUDA_GRAPHS: _l("+ %(gb)s GB CUDA graphs"),
    Code.RESERVE_SGLANG: _l(
        "SGLang reserves %(mib)s MiB (%(gb)s GB) for activations, CUDA graphs and "
        "communication, less what usable leaves out"
    ),
    Code.RESERVE_FIXED: _l("fixed margin of %(gb)s GB"),
    Code.WORKSPACE_IN_SGLANG_RESERVE: _l("included in SGLang's reserve"),
    Code.WORKSPACE_HIDDEN_UNKNOWN: _l("hidden size unknown; %(gb)s GB assumed"),
    Code.WORKSPACE_PREFILL: _l("%(tokens)s prefill tokens x %(bytes)s B of activations"),
    Code.DECODE_READ: _l("%(gb)s GB read per token per GPU at %(tokens)s tokens"),
    Code.DECODE_BANDWIDTH_DENSE: _l(
        "%(share)s of %(bandwidth)s GB/s (%(family)s, dense) + %(overhead)s ms per token"
    ),
    Code.DECODE_BANDWIDTH_MOE: _l(
        "%(share)s of %(bandwidth)s GB/s (%(family)s, MoE, active weights) "
        "+ %(overhead)s ms per token"
    ),
    Code.DECODE_LAYERS_ASSUMED: _l("%(layers)s layers assumed"),
    Code.DECODE_FROM_SYSTEM_MEMORY: _l(
        "%(gb)s GB from system memory at %(share)s of an assumed %(bandwidth)s GB/s"
    ),
    Code.DECODE_LONG_CONTEXT: _l("x%(factor)s long-context slowdown"),
    Code.DECODE_TENSOR_PARALLEL: _l("x%(factor)s for tensor parallel"),
    Code.DECODE_READ_IN_TURN: _l(
        "%(gb)s GB read per token by %(count)s cards in turn at %(tokens)s tokens, "
        "with a hand-over between cards"
    ),
    Code.DECODE_RUNTIME_FACTOR: _l("x%(factor)s for %(runtime)s against llama.cpp"),
    Code.DECODE_RANGE_COVERS: _l("range holds %(share)s of calibration measurements"),
    Code.DECODE_STEP: _l(
        "%(ms)s ms per step for %(requests)s requests at %(tokens)s tokens on %(gpus)s GPUs; "
        "%(term)s takes %(share)s%%"
    ),
    Code.DECODE_RANGE_HELD: _l(
        "this range held %(held)s%% of %(checks)s checking measurements for %(segment)s"
    ),
    Code.DECODE_RANGE_BORROWED: _l(
        "only %(checks)s checking measurements for %(segment)s: the range is that of "
        "%(family)s (it held %(held)s%% of %(family_checks)s), widened"
    ),
    Code.DECODE_RANGE_FEW_PUBLISHERS: _l(
        "%(checks)s checking measurements for %(segment)s, but from too few publishers "
        "(%(publishers)s of the %(needed)s needed): the range is that of %(family)s (it held "
        "%(held)s%% of %(family_checks)s), widened"
    ),
    Code.DECODE_RANGE_CALIBRATED: _l(
        "estimated, calibrated by %(records)s records: this range held %(held)s%% of "
        "%(checks)s checking measurements and the accepted records for %(segment)s"
    ),
    Code.DECODE_CALIBRATED: _l(
        "coefficients fitted on this hardware by a calibration probe (off by %(error)s%% on "
        "its own points); range ±%(spread)s%%"
    ),
    Code.SPECULATIVE_SPEEDUP: _l("speculative decoding (%(method)s) x%(low)s-%(high)s"),
    Code.TERM_WEIGHTS: _l("reading weights"),
    Code.TERM_KV_CACHE: _l("reading the KV cache"),
    Code.TERM_COMPUTE: _l("compute"),
    Code.TERM_COMMUNICATION: _l("communication between GPUs"),
    Code.TERM_FIXED: _l("fixed overhead"),
    Code.TERM_OFFLOAD: _l("offload transfer"),
    Code.ADVICE_TENSOR_PARALLEL: _l(
        "TP %(now)s → %(then)s: communication %(before)s%% → %(after)s%%, decode x%(factor)s"
    ),
    Code.ADVICE_CONCURRENCY: _l(
        "%(now)s → %(then)s concurrent requests: each request x%(factor)s, total x%(total)s"
    ),
    Code.ADVICE_SPECULATIVE: _l("speculative decoding (%(method)s): decode x%(low)s-%(high)s"),
    Code.ADVICE_CUDA_GRAPHS: _l(
        "CUDA graphs on: fixed overhead %(before)s%% → %(after)s%%, decode x%(factor)s"
    ),
    Code.ADVICE_KV_FP8: _l("FP8 KV cache: KV reads %(before)s%% → %(after)s%%, decode x%(factor)s"),
    Code.PREFILL_MFU: _l("MFU %(low)s-%(high)s of %(gpus)s x %(tflops)s BF16 TFLOPS"),
    Code.PREFILL_ATTENTION_NOT_COUNTED: _l("attention FLOPs not counted"),
    Code.MEASURED_SPEED_ONE: _l("median of 1 accepted record at %(span)s, one request"),
    Code.MEASURED_SPEED: _l("median of %(records)s accepted records at %(span)s, one request"),
    Code.MEASURED_PEAK_ONE: _l("largest peak of 1 accepted record at %(span)s, one request"),
    Code.MEASURED_PEAK: _l("largest peak of %(records)s accepted records at %(span)s, one request"),
    Code.TOKENS_AT: _l("%(tokens)s tokens"),
    Code.TOKENS_SPAN: _l("%(low)s–%(high)s tokens"),
    Code.ESTIMATED_EXACT: _l("estimated; basis exact"),
    Code.ESTIMATED_PUBLISHED: _l("estimated; basis published"),
    Code.ESTIMATED_DERIVED: _l("estimated; basis derived"),
    Code.ESTIMATED_ASSUMED: _l("estimated; basis assumed"),
    Code.ESTIMATED_ON_GPU: _l("estimated on the GPU; %(gb)s GB of weights in system memory"),
    Code.REPORTED: _l("as reported: %(note)s"),
    Code.KNOB_SPLITS_BY_LAYER: _l("%(runtime)s splits a model across cards by layers"),
    Code.KNOB_FIXED_MARGIN: _l("%(runtime)s keeps a fixed margin free instead of a fraction"),
    Code.KNOB_NEEDS_DRAFT: _l(
        "%(runtime)s needs a separate draft model (%(flag)s); none is listed"
    ),
    Code.KNOB_OWN_CUDA_GRAPHS: _l("%(runtime)s manages CUDA graphs itself"),
    Code.KNOB_ONE_APPLE_GPU: _l("%(runtime)s serves from one Apple-silicon GPU"),
    Code.KNOB_NO_CONTEXT_FLAG: _l(
        "%(server)s has no context limit flag; its cache grows per request"
    ),
    Code.KNOB_KV_AT_MODEL_PRECISION: _l("%(server)s keeps the KV cache at the model's precision"),
    Code.KNOB_NO_PREFILL_FLAG: _l("%(server)s has no prefill chunk flag"),
    Code.KNOB_NO_CONCURRENCY_FLAG: _l("%(server)s has no flag for concurrent requests"),
    Code.KNOB_UNIFIED_SHARE: _l(
        "%(runtime)s uses the GPU share of unified memory; no fraction flag"
    ),
    Code.KNOB_NOT_CUDA: _l("not a CUDA runtime"),
    Code.KNOB_BATCH_PER_MODEL: _l(
        "%(runtime)s sets the batch per model (num_batch), not per server"
    ),
    Code.KNOB_NO_SPECULATIVE: _l("%(runtime)s has no speculative decoding"),
    Code.KNOB_MODEL_PRECISION: _l("the model's own precision"),
    Code.KNOB_ON_BY_DEFAULT: _l("on by default"),
    Code.SPECULATIVE_NOT_MODELLED: _l("speculative decoding is not modelled and can raise this"),
    Code.ASSUMED_WEIGHTS: _l("weights: %(note)s"),
    Code.ASSUMED_KV_CACHE: _l("KV cache: %(note)s"),
    Code.ASSUMED_PREFILL_WORKSPACE: _l("prefill workspace: %(note)s"),
    Code.ASSUMED_RUNTIME_RESERVE: _l("runtime reserve: %(note)s"),
    Code.ASSUMED_HARDWARE: _l("hardware %(field)s: %(note)s"),
    Code.ASSUMED_QUANT: _l("quant %(quant)s: %(note)s"),
    Code.QUANT_SIZED_LIKE: _l(
        "per-model layer choice (%(source)s); assumed like %(like)s (%(bits)s bits); "
        "give the GGUF header for exact bytes"
    ),
    Code.CUSTOM_USABLE_SHARE: _l("%(share)s of the memory given"),
    Code.DESCRIBED_DENSE: _l("%(params)sB model"),
    Code.DESCRIBED_MOE: _l("%(params)sB, %(active)sB active model"),
    Code.DESCRIBED_SAFETENSORS: _l("%(params)sB safetensors model"),
    Code.VERSIONS_BETWEEN: _l("%(low)s – %(high)s"),
    Code.VERSIONS_FROM: _l(">= %(low)s"),
    Code.VERSIONS_ANY: _l("any version"),
    Code.SHARED_WITH_KEY: _l(
        "Add %(flags)s and bind to a private interface behind a firewall; clients then send "
        "'Authorization: Bearer <key>'."
    ),
    Code.SHARED_NO_ACCESS_CONTROL: _l(
        "%(runtime)s has no access control of its own: keep it on 127.0.0.1 and put an "
        "authenticating reverse proxy in front of it."
    ),
}
