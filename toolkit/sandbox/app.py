"""The sandbox's WSGI application: parse, authenticate, call a handler, answer.

Paths:

- ``/api/...``: the service's interface (see ``service-interface.md``);
- ``/_sandbox/...``: control endpoints (health, reset, moderate, faults, stats), no key;
- ``/files/<id>``: files uploaded with creatives.

Every answer is JSON (but the odd answers of fault injection: a gateway's HTML page, a cut
body). Bad input is answered with ``status: error`` and an ``errorList``, never with a traceback.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.wrappers import Request, Response

from .. import spec
from . import qs
from .bodies import check_multipart, decode_json
from .errors import (
    BadRequest,
    Business,
    Failure,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
)
from .faults import GATEWAY_PAGES, FaultRule, Faults, retry_after_text
from .handlers import account, campaigns, creatives, rules, targeting
from .handlers.common import Config, Ctx, Handler
from .handlers.creatives import Upload
from .limits import MAX_BODY, MAX_PARAMS
from .params import Params
from .refs import Refs
from .store import Store

log = logging.getLogger("toolkit.sandbox")

MULTIPART_PATHS = frozenset({"/api/creative/create", "/api/creative/update"})


def build_routes() -> dict[str, Handler]:
    table: dict[str, Handler] = {}
    for module in (campaigns, targeting, rules, creatives, account):
        table.update(module.routes())
    return table


class App:
    """The WSGI callable. ``control`` receives the control endpoints' calls."""

    def __init__(
        self,
        store: Store,
        refs: Refs,
        config: Config,
        faults: Faults,
        control: Callable[[str, str, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.store = store
        self.refs = refs
        self.config = config
        self.faults = faults
        self.control = control
        self.routes = build_routes()
        self.methods = {p: op.methods for p, op in spec.operations_by_path().items()}
        self.stats: Counter[tuple[str, str, int]] = Counter()
        self._stats_lock = threading.Lock()
        #: Calls per account (user id), and calls that named another account's campaign.
        self.by_account: Counter[int] = Counter()
        self.foreign: list[tuple[int, int]] = []

    # ------------------------------------------------------------------ WSGI

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        request = Request(environ)
        request.max_content_length = MAX_BODY
        try:
            response = self.dispatch(request)
        except Exception as exc:  # a bug of the sandbox: answer it, never crash the server
            log.error("sandbox error on %s %s: %r", request.method, request.path, exc)
            response = self.json({"status": "error", "errorList": ["Internal sandbox error"]}, 500)
        return response(environ, start_response)

    @staticmethod
    def json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: JSON's \uXXXX escapes still carry it
            data = json.dumps(body, separators=(",", ":")).encode("ascii")
        return Response(
            data, status=status, headers=headers, content_type="application/json; charset=utf-8"
        )

    def failure(self, exc: Failure) -> Response:
        return self.json({"status": "error", "errorList": exc.messages}, exc.http_status)

    def count(self, request: Request, status: int) -> None:
        with self._stats_lock:
            self.stats[(request.method, request.path, status)] += 1

    def dispatch(self, request: Request) -> Response:
        path = request.path
        if path.startswith("/api/"):
            response = self.api(request)
            self.count(request, response.status_code)
            return response
        if path.startswith("/_sandbox/"):
            return self.control_call(request)
        if path.startswith("/files/"):
            return self.file(path[len("/files/") :])
        return self.failure(NotFound(f"Unknown path: {path}"))

    # ------------------------------------------------------------------ /api/

    def api(self, request: Request) -> Response:
        # the rate limit, as a service's gateway keeps it: before anything else, per api-key
        if self.faults.limit is not None:
            wait = self.faults.admit(request.args.get("api-key", ""))
            if wait is not None:
                return self.rate_limited(wait)
        if self.faults.latency_ms and self.faults.sleep(self.faults.latency_ms / 1000):
            return self.fault_answer(503, None)
        rule = self.faults.pick(request.path, request.method)
        if rule is not None and not rule.after:
            if rule.hang_s and self.faults.sleep(rule.hang_s):
                return self.fault_answer(503, None)  # the sandbox stopped meanwhile
            if rule.answers:
                return self.faulty(rule, None, request)
        answer = self.carry_out(request)
        if rule is not None and rule.after:  # carried out; its answer is lost
            if rule.hang_s and self.faults.sleep(rule.hang_s):
                return self.fault_answer(503, None)
            if rule.answers:
                return self.faulty(rule, answer, request)
        return answer

    def faulty(self, rule: FaultRule, answer: Response | None, request: Request) -> Response:
        """The answer of a status, body or redirect fault (``answer``: the real one, when
        carried out)."""
        if rule.redirect is not None:
            return self.redirected(rule.redirect, request)
        if rule.body == "echo":  # a gateway that quotes the request, its api-key included
            line = f"{request.method} {request.host_url.rstrip('/')}{request.full_path}"
            echoed = {"status": "error", "errorList": [f"Bad gateway: upstream failed on {line}"]}
            return self.json(echoed, rule.status or 502)
        if rule.status is not None:
            return self.fault_answer(rule.status, rule.retry_after)
        if rule.body == "cut" and answer is not None:  # the first half, framed as whole
            data = answer.get_data()
            return Response(
                data[: len(data) // 2],
                status=answer.status_code,
                content_type=answer.headers.get("Content-Type"),
            )
        return Response(rule.body, status=200, content_type="application/json; charset=utf-8")

    @staticmethod
    def redirected(target: str, request: Request) -> Response:
        """HTTP 307 to ``target``, keeping the request's query string (as a careless gateway
        or a moved service does: the api-key goes along)."""
        query = request.query_string.decode("latin-1")
        location = target + ("&" if "?" in target else "?") + query if query else target
        return Response(b"", status=307, headers={"Location": location})

    def carry_out(self, request: Request) -> Response:
        """The service's answer to ``request`` (no faults)."""
        try:
            return self.json(self.call(request))
        except Failure as exc:
            return self.failure(exc)
        except OverflowError:  # a number the store cannot hold that no check caught
            log.warning("sandbox: a number out of range on %s", request.path)
            return self.failure(BadRequest("A number in the request is out of range"))

    def rate_limited(self, wait: float) -> Response:
        """HTTP 429 past the rate limit: ``Retry-After`` says when a slot frees; nothing done."""
        return self.json(
            {"status": "error", "errorList": ["Too many requests: rate limit exceeded"]},
            429,
            {"Retry-After": retry_after_text(wait)},
        )

    def fault_answer(self, status: int, retry_after: float | None) -> Response:
        if status in GATEWAY_PAGES:  # a gateway's own page, not the service's JSON
            title = f"{status} {GATEWAY_PAGES[status]}"
            html = f"<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"
            return Response(html, status=status, content_type="text/html")
        headers = {}
        if status == 429:
            headers["Retry-After"] = str(retry_after if retry_after is not None else 1)
            message = "Too many requests"
        else:
            message = "Service temporarily unavailable"
        return self.json({"status": "error", "errorList": [message]}, status, headers)

    def call(self, request: Request) -> dict[str, Any]:
        path = request.path
        handler = self.routes.get(path)
        if handler is None:
            raise NotFound(f"Unknown operation: {path}")
        if request.method not in self.methods[path]:
            allowed = " or ".join(self.methods[path])
            raise MethodNotAllowed(
                f"Method {request.method} is not allowed for {path}; use {allowed}"
            )
        data = qs.decode(request.environ.get("QUERY_STRING", "").encode("latin-1"))  # raw bytes
        key = data.pop("api-key", None)
        user_id = self.authenticate(key)
        files: dict[str, Upload] = {}
        if request.method == "POST":
            data.update(self.body(request, path, files))
        ctx = Ctx(
            db=self.store.conn,
            refs=self.refs,
            user_id=user_id,
            params=Params(data),
            base_url=request.host_url.rstrip("/"),
            config=self.config,
            files=files,
            foreign=self.foreign,
        )
        with self._stats_lock:
            self.by_account[user_id] += 1
        with self.store.transaction() as db:
            ctx.db = db
            return handler(ctx)

    def authenticate(self, key: Any) -> int:
        if key is None or key == "":
            raise Unauthorized("Missing api-key: pass the account's key as the api-key parameter")
        if not isinstance(key, str):
            raise Unauthorized("Invalid api-key")
        with self.store.lock:
            row = self.store.conn.execute(
                "SELECT user_id FROM accounts WHERE api_key=?", (key,)
            ).fetchone()
        if row is None:
            raise Unauthorized("Invalid api-key")
        return row[0]

    def body(self, request: Request, path: str, files: dict[str, Upload]) -> dict[str, Any]:
        """Parameters of a POST body: JSON, form-urlencoded, or multipart with files."""
        length = request.content_length
        if length is not None and length > MAX_BODY:
            raise PayloadTooLarge(f"Request body too large: {length} bytes (maximum {MAX_BODY})")
        mimetype = request.mimetype
        if mimetype == "multipart/form-data":
            return self.multipart(request, files)
        raw = request.get_data(cache=True)
        if not raw:
            return {}
        if mimetype == "application/json":
            if path in MULTIPART_PATHS:
                raise BadRequest(
                    "Creative create and update take multipart/form-data, not a JSON body"
                )
            body = decode_json(raw)
            if not isinstance(body, dict):
                raise BadRequest("The JSON body must be an object of parameters")
            body.pop("api-key", None)
            return body
        if mimetype == "application/x-www-form-urlencoded":
            body = qs.decode(raw, "form body")
            body.pop("api-key", None)
            return body
        shown = mimetype or "none"
        raise BadRequest(
            f"Unsupported Content-Type: {shown}; send application/json"
            " (or multipart/form-data for creatives)"
        )

    @staticmethod
    def multipart(request: Request, files: dict[str, Upload]) -> dict[str, Any]:
        check_multipart(request.get_data(cache=True), request.mimetype_params.get("boundary"))
        request.max_form_parts = MAX_PARAMS
        try:
            form = request.form
            uploads = request.files
        except RequestEntityTooLarge:
            raise BadRequest(
                f"Multipart body too large: a text field over {request.max_form_memory_size}"
                f" bytes, or more than {MAX_PARAMS} parts"
            ) from None
        except HTTPException as exc:
            raise BadRequest(f"Malformed multipart body: {exc.description}") from None
        except (TypeError, ValueError) as exc:
            raise BadRequest(f"Malformed multipart body: {exc}") from None
        for name, storage in uploads.items(multi=False):
            files[name] = Upload(
                storage.filename or name,
                storage.mimetype or "application/octet-stream",
                storage.read(),
            )
        body = qs.decode_pairs(form.items(multi=True))
        body.pop("api-key", None)
        return body

    # ------------------------------------------------------------------ files and control

    def file(self, file_id: str) -> Response:
        with self.store.lock:
            row = self.store.conn.execute(
                "SELECT mime, data FROM files WHERE id=?", (file_id,)
            ).fetchone()
        if row is None:
            return self.failure(NotFound(f"Unknown file: {file_id}"))
        return Response(row["data"], content_type=row["mime"])

    def control_call(self, request: Request) -> Response:
        name = request.path[len("/_sandbox/") :].strip("/")
        try:
            data: dict[str, Any] = {}
            raw = request.get_data(cache=True)
            if raw:
                data = decode_json(raw)
                if not isinstance(data, dict):
                    raise BadRequest("The JSON body must be an object")
            if self.control is None:
                raise NotFound("Control endpoints are not available")
            return self.json(self.control(request.method, name, data))
        except Failure as exc:
            return self.failure(exc)
        except (TypeError, ValueError, OverflowError) as exc:
            return self.failure(BadRequest(f"Bad control request: {exc}"))


__all__ = ["App", "Business", "build_routes"]
