"""Settings, read from the environment (and an optional .env file)."""

from functools import lru_cache
from ipaddress import ip_address
from pathlib import Path

from pydantic import AliasChoices, Field, IPvAnyNetwork
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / "data"


class Settings(BaseSettings):
    """Everything the app needs to start; one instance per app."""

    model_config = SettingsConfigDict(env_prefix="SERVEBOOK_", env_file=".env", extra="ignore")

    database_url: str = Field(
        default=f"sqlite:///{DEFAULT_DATA_DIR / 'servebook.db'}",
        validation_alias=AliasChoices("DATABASE_URL", "SERVEBOOK_DATABASE_URL"),
    )
    host: str = "127.0.0.1"
    port: int = 8000
    seed_dir: Path = PROJECT_ROOT / "seed_data"
    secret_key: str = Field(
        default="", description="Signs CSRF tokens; generated per data dir if empty"
    )
    run_worker: bool = True
    # Hosts the benchmark client may measure besides loopback (never resolved, compared as written).
    bench_allowed_hosts: list[str] = []
    # Host names the app answers to beyond loopback (JSON list), e.g. ["servebook.lab"]:
    # a request naming any other host is refused, so links never echo an untrusted Host.
    allowed_hosts: list[str] = []
    # Reverse proxies whose forwarding headers are believed (JSON list of addresses or
    # networks), e.g. ["127.0.0.1"] for nginx on this host: their requests are judged by the
    # client address and scheme they forward (app.security.forwarded).
    trusted_proxies: list[IPvAnyNetwork] = []
    max_upload_bytes: int = 5_000_000
    # Where `{"repo": "org/name"}` model descriptions are fetched from, and cached.
    hub_url: str = "https://huggingface.co"
    hub_cache_dir: Path = DEFAULT_DATA_DIR / "hub_cache"
    # A served app beyond loopback fetches nothing from the Hub for a request unless this
    # is true (anyone reaching it could otherwise make it download on their behalf).
    hub_fetch_when_exposed: bool = False
    # /metrics answers on loopback; served beyond loopback only when this is true (request
    # paths and record counts are no secret to a lab, but they are to the internet).
    metrics_beyond_loopback: bool = False

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
