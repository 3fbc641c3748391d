"""Settings, read from the environment (and an optional .env file)."""

from functools import lru_cache
from ipaddress import ip_address
from pathlib import Path

import platformdirs
from pydantic import AliasChoices, Field, IPvAnyNetwork, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.resources import CHECKOUT_ROOT, FROM_CHECKOUT, SEED_DIR

# The source checkout (the tests and the i18n maintenance read it; an installed copy has
# none, and reads its resources through app.resources).
PROJECT_ROOT = CHECKOUT_ROOT


def default_data_dir(from_checkout: bool = FROM_CHECKOUT) -> Path:
    """Where the database, the secret key and the Hub cache live unless told otherwise.

    A checkout keeps them in its own data/ folder (so `make run` serves the clone's
    data/servebook.db); an installed copy in the user's data folder (platformdirs, e.g.
    ~/.local/share/servebook), whatever the current folder is.
    """
    if from_checkout:
        return CHECKOUT_ROOT / "data"
    return Path(platformdirs.user_data_dir("servebook", appauthor=False))


class Settings(BaseSettings):
    """Everything the app needs to start; one instance per app."""

    model_config = SettingsConfigDict(env_prefix="SERVEBOOK_", env_file=".env", extra="ignore")

    # The folder of everything servebook writes; the database and Hub cache default into it.
    data_dir: Path = Field(default_factory=default_data_dir)
    # Empty: the SQLite file data_dir/servebook.db.
    database_url: str = Field(
        default="",
        validation_alias=AliasChoices("DATABASE_URL", "SERVEBOOK_DATABASE_URL"),
    )
    host: str = "127.0.0.1"
    port: int = 8000
    seed_dir: Path = SEED_DIR
    secret_key: str = Field(
        default="", description="Signs CSRF tokens; generated once into data_dir if empty"
    )
    run_worker: bool = True
    # Hosts the benchmark client may measure besides loopback (never resolved, compared as written).
    bench_allowed_hosts: list[str] = []
    # Hosts a labelled worker measures besides those, by its label (JSON object), e.g.
    # {"gpu-a": ["10.9.8.7"]}: a job pinned to the label may name them, and a database
    # worker started with that label measures them. A job's plan never widens the list.
    bench_worker_hosts: dict[str, list[str]] = {}
    # Host names the app answers to beyond loopback (JSON list), e.g. ["servebook.lab"]:
    # a request naming any other host is refused, so links never echo an untrusted Host.
    allowed_hosts: list[str] = []
    # Reverse proxies whose forwarding headers are believed (JSON list of addresses or
    # networks), e.g. ["127.0.0.1"] for nginx on this host: their requests are judged by the
    # client address and scheme they forward (app.security.forwarded).
    trusted_proxies: list[IPvAnyNetwork] = []
    max_upload_bytes: int = 5_000_000
    # Writes (POST, PUT, PATCH, DELETE) a minute for each token, or session, or address
    # without either, in bursts up to as many; past it, 429 with Retry-After. 0: no limit.
    write_rate_per_minute: int = Field(default=600, ge=0)
    # Where `{"repo": "org/name"}` model descriptions are fetched from, and cached.
    hub_url: str = "https://huggingface.co"
    hub_cache_dir: Path | None = None  # None: data_dir/hub_cache
    # A served app beyond loopback fetches nothing from the Hub for a request unless this
    # is true (anyone reaching it could otherwise make it download on their behalf).
    hub_fetch_when_exposed: bool = False
    # /metrics answers on loopback; served beyond loopback only when this is true (request
    # paths and record counts are no secret to a lab, but they are to the internet).
    metrics_beyond_loopback: bool = False
    # After start-up, compile templates and catalogs, resolve every model and freeze the
    # long-lived objects out of the garbage collector's sight, in the background
    # (app.warm_up); tests turn it off, so no thread of theirs queries behind their back.
    warm_up: bool = True
    # Record submissions are checked and written in a process of their own, beside the app's
    # (app.records.endpoints.submission_process): reads and writes then each have an interpreter.
    submission_process: bool = True
    # The garbage collector's thresholds once warmed up (app.observability.runtime). A
    # young collection walks every young object still alive, so its pause grows with the
    # first threshold: at 50,000, 19-41 ms of CPU under mixed load (collections are rare,
    # but each stalls every request); at 10,000, at most 9 ms, and a middle-generation one
    # 17-32 ms (tests/perf/bench_mixed_load.py, two shared cores).
    gc_thresholds: tuple[int, int, int] = (10_000, 10, 100)

    @model_validator(mode="after")
    def _paths_under_data_dir(self) -> "Settings":
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'servebook.db'}"
        if self.hub_cache_dir is None:
            self.hub_cache_dir = self.data_dir / "hub_cache"
        return self

    def worker_hosts(self, label: str | None) -> list[str]:
        """The hosts besides loopback that a worker with `label` (None: unlabelled) measures."""
        extra = self.bench_worker_hosts.get(label, []) if label else []
        return [*self.bench_allowed_hosts, *extra]

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def sqlite_path(self) -> Path | None:
        # sqlite:///relative, sqlite:////absolute; "sqlite://" alone is in memory.
        path = self.database_url.partition("///")[2]
        if not self.is_sqlite or not path or ":memory:" in path:
            return None
        return Path(path)


def is_loopback(host: str) -> bool:
    """True for hosts that only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@lru_cache
def get_settings() -> Settings:
    return Settings()
