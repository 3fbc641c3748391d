"""Resolved figures against a small calculation of their own, from the catalog rows alone.

For dense models with plain grouped-query attention, the weights and the KV cache of every
recipe that serves on the GPU follow from a few published numbers: the weights are the file
(or parameters x bits / 8), split over the tensor-parallel cards, or over the cards of a
layer split (llama.cpp, Ollama) with each card caching its share of the layers; each token
caches a K and a V head per KV head and layer, the KV heads split over tensor-parallel
cards. Whatever the resolution does to get there quickly, these figures must come out the
same.
"""

import math

import pytest
from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.estimate import Verdict
from app.resolve import load_model_inputs
from app.resolve.fit_table import ResolvedModel

DENSE_GQA = ("llama-3.1-70b-instruct", "qwen3-32b", "llama-3.1-8b-instruct")
# Bytes per cached value, as the runtimes' KV cache dtypes are documented.
VALUE_BYTES = {"auto": 2, "bf16": 2, "fp16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}
# Tokens per KV page at the runtimes' defaults (vLLM --block-size 16, SGLang --page-size 1):
# a request holds its prompt and output rounded up to a page; other runtimes give every
# slot its whole context.
PAGE_TOKENS = {"vllm": 16, "sglang": 1}


@pytest.mark.parametrize("slug", DENSE_GQA)
def test_weights_and_kv_cache_follow_from_the_catalog_rows(session: Session, slug: str) -> None:
    inputs = load_model_inputs(session, slug)
    model = inputs.model
    assert model.attention == "gqa" and not model.is_moe and model.sliding_window is None
    resolved = ResolvedModel(inputs, list(CatalogRepository(session).list_hardware()))
    checked = 0
    for row in resolved.rows:
        for recipe in row.recipes:
            if recipe.applied is None or recipe.verdict == Verdict.FITS_WITH_OFFLOAD:
                continue  # nothing served on the GPU alone
            applied, artifact = recipe.applied, recipe.route.artifact
            if applied.kv_cache_dtype not in VALUE_BYTES:
                continue
            tp = applied.tensor_parallel
            cards = tp * applied.layer_split  # one of the two is 1
            assert applied.layer_split == (
                row.hardware.gpu_count if applied.split == "layer" else 1
            )
            file_bytes = (
                artifact.size_bytes or model.params_total_b * 1e9 * artifact.bits_per_weight / 8
            )
            kv_heads_per_card = math.ceil(model.num_kv_heads / tp)
            layers_per_card = math.ceil(model.num_layers / applied.layer_split)
            per_token = 2 * kv_heads_per_card * model.head_dim * layers_per_card
            per_token *= VALUE_BYTES[applied.kv_cache_dtype]
            page = PAGE_TOKENS.get(recipe.route.runtime.slug)
            held = applied.context
            if page is not None:
                asked = recipe.shape.prompt_tokens + recipe.shape.output_tokens
                held = min(math.ceil(asked / page) * page, applied.context)
            tokens = held * applied.max_concurrency
            memory = recipe.estimate.memory
            where = (row.hardware.slug, recipe.profile.slug)
            assert recipe.estimate.weights_gb.value == pytest.approx(file_bytes / 1e9), where
            assert memory.weights.value == pytest.approx(file_bytes / 1e9 / cards), where
            assert recipe.estimate.kv_bytes_per_token_per_gpu == per_token, where
            assert memory.kv_cache.value == pytest.approx(per_token * tokens / 1e9), where
            assert memory.required <= memory.usable.value, where  # it is served: it fits
            checked += 1
    assert checked >= 6  # GPU recipes of the model were checked, not skipped
