"""The model a server serves, when a sentinel is not told: the first id of ``/v1/models``."""

import httpx

from app.bench.procedure import TargetUnreachable
from app.bench.transport.endpoint import chat_completions_url
from app.bench.transport.hosts import check_url_allowed


def served_model_name(base_url: str, allowed_hosts: list[str], api_key: str | None) -> str:
    """Raises TargetUnreachable when nothing answers, ValueError when no model is listed."""
    url = chat_completions_url(base_url).removesuffix("/chat/completions") + "/models"
    check_url_allowed(url, allowed_hosts)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(trust_env=False, timeout=10.0, follow_redirects=False) as client:
            response = client.get(url, headers=headers)
    except httpx.TransportError as error:
        raise TargetUnreachable(url, str(error) or type(error).__name__) from error
    try:
        models = response.json().get("data") or []
        return str(models[0]["id"])
    except (ValueError, AttributeError, LookupError, TypeError) as error:
        raise ValueError(f"{url} lists no model: give --model") from error
