"""A launch command read as settings: flag -> value, per runtime, and what differs between
two of them. Pure: no database, no I/O.

The command is split the way a POSIX shell splits it (shlex). `--flag=value` and
`--flag value` are the same setting; a runtime's short and long spellings of a flag are the
same setting (the aliases below, from each runtime's own argument list); a boolean flag takes
no value, and vLLM's `--no-x` is `x` switched off. Leading `NAME=value` words are settings
too: Ollama is configured that way. A value that reads as the same number or the same JSON
in both commands (`0.9` and `0.90`) is not a change.

Alias and boolean sources:
- vLLM: vllm/engine/arg_utils.py (`-tp`, `-pp`, `-dp`, `-q`, `-O`); its parser takes
  `--max_model_len` for `--max-model-len` and adds `--no-` to every boolean option.
- SGLang: python/sglang/srt/server_args.py (`--tp`/`--tp-size`, `--dp`/`--dp-size`,
  `--pp-size`, `--ep`/`--ep-size`, `--model`).
- llama.cpp: tools/server/README.md (`-m`, `-c`, `-ngl`, `-fa`, `-np`, `-b`, `-ub`, `-ctk`...).
- MLX-LM: mlx_lm/server.py; Ollama: docs/faq.md (server settings are environment variables).
"""

import json
import re
import shlex
from dataclasses import dataclass, field

Value = str | bool | tuple[str, ...]

VLLM_ALIASES = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-q": "--quantization",
    "-O": "--compilation-config",
}
SGLANG_ALIASES = {
    "--tp": "--tensor-parallel-size",
    "--tp-size": "--tensor-parallel-size",
    "--dp": "--data-parallel-size",
    "--dp-size": "--data-parallel-size",
    "--pp-size": "--pipeline-parallel-size",
    "--ep": "--expert-parallel-size",
    "--ep-size": "--expert-parallel-size",
    "--model": "--model-path",
}
LLAMA_CPP_ALIASES = {
    "-m": "--model",
    "-c": "--ctx-size",
    "-ngl": "--n-gpu-layers",
    "--gpu-layers": "--n-gpu-layers",
    "-fa": "--flash-attn",
    "-np": "--parallel",
    "-b": "--batch-size",
    "-ub": "--ubatch-size",
    "-ctk": "--cache-type-k",
    "-ctv": "--cache-type-v",
    "-t": "--threads",
    "-sm": "--split-mode",
    "-ts": "--tensor-split",
    "-mg": "--main-gpu",
    "-hf": "--hf-repo",
    "-hfr": "--hf-repo",
    "-hff": "--hf-file",
    "-cb": "--cont-batching",
    "-nocb": "--no-cont-batching",
    "-ot": "--override-tensor",
    "-md": "--model-draft",
    "-ngld": "--n-gpu-layers-draft",
    "--gpu-layers-draft": "--n-gpu-layers-draft",
    "-a": "--alias",
    "-dev": "--device",
    "-n": "--n-predict",
    "--predict": "--n-predict",
    "-s": "--seed",
    "-to": "--timeout",
    "-cmoe": "--cpu-moe",
    "-ncmoe": "--n-cpu-moe",
    "-nkvo": "--no-kv-offload",
    "-v": "--verbose",
}
ALIASES: dict[str, dict[str, str]] = {
    "vllm": VLLM_ALIASES,
    "sglang": SGLANG_ALIASES,
    "llama-cpp": LLAMA_CPP_ALIASES,
}

