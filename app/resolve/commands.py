"""Launch commands per runtime, built as argv lists with each runtime's real flags.

A balanced recipe reads like the official instructions: a knob is put on the command line
only where the profile departs from balanced (or the runtime needs it said, such as the
context). Every knob the command leaves out is reported as "left at the runtime's default"
with the flag that would set it; a knob a runtime cannot set says why. Every server binds
to 127.0.0.1; sharing it is a separate, explicit choice (see `shared_setup`).

Speculative decoding flags (seed_data/SOURCES.md, "Speculative decoding"):
- SGLang serves a model's own MTP layers through EAGLE with the recipe's 3/1/4 settings,
  and has NGRAM (CUDA only) for models without one.
- vLLM has `{"method": "mtp"}` for models with MTP layers and n-gram lookup otherwise.
- llama.cpp and MLX-LM need a separate draft model file, which the catalog does not hold;
  Ollama has no speculative decoding.
"""

import json
import shlex
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

import msgspec

from app.estimate.messages import Code, Message, message
from app.i18n.messages import english
from app.models import Artifact, LlmModel, Runtime
from app.resolve.applied import AppliedValues

HOST = "127.0.0.1"
PORT = 8000

# Spreading a model over several cards by layer (seed_data/SOURCES.md, "Layer split"):
# llama-server's `--split-mode {none,layer,row}` and `--tensor-split` (the share of the
# model each card takes, as a comma-separated list), from tools/server/README.md; Ollama's
# `OLLAMA_SCHED_SPREAD` (schedule a model across all GPUs), from envconfig/config.go.
SPLIT_MODE_FLAG = "--split-mode"
TENSOR_SPLIT_FLAG = "--tensor-split"
OLLAMA_SPREAD = "OLLAMA_SCHED_SPREAD"

# Knobs a profile sets, in the order the applied-values table lists them.
KNOBS = (
    "tensor_parallel",
    "context",
    "kv_cache_dtype",
    "prefill_tokens",
    "max_concurrency",
    "memory_fraction",
    "speculative_decoding",
    "cuda_graphs",
)


class KnobState(StrEnum):
    SET = "set"  # the command sets it
    DEFAULT = "default"  # left at the runtime's default; `flag` would set it
    UNSUPPORTED = "unsupported"  # the runtime cannot set it; `note` says why


class Knob(msgspec.Struct, frozen=True):
    state: KnobState
    flag: str | None = None
    note: Message | None = None

    def as_json(self) -> dict:
        note = self.note
        return {
            "state": self.state.value,
            "flag": self.flag,
            "note": english(note) if note else "",
            "note_message": note.as_json() if note else None,
        }


class Command(msgspec.Struct, frozen=True):
    runtime: str
    artifact: str
    argv: list[str]
    followup: list[str] | None = None  # e.g. pulling the model into a daemon
    knobs: dict[str, Knob] = msgspec.field(default_factory=dict)

    @property
    def shell(self) -> str:
        return shlex.join(self.argv)

    @property
    def followup_shell(self) -> str | None:
        return shlex.join(self.followup) if self.followup else None

    def left_at_default(self) -> frozenset[str]:
        return frozenset(k for k, knob in self.knobs.items() if knob.state != KnobState.SET)

    def as_json(self) -> dict:
        return {
            "runtime": self.runtime,
            "artifact": self.artifact,
            "argv": self.argv,
            "shell": self.shell,
            "followup": self.followup_shell,
            "knobs": {name: knob.as_json() for name, knob in self.knobs.items()},
        }


@dataclass
class Argv:
    """An argv under construction, with what it did about each knob."""

    values: AppliedValues
    explicit: Collection[str]
    argv: list[str]
    knobs: dict[str, Knob] = field(default_factory=dict)

    def always(self, knob: str, flags: list[str]) -> None:
        self.argv += flags
        self.knobs[knob] = Knob(KnobState.SET, flag_text(*flags))

    def option(self, knob: str, flags: list[str]) -> None:
        """Set where the profile departs from balanced; otherwise name the flag only."""
        if knob in self.explicit:
            self.always(knob, flags)
        else:
            self.knobs[knob] = Knob(KnobState.DEFAULT, flag_text(*flags))

    def cannot(self, knob: str, why: Message) -> None:
        self.knobs[knob] = Knob(KnobState.UNSUPPORTED, None, why)


