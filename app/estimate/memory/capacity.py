"""How many tokens of KV cache one request holds, as each runtime counts them.

vLLM and SGLang keep a paged KV pool: what the memory setting leaves after the weights and
the workspace, handed out in blocks as a request's tokens arrive. A request holds its
prompt plus its output, rounded up to the block, never the largest context the server
allows; prefix caching would share prompt blocks between requests, and is not counted
unless asked. llama.cpp, Ollama and MLX give each parallel slot its whole context.
"""

from app.estimate.inputs.specs import family_of

# Tokens per KV block by runtime family, at the runtimes' defaults:
# - vLLM `--block-size` 16 on CUDA and ROCm
#   (https://docs.vllm.ai/en/stable/configuration/engine_args.html, vLLM project);
# - SGLang `--page-size` 1 (https://docs.sglang.ai/advanced_features/server_arguments.html,
#   SGLang project).
PAGED_BLOCK_TOKENS = {"vllm": 16, "sglang": 1}


def block_tokens(runtime: str) -> int | None:
    """The runtime's KV block in tokens; None where each slot holds its whole context."""
    return PAGED_BLOCK_TOKENS.get(family_of(runtime))


def held_tokens(runtime: str, prompt: int, output: int, context: int) -> int:
    """Tokens of KV cache one request of `prompt` + `output` tokens holds on this runtime:
    the request rounded up to the runtime's block (at most the context), or the whole
    context where the runtime gives every slot its own."""
    block = block_tokens(runtime)
    if block is None:
        return context
    tokens = min(prompt + output, context)
    return min(-(-tokens // block) * block, context)
