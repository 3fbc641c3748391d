"""Record submissions answered in a process of their own, beside the app's.

One app process is one interpreter. With sixteen clients reading kept pages and sixteen
submitting records, the two loads shared it: each kept about half its rate alone (the fit
page 0.47-0.53x, submissions 0.42-0.50x), and a submission's latency was set by the reads
around it (tests/perf/bench_mixed_load.py). A record's own work (its checks, its queries, its
write) is most of a submission's CPU, so the app hands it to this process: the app's loop
only reads the request and passes it on, a few tenths of a millisecond, and the record is
checked and written on another core, by the same code (`app.records.endpoints.api.submit_api`, which
the app hands over with its factory), with the same settings.

The two talk over a socket pair, in frames of a length and a pickle: the request (its
scope's plain values, the body, the reader's language) one way, the answer (status, headers,
body), or the error the app's handlers turn into one, the other. The child writes through
its own connections; a SQLite file takes its writers in turn across processes as before
(`app.db.SqliteWriterQueue`), and every page reads the revision a write moved, so the next
page after a submission shows it whichever process wrote it.

The app's first submission starts the child. Until it says it is ready, and if it dies,
submissions are answered in the app's own process, as before; a request in flight when it
died is answered 503, to be sent again (with its Idempotency-Key, a retry cannot store it
twice), and a new child is started in its place. One that dies before it was ever ready is
not started again: the app goes on answering submissions itself.
"""

import asyncio
import gc
import itertools
import logging
import multiprocessing
import pickle
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request

from app.config import Settings
from app.db import WRITE_LOCK_HOLDS
from app.errors import ServebookError
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register

log = logging.getLogger("servebook.submissions")

HEAD_BYTES = 4  # a frame's length, big-endian, then its pickle
READY = -1  # the child's first frame: set up and listening
# The request's scope as the app's middleware left it, as far as a record's checks read it:
# who asks (client, headers, forwarding) and the address its answer links to.
SCOPE_KEYS = (
    "type",
    "http_version",
    "method",
    "scheme",
    "server",
    "client",
    "root_path",
    "path",
    "raw_path",
    "query_string",
    "headers",
)
PLAIN = (str, int, float, bool, type(None))


class SubmissionProcessLost(ServebookError):
    status_code = 503


LOST = register(
    "records.submission_process_lost",
    _l(
        "The process that stores records stopped while this record was in it, so it may or "
        "may not be stored. Send it again with the same Idempotency-Key."
    ),
)


@dataclass(frozen=True)
class Submitted:
    """What the app sends for one record."""

    scope: dict[str, Any]
    request_state: dict[str, Any]  # the middleware's plain marks (forwarding, CSRF)
    exposed: bool
    body: bytes
    locale: str


def submitted(request: Request, body: bytes, exposed: bool, locale: str) -> Submitted:
    scope = request.scope
    state = scope.get("state") or {}
    return Submitted(
        scope={key: scope[key] for key in SCOPE_KEYS if key in scope},
        request_state={k: v for k, v in state.items() if isinstance(v, PLAIN)},
        exposed=exposed,
        body=body,
        locale=locale,
    )


# ---------------------------------------------------------------- the child


# What the child runs: the app's factory, and the submission route's own work (a request
# and its body in, the response out). The app hands both over, so this module imports
# neither the app nor the route that use it.
AppFactory = Callable[[Settings], Any]
Submit = Callable[[Request, bytes], Any]


def serve_submissions(
    channel: socket.socket, settings: Settings, app_factory: AppFactory, submit: Submit
) -> None:
    """The child's whole life: set up as the app does, then answer frames until the app
    closes its end."""
    # Ctrl-C reaches the whole process group; the app stops this process by closing the
    # socket, after its own shutdown, so no record is cut off halfway.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from app.db import make_engine, make_sessionmaker
    from app.i18n.messages import in_locale

    app = app_factory(settings)  # its state (secret key, settings) and its routes' paths
    state = {
        "settings": settings,
        "sessionmaker": make_sessionmaker(make_engine(settings, 1)),
        "write_sessions": make_sessionmaker(make_engine(settings, 1)),
    }
    gc.freeze()  # everything set up lives as long as the process (app.observability.runtime)
    reading = channel.makefile("rb")
    send_frame(channel, (READY, None))
    counted = WRITE_LOCK_HOLDS.read()
    while (frame := read_frame(reading)) is not None:
        number, asked = frame
        app.state.exposed = asked.exposed
        scope = {**asked.scope, "app": app, "state": {**state, **asked.request_state}}
        try:
            with in_locale(asked.locale):
                response = submit(Request(scope), asked.body)
            answer: tuple[str, Any] = (
                "answer",
                (response.status_code, response.raw_headers, response.body),
            )
        except Exception as error:  # the app's handlers answer it, as for its own requests
            if not isinstance(error, ServebookError):
                log.exception("a submission failed")
            answer = ("raise", error)
        holds = WRITE_LOCK_HOLDS.read()
        held, counted = holds.since(counted), holds
        try:
            send_frame(channel, (number, (answer, held)))
        except (pickle.PicklingError, TypeError, AttributeError):
            log.exception("an answer could not be passed back")
            send_frame(channel, (number, (("raise", RuntimeError("unpicklable")), held)))