@lru_cache(maxsize=1024)
def flag_text(*flags: str) -> str:
    """A knob's flags as a shell would take them, worked out once for each distinct set:
    every command names each of its knobs' flags, and most are the same few."""
    return shlex.join(flags)


Builder = Callable[[Argv, Artifact, LlmModel], None]


def sglang(cmd: Argv, artifact: Artifact, model: LlmModel) -> None:
    v = cmd.values
    tensor_parallel_flag(cmd, "--tp")
    cmd.argv += ["--host", HOST, "--port", str(PORT)]
    cmd.always("context", ["--context-length", str(v.context)])
    if v.memory_fraction is not None:
        cmd.option("memory_fraction", ["--mem-fraction-static", f"{v.memory_fraction:.2f}"])
    kv_cache_flag(cmd, ["--kv-cache-dtype", v.kv_cache_dtype])
    cmd.option("prefill_tokens", ["--chunked-prefill-size", str(v.prefill_tokens)])
    cmd.option("max_concurrency", ["--max-running-requests", str(v.max_concurrency)])
    speculative(cmd, sglang_speculative(model))
    graphs_flag(cmd, ["--disable-cuda-graph"])


def sglang_speculative(model: LlmModel) -> list[str]:
    if model.mtp_layers:
        return [
            "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
        ]  # fmt: skip
    return ["--speculative-algorithm", "NGRAM"]


def vllm(cmd: Argv, artifact: Artifact, model: LlmModel) -> None:
    v = cmd.values
    tensor_parallel_flag(cmd, "--tensor-parallel-size")
    cmd.argv += ["--host", HOST, "--port", str(PORT)]
    cmd.always("context", ["--max-model-len", str(v.context)])
    # The published commands always state the share of the card vLLM takes.
    cmd.always("memory_fraction", ["--gpu-memory-utilization", f"{v.memory_fraction or 0.90:.2f}"])
    kv_cache_flag(cmd, ["--kv-cache-dtype", v.kv_cache_dtype])
    cmd.option("prefill_tokens", ["--max-num-batched-tokens", str(v.prefill_tokens)])
    cmd.option("max_concurrency", ["--max-num-seqs", str(v.max_concurrency)])
    method = (
        {"method": "mtp", "num_speculative_tokens": model.mtp_layers}
        if model.mtp_layers
        else {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}
    )
    speculative(cmd, ["--speculative-config", json.dumps(method)])
    graphs_flag(cmd, ["--enforce-eager"])


def llama_cpp(cmd: Argv, artifact: Artifact, model: LlmModel) -> None:
    v = cmd.values
    cmd.argv += ["-hf", f"{artifact.repo}:{artifact.quant.upper()}"]
    cmd.argv += ["--host", HOST, "--port", str(PORT)]
    # llama-server shares --ctx-size between its parallel slots.
    cmd.always("context", ["--ctx-size", str(v.context * v.max_concurrency)])
    cmd.always("max_concurrency", ["--parallel", str(v.max_concurrency)])
    cmd.argv += ["--n-gpu-layers", "999", "--flash-attn", "on"]
    if v.split == "layer":
        cmd.argv += layer_split_flags(v.layer_split)
    cmd.cannot("tensor_parallel", message(Code.KNOB_SPLITS_BY_LAYER, runtime="llama.cpp"))
    kv_cache_flag(cmd, ["--cache-type-k", v.kv_cache_dtype, "--cache-type-v", v.kv_cache_dtype])
    cmd.option("prefill_tokens", ["--ubatch-size", str(v.prefill_tokens)])
    cmd.cannot("memory_fraction", message(Code.KNOB_FIXED_MARGIN, runtime="llama.cpp"))
    speculative(cmd, message(Code.KNOB_NEEDS_DRAFT, runtime="llama.cpp", flag="--model-draft"))
    cmd.cannot("cuda_graphs", message(Code.KNOB_OWN_CUDA_GRAPHS, runtime="llama.cpp"))


