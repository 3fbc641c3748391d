"""The tiny random-weight Llama of ``tiny_llama.py``, reshaped for vLLM's CPU kernels.

Usage: python tiny_llama_vllm.py OUT_DIR

vLLM's CPU attention refuses head_dim 16, so the model has hidden 128, 2 heads, 1 KV head
(head_dim 64) and 2 layers, about 350k parameters; the tokenizer and chat template are
``tiny_llama.py``'s own. Nothing is downloaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tiny_llama import build


def build_for_vllm(out_dir: Path) -> None:
    build(
        out_dir,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
    )


if __name__ == "__main__":
    build_for_vllm(Path(sys.argv[1]))
