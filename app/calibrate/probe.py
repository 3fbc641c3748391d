"""The calibration probe: a short run against a server that times its decode steps at a few
batch sizes and KV depths, and its first token over a sweep of prompt lengths.

Every request goes through the benchmark client's transport (`app/bench`): the same host
allow-list, the same bounded streams and timeouts, the same arrival stamps. A decode step
at batch B is read from a round of B requests sent together twice, asking for few tokens
and for many: the extra time to the answers' ends per extra token (`decode.py`), which a
server that writes tokens in bursts does not move. Each point's median over five rounds is
kept, the rounds taken over all points in turn so that a drifting server drifts under
every point alike; how far a point's requests lie apart is kept beside it, and tells noise.
A prompt's first-token time is the median of a few requests sent alone. The probe keeps to
a time budget (ten minutes by default) and fits on what it measured within it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import median
from typing import Any

import httpx

from app.bench.prompts import PromptSizer, compose, filler_sentences, user_messages
from app.bench.result import RequestSample
from app.bench.stages.long_length import models_url
from app.bench.stream.request import stream_chat
from app.bench.transport.endpoint import (
    ChatEndpoint,
    StreamClients,
    chat_completions_url,
    make_http_client,
)
from app.bench.transport.hosts import check_url_allowed
from app.calibrate.decode import SHORT_OUTPUT_TOKENS, PointRounds
from app.estimate.calibration import DecodePoint, PrefillPoint

BATCHES = (1, 2, 4, 8, 16)
DEPTHS = (128, 1024, 4096)  # KV tokens per request, cut to what the server's context allows
PROMPTS = (128, 512, 1024, 2048, 4096)
OUTPUT_TOKENS = 48  # tokens each decode request is asked for
# Rounds per decode point, their median kept: a server's step time moves from one round to
# the next (a busy CPU server's by half and more), and two slow rounds must not bend the fit.
DECODE_ROUNDS = 5
PREFILL_REPEATS = 2
BUDGET_S = 600.0
CONTEXT_MARGIN = 64  # tokens left between a request's prompt and output and the context
SIZING_WORDS = 200
# Runtimes by the `owned_by` a server gives its models in /v1/models.
OWNERS = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama-cpp", "ollama": "ollama"}
# Where runtimes report their version: vLLM /version, SGLang /get_server_info.
VERSION_PATHS = ("/version", "/get_server_info")

Progress = Callable[[str, int, int], None]
# Called with the runtime the server names (its catalog slug, or None) before any timed
# request: raises to refuse a runtime that cannot run where the probe would time it.
RuntimeCheck = Callable[[str | None], None]


class ProbeError(Exception):
    """The probe could not run: the reason, in English, and its kind for the caller."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # unreachable | models | failed_requests


@dataclass
class ProbePlan:
    base_url: str
    served_model: str | None = None
    api_key: str | None = None
    allowed_hosts: list[str] = field(default_factory=list)
    batches: tuple[int, ...] = BATCHES
    depths: tuple[int, ...] = DEPTHS
    prompts: tuple[int, ...] = PROMPTS
    output_tokens: int = OUTPUT_TOKENS
    budget_s: float = BUDGET_S
    connect_timeout_s: float = 10.0
    request_timeout_s: float = 120.0


