"""A job source that reaches a dashboard over HTTP, for workers on other machines.

The worker never sees the dashboard's database: it claims jobs, renews their leases and
posts results through /api/worker/ with a worker token. A network hiccup does not end a
job: renewals are retried at the next heartbeat (the dashboard alone decides when a lease
has run out), and a result is posted again until it is stored, which is safe because the
dashboard stores one claim's result once.
"""

import logging
import time
from typing import Any

import httpx
from pydantic import ValidationError

from app.errors import ServebookError
from app.jobs.job_source import SourceRefused
from app.jobs.kinds import kind_named
from app.jobs.leases import Claim, LeaseLost
from app.jobs.worker_schemas import ClaimOut

log = logging.getLogger("servebook.worker")
REQUEST_TIMEOUT_S = 30.0
POST_ATTEMPTS = 5
RETRY_BASE_S = 0.5


def reason(response: httpx.Response) -> str:
    """The dashboard's own words for a refusal."""
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    if isinstance(body, dict) and isinstance(body.get("errors"), list):
        return "; ".join(f"{e.get('field')}: {e.get('message')}" for e in body["errors"])
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    return f"HTTP {response.status_code}"


class HttpJobSource:
    def __init__(
        self,
        server: str,
        token: str | None,
        *,
        name: str,
        lease_s: float = 60.0,
        label: str | None = None,
    ) -> None:
        if not server.startswith(("http://", "https://")):
            raise SourceRefused(f"--server must be an http(s) URL, not {server!r}")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.client = httpx.Client(
            base_url=server.rstrip("/"),
            headers=headers,
            timeout=REQUEST_TIMEOUT_S,
        )
        self.server = server
        self.name = name
        self.lease_s = lease_s
        self.label = label

    def close(self) -> None:
        self.client.close()

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        response = self.client.post(path, json=body)
        if response.status_code in (401, 403):
            raise SourceRefused(f"{self.server} refused this worker: {reason(response)}")
        return response

    def claim(self) -> Claim | None:
        body = {"worker": self.name, "label": self.label, "lease_s": self.lease_s}
        try:
            response = self.post("/api/worker/claim", body)
        except httpx.TransportError as error:
            log.warning("could not reach %s to claim a job: %s", self.server, error)
            return None
        if response.status_code == 204:
            return None
        if response.status_code != 200:
            if response.status_code < 500:  # our request is wrong: retrying will not help
                raise SourceRefused(f"{self.server} refused the claim: {reason(response)}")
            log.warning("claim failed at %s: %s", self.server, reason(response))
            return None
        try:
            out = ClaimOut.model_validate(response.json())
        except (ValueError, ValidationError) as error:
            raise SourceRefused(f"{self.server} answered a claim with {error}") from error
        return Claim(**out.model_dump(exclude={"lease_s"}))

    def renew(self, claim: Claim, progress: dict[str, Any] | None = None) -> bool:
        body = {"lease_token": claim.lease_token, "lease_s": self.lease_s, "progress": progress}
        try:
            response = self.post(f"/api/worker/jobs/{claim.job_id}/lease", body)
        except httpx.TransportError as error:
            log.warning("job %s: could not renew the lease: %s", claim.job_id, error)
            return True  # try again at the next beat; the dashboard decides when it ran out
        if response.status_code in (404, 409):
            return False
        if response.status_code != 200:
            log.warning("job %s: lease renewal refused: %s", claim.job_id, reason(response))
        return True

    def finish(self, claim: Claim, outcome: Any) -> None:
        kind = kind_named(claim.kind)
        body = {"lease_token": claim.lease_token, **kind.outcome_body(outcome)}
        path = f"/api/worker/jobs/{claim.job_id}/{kind.outcome_path}"
        response = self.post_until_answered(path, body)
        if response.status_code in (404, 409):
            raise LeaseLost(claim.job_id)
        if response.status_code not in (200, 201, 202):  # 202: queued for a second run
            raise ServebookError(f"the dashboard refused the {kind.name}: {reason(response)}")
        log.info("job %s (%s) finished: %s", claim.job_id, kind.name, response.text[:500])

    def fail(self, claim: Claim, message: str) -> None:
        body = {"lease_token": claim.lease_token, "error": message[:5000]}
        response = self.post_until_answered(f"/api/worker/jobs/{claim.job_id}/fail", body)
        if response.status_code != 200:
            log.warning("job %s: failure not recorded: %s", claim.job_id, reason(response))

    def post_until_answered(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST, retrying when the network or the dashboard fails (never when it refuses)."""
        for attempt in range(POST_ATTEMPTS):
            try:
                response = self.post(path, body)
            except httpx.TransportError as error:
                log.warning("POST %s failed (%s); retrying", path, error)
            else:
                if response.status_code < 500:
                    return response
                log.warning("POST %s answered %s; retrying", path, response.status_code)
            time.sleep(RETRY_BASE_S * 2**attempt)
        raise ServebookError(f"{self.server} did not take {path} after {POST_ATTEMPTS} tries")
