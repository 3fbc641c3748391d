"""How the runtimes whose servers report their own version are named (by catalog slug)."""

REPORTING_RUNTIME_NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "llama-cpp": "llama.cpp",
    "ollama": "Ollama",
}