@dataclass
class ProbeResult:
    served_model: str
    owned_by: str | None
    runtime_version: str | None
    context: int | None
    decode: list[DecodePoint]
    prefill: list[PrefillPoint]
    requests: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def runtime_hint(self) -> str | None:
        """The runtime's catalog slug, as the server names its owner."""
        return OWNERS.get((self.owned_by or "").lower().replace(".", "").replace("-", ""))

    def to_json(self) -> dict[str, Any]:
        """What a worker sends back: the points and what the server said of itself."""
        return {
            "served_model": self.served_model,
            "owned_by": self.owned_by,
            "runtime_version": self.runtime_version,
            "context": self.context,
            **self.points_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeResult:
        """The inverse of `to_json` (raises ValueError, KeyError or TypeError on bad data)."""
        decode = [_decode_point(point) for point in data["decode"]]
        prefill = [PrefillPoint(int(p), float(t)) for p, t in data["prefill"]]
        times = [p.step_s for p in decode] + [p.ttft_s for p in prefill]
        counts = [p.batch for p in decode] + [p.prompt for p in prefill]
        spreads = [p.spread for p in decode]
        if not all(0 < t < 3600 for t in times) or not all(0 < c < 10**8 for c in counts):
            raise ValueError("probe points must be positive times and counts")
        if not all(1 <= s < 10**6 for s in spreads):
            raise ValueError("a decode point's spread is a ratio of its steps, at least 1")
        return cls(
            served_model=str(data["served_model"]),
            owned_by=data.get("owned_by"),
            runtime_version=data.get("runtime_version"),
            context=data.get("context"),
            decode=decode,
            prefill=prefill,
            requests=int(data.get("requests", 0)),
            failed=int(data.get("failed", 0)),
            seconds=float(data.get("seconds", 0.0)),
        )

    def points_json(self) -> dict[str, Any]:
        return {
            "decode": [
                [p.batch, p.depth, round(p.step_s, 6), round(p.spread, 3)] for p in self.decode
            ],
            "prefill": [[p.prompt, round(p.ttft_s, 6)] for p in self.prefill],
            "requests": self.requests,
            "failed": self.failed,
            "seconds": round(self.seconds, 1),
        }


def run_probe_sync(
    plan: ProbePlan, progress: Progress | None = None, check: RuntimeCheck | None = None
) -> ProbeResult:
    return asyncio.run(run_probe(plan, progress, check))


async def run_probe(
    plan: ProbePlan, progress: Progress | None = None, check: RuntimeCheck | None = None
) -> ProbeResult:
    """Raises HostNotAllowedError before any request, ProbeError when nothing can be timed
    (or the server does not serve the model asked for), and what ``check`` raises before
    any timed request."""
    check_url_allowed(plan.base_url, plan.allowed_hosts)
    probe = _Probe(plan, progress or (lambda *_: None))
    probe.check = check
    try:
        return await probe.run()
    finally:
        await probe.close()


class _Probe:
    def __init__(self, plan: ProbePlan, progress: Progress) -> None:
        self.plan = plan
        self.progress = progress
        self.started = time.monotonic()
        self.http = self._client()
        self.streams = StreamClients(self._client)
        self.sizer = PromptSizer()
        self.requests = self.failed = 0
        self.errors: list[str] = []
        self.seed = 0
        self.check: RuntimeCheck | None = None
        self.listed: list[str] = []

    def _client(self) -> httpx.AsyncClient:
        return make_http_client(
            api_key=self.plan.api_key,
            connect_timeout_s=self.plan.connect_timeout_s,
            request_timeout_s=self.plan.request_timeout_s,
        )

    async def close(self) -> None:
        await self.streams.aclose()
        await self.http.aclose()

    def left_s(self) -> float:
        return self.plan.budget_s - (time.monotonic() - self.started)

    async def run(self) -> ProbeResult:
        served, owned_by, context = await self._served_model()
        if self.check is not None:
            self.check(OWNERS.get((owned_by or "").lower().replace(".", "").replace("-", "")))
        version = await self._version()
        extra = {"ignore_eos": True} if owned_by in ("vllm", "sglang") else {}
        self.endpoint = ChatEndpoint(
            http=self.http,
            url=chat_completions_url(self.plan.base_url),
            model=served,
            request_timeout_s=self.plan.request_timeout_s,
            extra_body=extra,
            secret=self.plan.api_key,
        )
        await self._refuse_an_unserved_model(served)
        await self._size_prompts()
        room = (context or 8192) - self.plan.output_tokens - CONTEXT_MARGIN
        depths = sorted({min(d, room) for d in self.plan.depths if room > 0})
        prompts = sorted({min(p, room) for p in self.plan.prompts if room > 0})
        total = len(depths) * len(self.plan.batches) * DECODE_ROUNDS + len(prompts)
        decode = await self._decode(depths, total)
        prefill = await self._prefill(prompts, total - len(prompts), total)
        if not decode and self.failed:
            raise ProbeError("failed_requests", "; ".join(self.errors[:3]))
        return ProbeResult(
            served_model=served,
            owned_by=owned_by,
            runtime_version=version,
            context=context,
            decode=decode,
            prefill=prefill,
            requests=self.requests,
            failed=self.failed,
            errors=self.errors[:5],
            seconds=time.monotonic() - self.started,
        )

    async def _served_model(self) -> tuple[str, str | None, int | None]:
        """The model to probe, who the server says owns it, and its context length."""
        url = models_url(self.plan.base_url)
        try:
            response = await self.http.get(url, timeout=self.plan.connect_timeout_s + 10)
        except httpx.HTTPError as error:
            raise ProbeError("unreachable", f"could not reach {url}: {error}") from error
        try:
            entries = response.json().get("data", []) if response.status_code == 200 else []
        except (ValueError, AttributeError):
            entries = []
        entries = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
        names = [e["id"] for e in entries]
        wanted = self.plan.served_model
        if wanted is None and len(entries) != 1:
            listed = ", ".join(names) or "none"
            raise ProbeError(
                "models", f"the server lists {len(entries)} models ({listed}): name one"
            )
        self.listed = names
        chosen = next((e for e in entries if e["id"] == (wanted or names[0])), {"id": wanted})
        context = chosen.get("max_model_len")
        context = context if isinstance(context, int) and context > 0 else None
        owner = chosen.get("owned_by")
        return str(chosen["id"]), owner if isinstance(owner, str) else None, context

    async def _refuse_an_unserved_model(self, served: str) -> None:
        """A model the server does not list is asked once; if that fails, the probe stops
        there, naming the models it lists, rather than timing every step's 404. (A server
        may serve names it does not list: aliases, routers.)"""
        if not self.listed or served in self.listed:
            return
        sample = await stream_chat(self.endpoint, [{"role": "user", "content": "Hello"}], 1)
        if sample.ok:
            return
        said = sample.error.message if sample.error else "no answer"
        raise ProbeError(
            "models",
            f"the server does not serve {served!r} ({said}); it serves "
            f"{', '.join(self.listed)}: give one of them as --served-model",
        )

    async def _version(self) -> str | None:
        root = self.plan.base_url.rstrip("/").removesuffix("/v1")
        for path in VERSION_PATHS:
            try:
                response = await self.http.get(root + path, timeout=10.0)
                found = response.json().get("version") if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError, AttributeError):
                continue
            if isinstance(found, str) and found:
                return found[:100]
        return None

    async def _ask(self, index: int, words: int, max_tokens: int) -> RequestSample:
        self.seed += 1
        text = compose(filler_sentences(self.seed, words))
        endpoint = self.endpoint.using(self.streams.get(index))
        timeout = max(5.0, min(self.plan.request_timeout_s, self.left_s()))
        endpoint.request_timeout_s = timeout
        sample = await stream_chat(endpoint, user_messages(text), max_tokens)
        self.requests += 1
        if not sample.ok:
            self.failed += 1
            if sample.error is not None:
                self.errors.append(sample.error.message)
        return sample

    async def _size_prompts(self) -> None:
        """Two requests that tell how many tokens a word of filler is (one also warms up)."""
        for words in (0, SIZING_WORDS):
            sample = await self._ask(0, words, 4)
            if sample.ok:
                self.sizer.observe(words, sample.prompt_tokens)

    async def _decode(self, depths: list[int], total: int) -> list[DecodePoint]:
        """Round after round over every point, not every round of one point and then the
        next: a server whose speed drifts (a busy machine) then drifts under all points
        alike, instead of under some batch sizes and not others."""
        short = min(SHORT_OUTPUT_TOKENS, self.plan.output_tokens // 2)
        order = [(depth, batch) for depth in depths for batch in self.plan.batches]
        rounds = {point: PointRounds() for point in order}
        done = 0
        for _ in range(DECODE_ROUNDS):
            for depth, batch in order:
                self.progress("decode", done, total)
                done += 1
                if self.left_s() < 5:
                    break
                words = self.sizer.words_for(depth)
                few = await self._round(batch, words, short)
                many = await self._round(batch, words, self.plan.output_tokens)
                prompt = _prompt_tokens(many, self.sizer.expected_tokens(words))
                rounds[depth, batch].add(many, few, prompt)
        middle = (short + self.plan.output_tokens) // 2  # midway through the timed tokens
        return [
            DecodePoint(batch, round(median(found.prompts)) + middle, found.step_s, found.spread)
            for (_, batch), found in rounds.items()
            if found.steps
        ]

    async def _round(self, batch: int, words: int, max_tokens: int) -> list[RequestSample]:
        """`batch` requests sent together, each with a prompt of its own (no cache hits)."""
        return list(await asyncio.gather(*(self._ask(i, words, max_tokens) for i in range(batch))))

    async def _prefill(self, prompts: list[int], done: int, total: int) -> list[PrefillPoint]:
        points: list[PrefillPoint] = []
        for target in prompts:
            self.progress("prefill", done, total)
            done += 1
            if self.left_s() < 5:
                break
            words = self.sizer.words_for(target)
            samples = [await self._ask(0, words, 2) for _ in range(PREFILL_REPEATS)]
            ttfts = [s.ttft_ms for s in samples if s.ok and s.ttft_ms]
            if ttfts:
                prompt = _prompt_tokens(samples, self.sizer.expected_tokens(words))
                points.append(PrefillPoint(prompt, median(ttfts) / 1e3))
        self.progress("prefill", total, total)
        return points


def _decode_point(values: Any) -> DecodePoint:
    """A decode point as sent: [batch, depth, step_s, spread] (older probes: no spread)."""
    if not isinstance(values, list) or len(values) not in (3, 4):
        raise ValueError("a decode point is [batch, depth, step_s, spread]")
    spread = float(values[3]) if len(values) == 4 else 1.0
    return DecodePoint(int(values[0]), int(values[1]), float(values[2]), spread)


def _prompt_tokens(samples: list[RequestSample], expected: int) -> int:
    reported = [s.prompt_tokens for s in samples if s.prompt_tokens]
    return round(median(reported)) if reported else expected
