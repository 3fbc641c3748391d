"""One URL under load, for bench_pages.py: SERVEBOOK_PERF_PATH names it, and
SERVEBOOK_PERF_ETAG (optional) is sent as If-None-Match to measure 304 answers."""

import os

from locust import FastHttpUser, constant, task

PATH = os.environ["SERVEBOOK_PERF_PATH"]
ETAG = os.environ.get("SERVEBOOK_PERF_ETAG")


class Reader(FastHttpUser):
    wait_time = constant(0)  # a closed loop: each user sends its next request at once

    @task
    def read(self) -> None:
        headers = {"If-None-Match": ETAG} if ETAG else {}
        with self.client.get(PATH, headers=headers, catch_response=True) as response:
            expected = 304 if ETAG else 200
            if response.status_code != expected:
                response.failure(f"expected {expected}, got {response.status_code}")
