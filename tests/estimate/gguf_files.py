"""Small real GGUF files written with the `gguf` package, for the header reader's tests."""

from pathlib import Path

import numpy as np


def write_tiny_llama_gguf(
    path: Path, layers: int = 2, hidden: int = 64, heads: int = 4, kv_heads: int = 2
) -> dict[str, int]:
    """A llama-architecture GGUF with F16 and Q8_0 tensors; returns what was written."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-llama")
    writer.add_block_count(layers)
    writer.add_context_length(2048)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(hidden * 2)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    vocab = 128
    head_dim = hidden // heads
    tensors = {"token_embd.weight": (vocab, hidden), "output.weight": (vocab, hidden)}
    for i in range(layers):
        tensors |= {
            f"blk.{i}.attn_q.weight": (hidden, hidden),
            f"blk.{i}.attn_k.weight": (kv_heads * head_dim, hidden),
            f"blk.{i}.attn_v.weight": (kv_heads * head_dim, hidden),
            f"blk.{i}.attn_output.weight": (hidden, hidden),
            f"blk.{i}.ffn_up.weight": (hidden * 2, hidden),
        }
    total_bytes, total_elements = 0, 0
    for name, shape in tensors.items():
        data = np.zeros(shape, dtype=np.float32)
        if name.startswith("token_embd"):
            array = data.astype(np.float16)
            writer.add_tensor(name, array)
            total_bytes += array.nbytes
        else:
            packed = gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0)
            writer.add_tensor(name, packed, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            total_bytes += packed.nbytes
        total_elements += data.size
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return {"bytes": total_bytes, "elements": total_elements, "vocab": vocab}
