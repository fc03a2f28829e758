"""A small threaded HTTP/1.1 server for the sandbox's WSGI app, with keep-alive.

Werkzeug's development server closes every connection; a client's connection pool then
reconnects for each request. This server reads each request body whole (by
``Content-Length``, or chunked), calls the app, and answers with a ``Content-Length``, so a
connection serves request after request. It writes no access log: request lines carry the
api-key.
"""

from __future__ import annotations

import io
import logging
import socketserver
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

log = logging.getLogger("toolkit.sandbox")

MAX_BODY = 64 * 1024 * 1024
IDLE_TIMEOUT_S = 30


class Handler(BaseHTTPRequestHandler):
    """One connection: requests are read and answered until the client closes it."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    disable_nagle_algorithm = True  # small answers must not wait for the peer's delayed ACK
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self.answer
        raise AttributeError(name)

    def read_body(self) -> bytes | None:
        """The request body, or None when it is too large (the connection is then closed)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts, size = [], 0
            while True:
                line = self.rfile.readline(65537)
                length = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if length == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                size += length
                if size > MAX_BODY:
                    return None
                parts.append(self.rfile.read(length))
                self.rfile.readline(3)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return None
        return self.rfile.read(length) if length > 0 else b""

    def environ(self, body: bytes) -> dict[str, Any]:
        path, _, query = self.path.partition("?")
        host, port = self.server.server_address[:2]
        env: dict[str, Any] = {
            "REQUEST_METHOD": self.command,
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote(path, encoding="latin-1"),
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "SERVER_NAME": str(host),
            "SERVER_PORT": str(port),
            "SERVER_PROTOCOL": self.request_version,
            "REMOTE_ADDR": self.client_address[0],
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        for key, value in self.headers.items():
            name = "HTTP_" + key.upper().replace("-", "_")
            if name in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"):
                continue
            env[name] = f"{env[name]},{value}" if name in env else value
        return env

    def answer(self) -> None:
        body = self.read_body()
        if body is None:
            self.close_connection = True
            self.reply(
                413,
                [("Content-Type", "application/json")],
                b'{"status":"error","errorList":["Request body too large"]}',
            )
            return
        status: list[Any] = []

        def start_response(code: str, headers: list[tuple[str, str]], exc_info: Any = None):
            status[:] = [code, headers]
            return lambda data: None

        chunks = self.server.app(self.environ(body), start_response)
        try:
            data = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()
        code, headers = status
        self.reply(int(code.split()[0]), headers, data)

    def reply(self, code: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(code)
        for key, value in headers:
            if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self._headers_buffer.append(b"\r\n")
        if self.command != "HEAD":
            self._headers_buffer.append(data)
        self.flush_headers()  # head and body in one write


class Server(ThreadingHTTPServer):
    """Serves ``app`` on ``(host, port)``; port 0 picks a free one."""

    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, host: str, port: int, app: Any) -> None:
        self.app = app
        super().__init__((host, port), Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up (getfqdn), which can be slow
        socketserver.TCPServer.server_bind(self)
        self.server_name = str(self.server_address[0])
        self.server_port = self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("sandbox server: error on a connection", exc_info=True)
