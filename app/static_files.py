"""The app's static files, answered from memory on the event loop.

Starlette's StaticFiles finds a file in a worker thread, then opens, reads and closes it
in a thread each: four or five trips to the thread pool per file. Under load those trips
were most of what a static file cost, and they shared the pool and the interpreter with
the submissions' threads, which waited behind them (submissions slowed to half while
other clients fetched only a stylesheet). The files are a couple of megabytes, all told,
and change only when the app is deployed (or edited, in development): each is read once
per version (its size and modification time, checked by one stat per request on the
loop, which a cached inode answers in microseconds) and answered from memory, with the
same ETag, Last-Modified and 304s as Starlette's. A Range request is left to Starlette.
"""

import os
import threading
from stat import S_ISREG

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import PathLike, StaticFiles
from starlette.types import Scope

from app.write_priority import give_way_to_a_write

# A file larger than this is streamed from disk as before.
LARGEST_KEPT = 4 * 1024 * 1024


class CachedStaticFiles(StaticFiles):
    """Vendored files carry their version in their name and never change: browsers keep
    them a year. The app's own CSS and JS revalidate (ETag and Last-Modified)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.kept: dict[str, tuple[tuple[int, int], bytes]] = {}
        self.kept_lock = threading.Lock()

    async def get_response(self, path: str, scope: Scope) -> Response:
        if scope["method"] in ("GET", "HEAD"):
            try:
                full_path, stat_result = self.lookup_path(path)  # a stat: no thread needed
            except (OSError, ValueError):
                full_path, stat_result = "", None  # Starlette's own path answers these
            if stat_result is not None and S_ISREG(stat_result.st_mode):
                give_way_to_a_write(scope)
                return self.file_response(full_path, stat_result, scope)
        return await super().get_response(path, scope)  # directories, refusals, 404s

    def file_response(
        self, full_path: PathLike, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        if "/vendor/" in scope["path"]:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        else:
            response.headers["Cache-Control"] = "no-cache"
        request_headers = Headers(scope=scope)
        if (
            not isinstance(response, FileResponse)
            or "range" in request_headers
            or stat_result.st_size > LARGEST_KEPT
        ):
            return response
        body = self.body_of(str(full_path), stat_result)
        headers = {k: v for k, v in response.headers.items() if k != "content-length"}
        if scope["method"] == "HEAD":
            return Response(b"", status_code, headers={**headers, "content-length": str(len(body))})
        return Response(body, status_code, headers=headers, media_type=response.media_type)

    def body_of(self, full_path: str, stat_result: os.stat_result) -> bytes:
        version = (stat_result.st_size, stat_result.st_mtime_ns)
        found = self.kept.get(full_path)
        if found is not None and found[0] == version:
            return found[1]
        with open(full_path, "rb") as file:  # once per version of the file
            body = file.read()
        with self.kept_lock:
            self.kept[full_path] = (version, body)
        return body
