"""Launch commands per runtime, built as argv lists with each runtime's real flags.

Flags are only added where the applied value differs from the runtime's own default,
so a balanced recipe reads like the official instructions. Every server binds to
127.0.0.1; sharing it is a separate, explicit choice (see `shared_flags`).
"""

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from app.models import Artifact, Runtime
from app.recipes.applied import AppliedValues

HOST = "127.0.0.1"
PORT = 8000


@dataclass(frozen=True)
class Command:
    runtime: str
    artifact: str
    argv: list[str]
    followup: list[str] | None = None  # e.g. pulling the model into a daemon

    @property
    def shell(self) -> str:
        return shlex.join(self.argv)

    @property
    def followup_shell(self) -> str | None:
        return shlex.join(self.followup) if self.followup else None

    def as_json(self) -> dict:
        return {
            "runtime": self.runtime,
            "artifact": self.artifact,
            "argv": self.argv,
            "shell": self.shell,
            "followup": self.followup_shell,
        }


def sglang(artifact: Artifact, values: AppliedValues, defaults: AppliedValues) -> list[str]:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", artifact.repo]
    if values.tensor_parallel > 1:
        argv += ["--tp", str(values.tensor_parallel)]
    argv += ["--host", HOST, "--port", str(PORT), "--context-length", str(values.context)]
    if values.memory_fraction is not None and values.memory_fraction != defaults.memory_fraction:
        argv += ["--mem-fraction-static", f"{values.memory_fraction:.2f}"]
    if values.kv_cache_dtype != "auto":
        argv += ["--kv-cache-dtype", values.kv_cache_dtype]
    if values.prefill_tokens != defaults.prefill_tokens:
        argv += ["--chunked-prefill-size", str(values.prefill_tokens)]
    if values.max_concurrency != defaults.max_concurrency:
        argv += ["--max-running-requests", str(values.max_concurrency)]
    if not values.cuda_graphs:
        argv += ["--disable-cuda-graph"]
    return argv


def vllm(artifact: Artifact, values: AppliedValues, defaults: AppliedValues) -> list[str]:
    argv = ["vllm", "serve", artifact.repo]
    if values.tensor_parallel > 1:
        argv += ["--tensor-parallel-size", str(values.tensor_parallel)]
    argv += ["--host", HOST, "--port", str(PORT), "--max-model-len", str(values.context)]
    argv += ["--gpu-memory-utilization", f"{values.memory_fraction or 0.90:.2f}"]
    if values.kv_cache_dtype != "auto":
        argv += ["--kv-cache-dtype", values.kv_cache_dtype]
    if values.prefill_tokens != defaults.prefill_tokens:
        argv += ["--max-num-batched-tokens", str(values.prefill_tokens)]
    if values.max_concurrency != defaults.max_concurrency:
        argv += ["--max-num-seqs", str(values.max_concurrency)]
    if values.speculative_decoding:
        argv += [
            "--speculative-config",
            '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}',
        ]
    if not values.cuda_graphs:
        argv += ["--enforce-eager"]
    return argv


def llama_cpp(artifact: Artifact, values: AppliedValues, defaults: AppliedValues) -> list[str]:
    source = f"{artifact.repo}:{artifact.quant.upper()}"
    # llama-server shares --ctx-size between its parallel slots.
    total_context = values.context * values.max_concurrency
    argv = [
        "llama-server",
        "-hf",
        source,
        "--host",
        HOST,
        "--port",
        str(PORT),
        "--ctx-size",
        str(total_context),
        "--parallel",
        str(values.max_concurrency),
        "--n-gpu-layers",
        "999",
        "--flash-attn",
        "on",
    ]
    if values.split == "layer":
        argv += ["--split-mode", "layer"]
    if values.kv_cache_dtype != "auto":
        argv += ["--cache-type-k", values.kv_cache_dtype, "--cache-type-v", values.kv_cache_dtype]
    if values.prefill_tokens != defaults.prefill_tokens:
        argv += ["--ubatch-size", str(values.prefill_tokens)]
    return argv


def mlx_lm(artifact: Artifact, values: AppliedValues, defaults: AppliedValues) -> list[str]:
    return ["mlx_lm.server", "--model", artifact.repo, "--host", HOST, "--port", str(PORT)]


def ollama(artifact: Artifact, values: AppliedValues, defaults: AppliedValues) -> list[str]:
    env = [
        f"OLLAMA_HOST={HOST}:{PORT}",
        f"OLLAMA_CONTEXT_LENGTH={values.context}",
        f"OLLAMA_NUM_PARALLEL={values.max_concurrency}",
        "OLLAMA_FLASH_ATTENTION=1",
    ]
    if values.kv_cache_dtype != "auto":
        env.append(f"OLLAMA_KV_CACHE_TYPE={values.kv_cache_dtype}")
    return ["env", *env, "ollama", "serve"]


BUILDERS: dict[str, Callable[[Artifact, AppliedValues, AppliedValues], list[str]]] = {
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


def build_command(
    runtime: Runtime, artifact: Artifact, values: AppliedValues, defaults: AppliedValues
) -> Command | None:
    builder = BUILDERS.get(runtime.slug)
    if builder is None:
        return None
    followup = None
    if runtime.slug == "ollama":
        followup = ["ollama", "pull", f"hf.co/{artifact.repo}:{artifact.quant.upper()}"]
    return Command(runtime.slug, artifact.slug, builder(artifact, values, defaults), followup)


def shared_setup(runtime: Runtime) -> str:
    """How to require a key when the server must be reachable from other machines."""
    flags = API_KEY_FLAGS.get(runtime.slug)
    if flags:
        return (
            f"Add {' '.join(flags)} and bind to a private interface behind a firewall; "
            "clients then send 'Authorization: Bearer <key>'."
        )
    return (
        f"{runtime.name} has no access control of its own: keep it on 127.0.0.1 and put "
        "an authenticating reverse proxy in front of it."
    )