def mlx_lm(cmd: Argv, artifact: Artifact, model: LlmModel) -> None:
    cmd.argv += ["--model", artifact.repo, "--host", HOST, "--port", str(PORT)]
    cmd.cannot("tensor_parallel", message(Code.KNOB_ONE_APPLE_GPU, runtime="MLX-LM"))
    cmd.cannot("context", message(Code.KNOB_NO_CONTEXT_FLAG, server="mlx_lm.server"))
    cmd.cannot("kv_cache_dtype", message(Code.KNOB_KV_AT_MODEL_PRECISION, server="mlx_lm.server"))
    cmd.cannot("prefill_tokens", message(Code.KNOB_NO_PREFILL_FLAG, server="mlx_lm.server"))
    cmd.cannot("max_concurrency", message(Code.KNOB_NO_CONCURRENCY_FLAG, server="mlx_lm.server"))
    cmd.cannot("memory_fraction", message(Code.KNOB_UNIFIED_SHARE, runtime="MLX"))
    speculative(cmd, message(Code.KNOB_NEEDS_DRAFT, runtime="MLX-LM", flag="--draft-model"))
    cmd.cannot("cuda_graphs", message(Code.KNOB_NOT_CUDA))


def ollama(cmd: Argv, artifact: Artifact, model: LlmModel) -> None:
    v = cmd.values
    cmd.argv += [f"OLLAMA_HOST={HOST}:{PORT}"]
    cmd.always("context", [f"OLLAMA_CONTEXT_LENGTH={v.context}"])
    cmd.always("max_concurrency", [f"OLLAMA_NUM_PARALLEL={v.max_concurrency}"])
    cmd.argv += ["OLLAMA_FLASH_ATTENTION=1"]
    if v.split == "layer":
        # Ollama keeps a model that fits one card on one card; the estimate spreads it.
        cmd.argv += [f"{OLLAMA_SPREAD}=1"]
    kv_cache_flag(cmd, [f"OLLAMA_KV_CACHE_TYPE={v.kv_cache_dtype}"])
    cmd.cannot("tensor_parallel", message(Code.KNOB_SPLITS_BY_LAYER, runtime="Ollama"))
    cmd.cannot("prefill_tokens", message(Code.KNOB_BATCH_PER_MODEL, runtime="Ollama"))
    cmd.cannot("memory_fraction", message(Code.KNOB_FIXED_MARGIN, runtime="Ollama"))
    speculative(cmd, message(Code.KNOB_NO_SPECULATIVE, runtime="Ollama"))
    cmd.cannot("cuda_graphs", message(Code.KNOB_OWN_CUDA_GRAPHS, runtime="Ollama"))
    cmd.argv += ["ollama", "serve"]


def layer_split_flags(cards: int) -> list[str]:
    """llama.cpp's flags for whole layers spread evenly over `cards` identical cards, as the
    estimate sizes them (its default split follows each card's free memory, which a
    display or another process can make uneven)."""
    return [SPLIT_MODE_FLAG, "layer", TENSOR_SPLIT_FLAG, ",".join(["1"] * max(cards, 1))]


def tensor_parallel_flag(cmd: Argv, flag: str) -> None:
    """Always said when the model is split; one card is the runtime's default."""
    size = cmd.values.tensor_parallel
    if size > 1:
        cmd.always("tensor_parallel", [flag, str(size)])
    else:
        cmd.option("tensor_parallel", [flag, "1"])


def kv_cache_flag(cmd: Argv, flags: list[str]) -> None:
    if cmd.values.kv_cache_dtype != "auto":
        cmd.always("kv_cache_dtype", flags)
    else:
        own = message(Code.KNOB_MODEL_PRECISION)
        cmd.knobs["kv_cache_dtype"] = Knob(KnobState.DEFAULT, None, own)