BOOLEANS: dict[str, frozenset[str]] = {
    "vllm": frozenset(
        (
            "--enforce-eager --trust-remote-code --enable-prefix-caching "
            "--enable-chunked-prefill --disable-log-requests --enable-log-requests "
            "--disable-log-stats --enable-auto-tool-choice --enable-expert-parallel "
            "--disable-custom-all-reduce --enable-lora --async-scheduling "
            "--disable-sliding-window --disable-cascade-attn --headless"
        ).split()
    ),
    "sglang": frozenset(
        (
            "--trust-remote-code --disable-custom-all-reduce --disable-cuda-graph "
            "--enable-torch-compile --disable-radix-cache --enable-dp-attention "
            "--enable-mixed-chunk --enable-metrics --log-requests --enable-p2p-check "
            "--skip-server-warmup --disable-overlap-schedule --enable-ep-moe "
            "--enable-deterministic-inference --enable-cache-report "
            "--disable-cuda-graph-padding"
        ).split()
    ),
    "llama-cpp": frozenset(
        (
            "--cont-batching --no-cont-batching --mlock --no-mmap --jinja --swa-full "
            "--no-webui --verbose --cpu-moe --embedding --embeddings --metrics --slots "
            "--no-slots --kv-unified --no-kv-offload --check-tensors --context-shift "
            "--no-context-shift --reranking"
        ).split()
    ),
    "mlx-lm": frozenset("--trust-remote-code --use-default-chat-template --pipeline".split()),
    "ollama": frozenset(),
}
# Launchers whose next word names the program (`vllm serve`, `ollama serve`).
SUBCOMMANDS = frozenset({"vllm", "ollama", "sglang", "mlx_lm"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


@dataclass(frozen=True)
class ParsedCommand:
    """A command's settings: canonical flag (or variable) -> value, as written where shown."""

    program: str = ""
    flags: dict[str, Value] = field(default_factory=dict)
    spellings: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # the command could not be split: compared as one text
    text: str = ""


@dataclass(frozen=True)
class FlagChange:
    """One setting of the command that differs; None means the flag is absent."""

    name: str
    key: str  # the canonical name both spellings share
    a: Value | None
    b: Value | None


def canonical(flag: str, runtime: str | None) -> str:
    aliases = ALIASES.get(runtime or "", {})
    if flag in aliases:
        return aliases[flag]
    if runtime == "vllm" and flag.startswith("--"):
        return "--" + flag[2:].replace("_", "-")  # vLLM reads either
    return flag


def is_flag(token: str) -> bool:
    return token.startswith("-") and token != "-" and not NUMBER.match(token)


def split_words(command: str) -> list[str]:
    # A backslash at a line's end continues the command on the next line.
    return shlex.split(command.replace("\\\r\n", " ").replace("\\\n", " "))


def parse_command(command: str, runtime: str | None = None) -> ParsedCommand:
    """Flag -> value for this runtime; a command shlex cannot split keeps only its text."""
    try:
        words = split_words(command)
    except ValueError as error:
        return ParsedCommand(error=f"the command could not be read: {error}", text=command)
    flags: dict[str, Value] = {}
    spellings: dict[str, str] = {}

    def put(key: str, spelling: str, value: Value) -> None:
        spellings.setdefault(key, spelling)
        previous = flags.get(key)
        if isinstance(previous, str | tuple) and isinstance(value, str):
            # A repeated flag (`--override-tensor a --override-tensor b`) keeps every value.
            flags[key] = (*(previous if isinstance(previous, tuple) else (previous,)), value)
        else:
            flags[key] = value

    index = 0
    if words and words[0] == "env":
        index = 1
    while index < len(words) and ASSIGNMENT.match(words[index]):
        name, _, value = words[index].partition("=")
        put(name, name, value)
        index += 1
    program, index = read_program(words, index)
    booleans = BOOLEANS.get(runtime or "", frozenset())
    positionals = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not is_flag(word):
            # `vllm serve MODEL` and `vllm serve --model MODEL` say the same.
            first = runtime == "vllm" and positionals == 0
            key = "--model" if first else f"argument {positionals + 1}"
            positionals += 1
            put(key, key, word)
            continue
        flag, has_value, value = word.partition("=")
        key = canonical(flag, runtime)
        if runtime == "vllm" and key.startswith("--no-") and not has_value:
            put("--" + key[5:], flag, False)
        elif has_value:
            put(key, flag, value)
        elif key in booleans or index >= len(words) or is_flag(words[index]):
            put(key, flag, True)
        else:
            put(key, flag, words[index])
            index += 1
    return ParsedCommand(program, flags, spellings, None, command)


def read_program(words: list[str], index: int) -> tuple[str, int]:
    """The words that name the program: `python -m sglang.launch_server`, `vllm serve`."""
    if index >= len(words):
        return "", index
    first = words[index]
    name = first.rsplit("/", 1)[-1]
    if re.fullmatch(r"python[\d.]*", name) and words[index + 1 : index + 2] == ["-m"]:
        end = min(index + 3, len(words))
        return " ".join(words[index:end]), end
    if name in SUBCOMMANDS and index + 1 < len(words) and not is_flag(words[index + 1]):
        return " ".join(words[index : index + 2]), index + 2
    return first, index + 1


def same_value(a: Value | None, b: Value | None) -> bool:
    """Equal as written, or as numbers, or as JSON."""
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        if NUMBER.match(a) and NUMBER.match(b):
            return float(a) == float(b)
        try:
            return json.loads(a) == json.loads(b)
        except ValueError:
            return False
    return False


def diff_commands(a: ParsedCommand, b: ParsedCommand) -> list[FlagChange]:
    """Every setting that differs, in the order the commands list them (b's new ones last)."""
    if a.error or b.error:
        return [] if a.text == b.text else [FlagChange("command", "command", a.text, b.text)]
    changes: list[FlagChange] = []
    if a.program != b.program:
        changes.append(FlagChange("program", "program", a.program or None, b.program or None))
    for key in [*a.flags, *(k for k in b.flags if k not in a.flags)]:
        left, right = a.flags.get(key), b.flags.get(key)
        if not same_value(left, right):
            name = b.spellings.get(key) or a.spellings.get(key) or key
            changes.append(FlagChange(name, key, left, right))
    return changes


# Which command settings carry each applied value, per runtime (as app.resolve.commands
# writes them): a knob and the flags that set it are one setting, not two.
KNOB_FLAGS: dict[str, dict[str, tuple[str, ...]]] = {
    "vllm": {
        "tensor_parallel": ("--tensor-parallel-size",),
        "context": ("--max-model-len",),
        "kv_cache_dtype": ("--kv-cache-dtype",),
        "prefill_tokens": ("--max-num-batched-tokens",),
        "max_concurrency": ("--max-num-seqs",),
        "memory_fraction": ("--gpu-memory-utilization",),
        "speculative_decoding": ("--speculative-config",),
        "cuda_graphs": ("--enforce-eager",),
    },
    "sglang": {
        "tensor_parallel": ("--tensor-parallel-size",),
        "context": ("--context-length",),
        "kv_cache_dtype": ("--kv-cache-dtype",),
        "prefill_tokens": ("--chunked-prefill-size",),
        "max_concurrency": ("--max-running-requests",),
        "memory_fraction": ("--mem-fraction-static",),
        "speculative_decoding": (
            "--speculative-algorithm",
            "--speculative-num-steps",
            "--speculative-eagle-topk",
            "--speculative-num-draft-tokens",
        ),
        "cuda_graphs": ("--disable-cuda-graph",),
    },
    "llama-cpp": {
        # llama-server's --ctx-size is shared by its slots: context x parallel.
        "context": ("--ctx-size",),
        "max_concurrency": ("--parallel", "--ctx-size"),
        "kv_cache_dtype": ("--cache-type-k", "--cache-type-v"),
        "prefill_tokens": ("--ubatch-size",),
    },
    "ollama": {
        "context": ("OLLAMA_CONTEXT_LENGTH",),
        "max_concurrency": ("OLLAMA_NUM_PARALLEL",),
        "kv_cache_dtype": ("OLLAMA_KV_CACHE_TYPE",),
    },
    "mlx-lm": {},
}


def show_value(value: Value | None) -> str | None:
    """A value as a person reads it: `set` for a bare flag, each repeat on its own."""
    if value is None:
        return None
    if value is True:
        return "set"
    if value is False:
        return "switched off"
    if isinstance(value, tuple):
        return " · ".join(value)
    return value