def send_frame(channel: socket.socket, frame: Any) -> None:
    data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
    channel.sendall(len(data).to_bytes(HEAD_BYTES, "big") + data)


def read_frame(reading: Any) -> Any:
    head = reading.read(HEAD_BYTES)
    if len(head) < HEAD_BYTES:
        return None
    return pickle.loads(reading.read(int.from_bytes(head, "big")))


# ---------------------------------------------------------------- the app's side


class SubmissionProcess:
    """The app's handle on its submission process: `answer()` one request there, or None
    while there is none ready (the caller answers it in its own process)."""

    def __init__(self, settings: Settings, app_factory: AppFactory, submit: Submit) -> None:
        self.settings = settings
        # What the child runs: module-level functions, which the spawned process imports
        # by name.
        self.app_factory, self.submit = app_factory, submit
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.numbers = itertools.count()
        self.writer: asyncio.StreamWriter | None = None
        self.ready = False
        self.stopping = False
        self.process: Any = None
        self.listening: asyncio.Task[None] | None = None
        self.restarts = 0
        self.starting: asyncio.Task[None] | None = None
        self.answered = 0  # requests the child answered

    async def start(self) -> "SubmissionProcess":
        ours, theirs = socket.socketpair()
        # spawn, not fork: the app has threads (its warm-up, its thread pool), and a fork
        # copies their locks in whatever state they are in.
        context = multiprocessing.get_context("spawn")
        self.process = context.Process(
            target=serve_submissions,
            args=(theirs, self.settings, self.app_factory, self.submit),
            name="servebook-submissions",
            daemon=True,
        )
        self.process.start()
        theirs.close()
        reader, self.writer = await asyncio.open_unix_connection(sock=ours)
        self.listening = asyncio.create_task(self.listen(reader))
        return self

    async def listen(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                head = await reader.readexactly(HEAD_BYTES)
                number, payload = pickle.loads(
                    await reader.readexactly(int.from_bytes(head, "big"))
                )
                if number == READY:
                    self.ready = True
                    continue
                answer, held = payload
                WRITE_LOCK_HOLDS.merge(held)
                future = self.pending.pop(number, None)
                if future is not None and not future.done():
                    self.answered += 1
                    future.set_result(answer)
        except asyncio.CancelledError:
            # The app's loop is ending without its shutdown (cut short by a second Ctrl-C,
            # say): the child reads the end of its socket and returns; none in its place.
            self.stopping = True
            raise
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            await self.lost()

    async def lost(self) -> None:
        """The child is gone: what was in flight is answered 503; the next ones here."""
        was_ready, self.ready = self.ready, False
        for future in self.pending.values():
            if not future.done():
                future.set_exception(SubmissionProcessLost(LOST()))
        self.pending.clear()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.stopping:
            return
        if self.process is not None:
            await asyncio.to_thread(self.process.join, 5)
        if not was_ready:
            log.error(
                "the submission process ended before it was ready; records are checked and "
                "written in the app's own process"
            )
            return
        self.restarts += 1
        log.warning("the submission process ended; starting another")
        self.starting = asyncio.get_running_loop().create_task(self.start())

    async def answer(self, asked: Submitted) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        if self.starting is None:
            # Started by the first submission, not with the app: a reader who never submits
            # has no second process, and the first pages after a restart do not share the
            # machine with its start-up (a first detail page measured 1.2x a later one beside
            # it, 1.1x without).
            self.starting = asyncio.get_running_loop().create_task(self.start())
        if not self.ready or self.writer is None:
            return None
        number = next(self.numbers)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[number] = future
        data = pickle.dumps((number, asked), protocol=pickle.HIGHEST_PROTOCOL)
        self.writer.write(len(data).to_bytes(HEAD_BYTES, "big") + data)
        await self.writer.drain()  # a burst of large bodies waits here, not in memory
        kind, result = await future
        if kind == "raise":
            raise result
        return result

    async def stop(self) -> None:
        self.stopping = True
        if self.starting is not None and not self.starting.done():
            self.starting.cancel()
        if self.writer is not None:
            self.writer.close()  # the child reads the end, and returns
        if self.listening is not None:
            await asyncio.wait([self.listening], timeout=5)
        if self.process is not None:
            await asyncio.to_thread(self.process.join, 5)
            if self.process.is_alive():
                self.process.kill()


def in_its_own_process(settings: Settings) -> bool:
    """Whether submissions get a process of their own: not for an in-memory database (a
    process of its own would see another database) nor where turned off."""
    if not settings.submission_process:
        return False
    url = settings.database_url
    return not (settings.is_sqlite and (":memory:" in url or url.rstrip("/") == "sqlite:"))


class SubmissionProcessCollector(Collector):
    """Whether records are answered in the submission process now, and how often it was
    started again after it ended, for /metrics."""

    def __init__(self, process: SubmissionProcess | None) -> None:
        self.process = process

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "servebook_submission_process_ready",
            "1 while record submissions are checked and written in their own process; 0 while "
            "in the app's (starting, turned off, or started again after it ended).",
            value=int(self.process is not None and self.process.ready),
        )
        yield GaugeMetricFamily(
            "servebook_submission_process_restarts",
            "How often the submission process ended and another was started.",
            value=self.process.restarts if self.process is not None else 0,
        )
