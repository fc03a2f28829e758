"""The sandbox's HTTP/1.1 server: waitress, with JSON error answers and a clean stop.

waitress parses requests in one I/O thread (slow clients are buffered there and hold no
worker), decodes chunked bodies, bounds the request line, the headers and the body, sets
``SO_REUSEADDR`` on the listening socket and ``TCP_NODELAY`` on connections, and keeps
connections alive. This module adds what the sandbox needs on top:

- every answer waitress writes itself (400, 413, 414, 431, 501) is a JSON body
  ``{"status": "error", "errorList": [...]}``, like the application's own;
- a request line over :data:`~toolkit.sandbox.limits.MAX_REQUEST_LINE` bytes is answered 414
  (waitress alone answers 431 for it);
- worker threads are added as requests wait (up to :data:`MAX_THREADS`), so a request held by
  a latency or hang fault never holds up the others;
- log records go to the ``toolkit.sandbox.http`` logger, never with a query string (request
  lines carry the api-key), and there is no access log;
- :meth:`Server.stop` returns promptly and frees the port at once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher, WSGITask
from waitress.utilities import (
    BadRequest,
    Error,
    RequestEntityTooLarge,
    RequestHeaderFieldsTooLarge,
    ServerNotImplemented,
)

from . import limits, logs

log = logging.getLogger("toolkit.sandbox.http")

MIN_THREADS = 8
MAX_THREADS = 256
IDLE_TIMEOUT_S = 120
POLL_S = 1.0

logs.install()


class UriTooLong(BadRequest):
    code = 414
    reason = "URI Too Long"


def error_message(error: Error) -> str:
    """The ``errorList`` entry for an error waitress found in a request."""
    if isinstance(error, UriTooLong):
        return (
            f"Request line too long: more than {limits.MAX_REQUEST_LINE} bytes;"
            " send long parameters in a POST body"
        )
    if isinstance(error, RequestHeaderFieldsTooLarge):
        return f"Request headers too large: more than {limits.MAX_HEADERS} bytes"
    if isinstance(error, RequestEntityTooLarge):
        return f"Request body too large: more than {limits.MAX_BODY} bytes"
    if isinstance(error, ServerNotImplemented):
        return f"Not implemented: {error.body}"
    if isinstance(error, BadRequest):
        return logs.scrub(f"Malformed HTTP request: {error.body}")
    return "Internal sandbox error"


class JsonErrorTask(ErrorTask):
    """waitress's answer to a request it could not read, as the sandbox's JSON error."""

    logger = log

    def execute(self) -> None:
        error = self.request.error
        body = json.dumps({"status": "error", "errorList": [error_message(error)]}).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json; charset=utf-8"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class Task(WSGITask):
    """waitress's WSGI task, writing the head and a sized body in one send."""

    logger = log

    def write(self, data: bytes) -> None:
        if self.wrote_header or not self.complete or not data or self.content_length is None:
            super().write(data)
            return
        head = self.build_response_header()
        self.wrote_header = True
        if not self.has_body:
            self.channel.write_soon(head)
            super().write(data)  # counted and dropped, as waitress does
            return
        body = data[: self.content_length]
        self.content_bytes_written += len(body)
        self.channel.write_soon(head + body)


_NON_ASCII = re.compile(rb"[\x80-\xff]")


def _percent(match: re.Match[bytes]) -> bytes:
    return b"%%%02X" % match.group()[0]


class Parser(HTTPRequestParser):
    """waitress's parser, with a 414 for a request line over the bound, and raw bytes beyond
    ASCII in the request line taken as their percent-encoded form (curl sends ``München``
    raw; the application then decodes it as UTF-8 or answers a clear 400)."""

    def parse_header(self, header_plus: bytes) -> None:
        end = header_plus.find(b"\r\n")
        if end > 0 and _NON_ASCII.search(header_plus, 0, end):
            header_plus = _NON_ASCII.sub(_percent, header_plus[:end]) + header_plus[end:]
        super().parse_header(header_plus)

    def received(self, data: bytes) -> int:
        if self.body_rcv is None and not self.completed and b"\n" not in self.header_plus:
            pending = self.header_plus + data
            end = pending.find(b"\n")
            line = len(pending) if end < 0 else end
            if line > limits.MAX_REQUEST_LINE:
                self.parse_header(b"GET / HTTP/1.0\r\n")  # as waitress does for its 431
                self.error = UriTooLong("request line too long")
                self.completed = True
                return len(data)
        return super().received(data)


class Channel(HTTPChannel):
    task_class = Task
    error_task_class = JsonErrorTask
    parser_class = Parser
    logger = log


class Dispatcher(ThreadedTaskDispatcher):
    """waitress's worker pool, grown by one thread whenever a request would have to wait."""

    logger = log
    queue_logger = log

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        super().__init__()
        self.max_threads = max_threads
        self.closed = False

    def add_task(self, task: Any) -> None:
        with self.lock:
            self.queue.append(task)
            self.queue_cv.notify()
            running = len(self.threads) - self.stop_count
            idle = running - self.active_count
            grow = not self.closed and len(self.queue) > idle and running < self.max_threads
        if grow:
            self.set_thread_count(running + 1)

    def shutdown(self, cancel_pending: bool = True, timeout: float = 5) -> bool:
        self.closed = True
        return super().shutdown(cancel_pending, timeout)


class _Listener(TcpWSGIServer):
    channel_class = Channel
    logger = log


class Server:
    """Serves ``app`` on ``(host, port)`` in a background thread; port 0 picks a free one."""

    def __init__(self, host: str, port: int, app: Callable[..., Any]) -> None:
        adj = Adjustments(
            host=host,
            port=port,
            ipv6=":" in host,
            threads=MIN_THREADS,
            connection_limit=1000,
            channel_timeout=IDLE_TIMEOUT_S,
            cleanup_interval=10,
            max_request_header_size=limits.MAX_HEADERS + 1,  # waitress refuses at >=
            max_request_body_size=limits.MAX_BODY + 1,
            asyncore_use_poll=True,  # select() cannot watch descriptors over 1023
            log_socket_errors=False,
            ident="toolkit-sandbox",
            clear_untrusted_proxy_headers=False,
        )
        self._map: dict[int, Any] = {}
        self._dispatcher = Dispatcher()
        self._dispatcher.set_thread_count(MIN_THREADS)
        try:
            self._listener = _Listener(app, map=self._map, dispatcher=self._dispatcher, adj=adj)
        except BaseException:
            self._dispatcher.shutdown(timeout=1)
            wasyncore.close_all(self._map, ignore_all=True)
            raise
        self._listener.trigger.logger = log
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.server_port = int(self._listener.effective_port)

    def start(self) -> None:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._loop, name="toolkit-sandbox", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self._stopping.is_set() and self._map:
                wasyncore.loop(timeout=POLL_S, map=self._map, use_poll=True, count=1)
        finally:
            wasyncore.close_all(self._map, ignore_all=True)

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self, timeout: float = 5) -> None:
        """Finish the requests being served (held ones are answered by then), close all."""
        self._dispatcher.shutdown(cancel_pending=True, timeout=timeout)
        self._stopping.set()
        with contextlib.suppress(OSError):  # the loop has already closed the trigger
            self._listener.pull_trigger()
        self.join(timeout)
        if self._thread is None:  # never started
            wasyncore.close_all(self._map, ignore_all=True)
        self._thread = None
