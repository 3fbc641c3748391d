"""Record builders and catalog slugs shared by the record tests."""

import copy
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Hardware

GLM = "glm-5.3-flash"
GLM_FP8 = "glm-5.3-flash-fp8"
GLM_MLX = "glm-5.3-flash-mlx-4bit"
GLM_GGUF = "glm-5.3-flash-q4-k-m"
MAC_512 = "mac-studio-m5-ultra-512gb"

VALID: dict[str, Any] = {
    "model": GLM,
    "artifact": GLM_FP8,
    "runtime": "sglang",
    "runtime_version": "0.5.10",
    "hardware": "8x-h200",  # replaced by the seeded slug, see `h200`
    "gpu_count": 8,
    "profile": "balanced",
    "command": "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8",
    "applied_values": {"tensor_parallel": 8, "context": 16384},
    "environment": {"driver": "580.95.05", "os": "Ubuntu 24.04", "runtime_build": "abc1234"},
    "outcome": "ok",
    "notes": "three runs, median kept",
    "measurements": [
        {
            "context_length": 4096,
            "concurrency": 1,
            "repetitions": 3,
            "ttft_ms": 250.0,
            "decode_tokens_per_s": 95.0,
            "itl_ms": 10.5,
            "e2e_latency_ms": 1600.0,
            "peak_memory_gb_per_gpu": 120.0,
        },
        {
            "context_length": 16384,
            "concurrency": 1,
            "repetitions": 3,
            "ttft_ms": 900.0,
            "decode_tokens_per_s": 88.0,
            "peak_memory_gb_per_gpu": 124.0,
        },
    ],
}


def seeded_slug(session: Session, prefix: str) -> str:
    """The seeded hardware slug for a class of machine, e.g. '8x-h200' -> '8x-h200-141gb'."""
    slugs = session.scalars(select(Hardware.slug).order_by(Hardware.slug)).all()
    return next(s for s in slugs if s == prefix or s.startswith(prefix + "-"))


@pytest.fixture
def h200(session: Session) -> str:
    return seeded_slug(session, "8x-h200")


@pytest.fixture
def valid(h200: str) -> dict[str, Any]:
    """A fresh copy of a valid record for 8x H200 (callers may change it freely)."""
    body = copy.deepcopy(VALID)
    body["hardware"] = h200
    return body


def post_record(client: TestClient, body: Any, key: str | None = None, **headers: str):
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post("/api/records", json=body, headers=headers)


def accept(client: TestClient, record_id: int, reason: str = "reproduced") -> dict:
    response = client.post(
        f"/api/records/{record_id}/review", json={"action": "accept", "reason": reason}
    )
    assert response.status_code == 200, response.text
    return response.json()
