"""Build a tiny random-weight Llama and its tokenizer in a folder, for a real local server.

Usage: python tiny_llama.py OUT_DIR

The tokenizer is a byte-level BPE trained on the spot on generated sentences; the model
has about 100k parameters. Nothing is downloaded. Its answers are noise: it exercises a
server's plumbing (streaming, usage, batching), never answer quality.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

WORDS = (
    "the a of and to in is was for on are with as his they be at one have this from or had "
    "by word but what some we can out other were all there when up use your how said an each "
    "she which do their time if will way about many then them write would like so these her "
    "long make thing see him two has look more day could go come did number sound no most "
    "people my over know water than call first who may down side been now find sea light "
    "keeper story secret passkey remember answer text above tell"
).split()

CHAT_TEMPLATE = (
    "{% for message in messages %}<s>{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant: {% endif %}"
)


def training_corpus(rng: random.Random) -> list[str]:
    sentences = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."
        for _ in range(800)
    ]
    sentences += [f"The secret passkey is {rng.randint(10**6, 10**7 - 1)}." for _ in range(50)]
    return sentences


# hidden 64 with 4 heads gives head_dim 16, enough for transformers serve.
DEFAULT_SHAPE = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
}


def build(out_dir: Path, **shape: int) -> None:
    """Train the tokenizer and save a random-weight model of DEFAULT_SHAPE, or `shape`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    rng = random.Random(0)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(training_corpus(rng), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    fast.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(fast),
        **{**DEFAULT_SHAPE, **shape},
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out_dir)
    fast.save_pretrained(out_dir)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