def speculative(cmd: Argv, flags_or_why: list[str] | Message) -> None:
    """Speculative decoding is only ever on when the profile asks for it."""
    if isinstance(flags_or_why, Message):
        cmd.cannot("speculative_decoding", flags_or_why)
    elif cmd.values.speculative_decoding:
        cmd.always("speculative_decoding", flags_or_why)
    else:
        cmd.knobs["speculative_decoding"] = Knob(KnobState.DEFAULT, flag_text(*flags_or_why))


def graphs_flag(cmd: Argv, flags: list[str]) -> None:
    if not cmd.values.cuda_graphs:
        cmd.always("cuda_graphs", flags)
    else:
        cmd.knobs["cuda_graphs"] = Knob(KnobState.DEFAULT, None, message(Code.KNOB_ON_BY_DEFAULT))


# The start of each command line, before its flags.
PROGRAMS: dict[str, Callable[[Artifact], list[str]]] = {
    "sglang": lambda a: ["python", "-m", "sglang.launch_server", "--model-path", a.repo],
    "vllm": lambda a: ["vllm", "serve", a.repo],
    "llama-cpp": lambda a: ["llama-server"],
    "mlx-lm": lambda a: ["mlx_lm.server"],
    "ollama": lambda a: ["env"],
}
BUILDERS: dict[str, Builder] = {
    "sglang": sglang,
    "vllm": vllm,
    "llama-cpp": llama_cpp,
    "mlx-lm": mlx_lm,
    "ollama": ollama,
}

# What each runtime takes to require a key from clients, for a shared setup.
API_KEY_FLAGS = {
    "sglang": ["--api-key", "$SERVEBOOK_SERVER_KEY"],
    "vllm": ["--api-key", "$SERVEBOOK_SERVER_KEY"],
    "llama-cpp": ["--api-key", "$SERVEBOOK_SERVER_KEY"],
}


def departures(values: AppliedValues, balanced: AppliedValues) -> frozenset[str]:
    """The knobs where a profile departs from balanced: those its command must set."""
    return frozenset(k for k in KNOBS if getattr(values, k) != getattr(balanced, k))


def build_command(
    runtime: Runtime,
    artifact: Artifact,
    model: LlmModel,
    values: AppliedValues,
    explicit: Collection[str],
) -> Command | None:
    """The runtime's command for these values; None for a runtime without a builder."""
    builder = BUILDERS.get(runtime.slug)
    if builder is None:
        return None
    cmd = Argv(values, explicit, PROGRAMS[runtime.slug](artifact))
    builder(cmd, artifact, model)
    followup = None
    if runtime.slug == "ollama":
        followup = ["ollama", "pull", f"hf.co/{artifact.repo}:{artifact.quant.upper()}"]
    knobs = {name: cmd.knobs[name] for name in KNOBS if name in cmd.knobs}
    return Command(runtime.slug, artifact.slug, cmd.argv, followup, knobs)


def shared_setup(runtime: Runtime) -> str:
    """How to require a key when the server must be reachable from other machines."""
    return english(shared_setup_message(runtime))


def shared_setup_message(runtime: Runtime) -> Message:
    """The same advice as a code, worded on the page in the reader's language."""
    flags = API_KEY_FLAGS.get(runtime.slug)
    if flags:
        return message(Code.SHARED_WITH_KEY, flags=" ".join(flags))
    return message(Code.SHARED_NO_ACCESS_CONTROL, runtime=runtime.name)


def with_offload(command: Command, flags: list[str]) -> Command:
    """llama.cpp's command with part of the weights left in system memory: the offload
    flags replace the all-on-GPU `--n-gpu-layers 999`. Ollama places layers itself (it
    keeps on the GPU what fits), so its command is unchanged."""
    if command.runtime != "llama-cpp" or "--n-gpu-layers" not in command.argv or not flags:
        return command
    at = command.argv.index("--n-gpu-layers")
    argv = command.argv[:at] + flags + command.argv[at + 2 :]
    return msgspec.structs.replace(command, argv=argv)
