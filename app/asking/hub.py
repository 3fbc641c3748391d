"""A Hub repository id read as a model description: its config.json, its safetensors index
(or file sizes), fetched once and cached on disk under the settings' `hub_cache_dir`.

Without network access the error says what to paste instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from app.asking.described import ModelDescription
from app.asking.model_sources import from_safetensors, safetensors_index_bytes
from app.config import Settings
from app.estimate import EstimateError

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9_.-]{1,96}$")
TIMEOUT_S = 10.0


class HubUnavailable(EstimateError):
    """The Hub could not be reached, or does not have the repo (or its weights), or keeps
    it from us: paste the files instead. `status` is the HTTP answer that says which: 502
    (the Hub failed or was not reached), 404 (no such repository, or no safetensors
    weights in it), 403 (gated or private)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__("repo", message)
        self.status = status


def describe_repo(repo: str, settings: Settings, quant: str | None = None) -> ModelDescription:
    if not REPO_ID.match(repo):
        raise EstimateError("repo", f"{repo!r} is not a repository id like org/name")
    files = fetch_repo_files(repo, settings)
    size, what = _weights_bytes(files)
    return from_safetensors(size, what, files["config"], quant, repo=repo)


def is_cached(repo: str, settings: Settings) -> bool:
    return _cache_path(repo, settings).exists()


def fetch_repo_files(repo: str, settings: Settings) -> dict[str, Any]:
    """config.json plus the index or the file listing, from the cache or the Hub."""
    cached = _cache_path(repo, settings)
    if cached.exists():
        return json.loads(cached.read_text())
    base = settings.hub_url.rstrip("/")
    try:
        with httpx.Client(timeout=TIMEOUT_S, follow_redirects=True) as client:
            config = _get_json(client, f"{base}/{repo}/resolve/main/config.json", repo)
            index = _get_json(
                client, f"{base}/{repo}/resolve/main/model.safetensors.index.json", repo, True
            )
            listing = None
            if index is None:
                listing = _get_json(client, f"{base}/api/models/{repo}?blobs=true", repo)
    except httpx.HTTPError as error:
        raise HubUnavailable(_offline_message(repo, str(error)), 502) from error
    files = {"config": config, "index": index, "listing": listing}
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(files))
    return files


def _get_json(client: httpx.Client, url: str, repo: str, optional: bool = False) -> Any:
    response = client.get(url)
    if response.status_code == 404 and optional:
        return None
    if response.status_code != 200:
        reason = f"{url} answered {response.status_code}"
        status = {404: 404, 401: 403, 403: 403}.get(response.status_code, 502)
        raise HubUnavailable(_offline_message(repo, reason), status)
    try:
        return response.json()
    except ValueError as error:
        raise HubUnavailable(_offline_message(repo, f"{url} is not JSON"), 502) from error


def _weights_bytes(files: dict[str, Any]) -> tuple[int, str]:
    """The weights' bytes and where they were read."""
    index = files.get("index")
    if index:
        return safetensors_index_bytes(index, stated=False), "repository's safetensors index"
    siblings = (files.get("listing") or {}).get("siblings") or []
    size = sum(s.get("size") or 0 for s in siblings if s["rfilename"].endswith(".safetensors"))
    if not size:
        raise HubUnavailable("the repository lists no safetensors files with sizes", 404)
    return size, "repository's safetensors files (file sizes, headers included)"


def _cache_path(repo: str, settings: Settings) -> Path:
    return Path(settings.hub_cache_dir) / f"{repo.replace('/', '--')}.json"


def _offline_message(repo: str, reason: str) -> str:
    return (
        f"could not fetch {repo} from the Hub ({reason}). Paste its config.json as "
        '{"hf_config": {...}} instead, with model.safetensors.index.json as '
        '"safetensors_index" for exact weight bytes'
    )
