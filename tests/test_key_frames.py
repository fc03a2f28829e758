"""No frame holds the api-key while an error propagates, and the key never follows a redirect.

A gateway that echoes the request URL in its error body (the sandbox's ``echo`` fault) puts the
key into the answer; ``requests`` keeps the URL with the key on its ``Response``. Every error
path is raised against the real sandbox and every frame of its traceback (and every toolkit
frame above it) is searched: each local, recursively through plain containers and the
attributes of the toolkit's own objects, and the ``repr`` of each. ``pytest --showlocals`` on a
failing call, in a child process, must not print the key either.

A redirect to another host (a 307 that keeps the query string) is refused, the other server is
never called; a redirect on the same host is followed, a bounded number of times.

The keys live in the module-level ``KEYS`` so that no test frame holds one as a local.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import types
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit import ApiError, AuthError, MalformedAnswerError, RateLimitError, TransportError
from toolkit.bulk import Journal, make_plan
from toolkit.client import Request
from toolkit.client.redaction import FILTER
from toolkit.sandbox import Sandbox

from .test_key_leak import RawServer, linked

FAST = {"backoff": 0.01, "max_backoff": 0.02}
KEYS: dict[str, str] = {"wrong": "0badc0de" * 4}
BALANCE = "/api/campaign/balance"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, seed=5) as sandbox:
        KEYS["real"] = sandbox.api_keys[0]
        yield sandbox


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.stop()


def client(sb: Sandbox, key: str = "real", **options: Any) -> toolkit.Client:
    return toolkit.connect(api_key=KEYS[key], base_url=sb.url, **{**FAST, **options})


# --------------------------------------------------------------------------- the search


PLAIN = (dict, list, tuple, set, frozenset)


def _holds_key(value: Any, seen: set[int], depth: int = 0) -> str | None:
    """Where in ``value`` a key shows (``repr``, a string, a container's item, an attribute
    of a toolkit object), or None."""
    if id(value) in seen or depth > 8:
        return None
    seen.add(id(value))
    shown = value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else repr(value)
    found = next((name for name, key in KEYS.items() if key in shown), None)
    if found:
        return f"the {found} key in {shown[:120]!r}"
    if isinstance(value, dict):
        children: list[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, PLAIN):
        children = list(value)
    elif type(value).__module__.startswith("toolkit.") and hasattr(value, "__dict__"):
        children = list(vars(value).values())  # a toolkit object: its attributes too
    else:
        return None
    for child in children:
        where = _holds_key(child, seen, depth + 1)
        if where:
            return where
    return None


def leaks_in_frames(frames: list[types.FrameType]) -> list[str]:
    """Each local of ``frames`` that holds a key, as ``function: name: where``."""
    problems = []
    for frame in frames:
        for name, value in frame.f_locals.items():
            where = _holds_key(value, set())
            if where:
                problems.append(f"{frame.f_code.co_name}: {name}: {where}")
    return problems


def traceback_frames(exc: BaseException) -> list[types.FrameType]:
    """Every frame of the tracebacks of ``exc`` and its linked exceptions, and the toolkit's
    frames above the innermost one (the call stack when it was raised)."""
    frames: list[types.FrameType] = []
    for e in linked(exc):
        tb = e.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            last = tb.tb_frame
            tb = tb.tb_next
        caller = last.f_back if e.__traceback__ is not None else None
        while caller is not None:
            if caller.f_globals.get("__name__", "").startswith("toolkit"):
                frames.append(caller)
            caller = caller.f_back
    return frames


def failure(action: Callable[[], Any]) -> BaseException:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - any error is searched
        return exc
    raise AssertionError("the action did not fail")


def assert_no_key(exc: BaseException) -> list[types.FrameType]:
    frames = traceback_frames(exc)
    assert leaks_in_frames(frames) == []
    for e in linked(exc):
        assert _holds_key([str(e), repr(e), vars(e)], set()) is None
    return frames


# --------------------------------------------------------------------------- error paths


def test_no_frame_holds_the_key_on_any_error_path(sb, faults, raw):
    good = client(sb, retries=1, timeout=(1, 0.3))
    rawc = toolkit.connect(api_key=KEYS["real"], base_url=raw.url, retries=0)
    cases: list[tuple[dict[str, Any] | None, Callable[[], Any], type, str]] = [
        ({"body": "echo", "status": 502}, good.account.balance, ApiError, "api-key=***"),
        ({"body": "echo", "status": 503}, good.account.balance, ApiError, "api-key=***"),
        (None, client(sb, "wrong").campaigns.list, AuthError, "Invalid api-key"),
        ({"status": 429, "retry_after": 0}, good.account.balance, RateLimitError, "Too many"),
        ({"hang_s": 1.0, "status": 503}, good.account.balance, TransportError, "read timeout"),
        (None, lambda: rawc.transport.call(Request("probe", "GET", "/drop", {})), TransportError,
         "connection dropped"),
        ({"body": "cut", "after": True}, good.account.balance, MalformedAnswerError, "unreadable"),
    ]  # fmt: skip
    for rule, action, kind, words in cases:
        faults.configure({"rules": [{**rule, "path": BALANCE}] if rule else []})
        exc = failure(action)
        assert type(exc) is kind and words in str(exc), exc
        frames = assert_no_key(exc)
        names = {f.f_code.co_name for f in frames}
        assert {"call", "_send_once"} & names, names  # the transport's frames were searched
    faults.configure({"rules": [{"body": "echo", "path": BALANCE}]})
    echoed = failure(good.account.balance)
    answer = next(f for f in traceback_frames(echoed) if f.f_code.co_name == "_answer")
    assert "Bad gateway: upstream failed on GET http://" in repr(answer.f_locals["body"])
    assert "api-key=***" in answer.f_locals["response"].text  # read, and without the key


def test_no_frame_of_a_bulk_apply_holds_the_key(sb, faults, tmp_path):
    """A transport that searches the whole call stack (bulk apply's frames included) each
    time an error comes out of the real transport, while a plan applies behind an echoing
    gateway."""
    searched: list[list[str]] = []
    apply_frames: list[str] = []

    class Searching:
        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.base_url, self.key_source = inner.base_url, inner.key_source

        def call(self, req: Request) -> Any:
            try:
                return self.inner.call(req)
            except toolkit.ToolkitError as exc:
                frames = traceback_frames(exc)
                here = sys._getframe()
                while here is not None:  # the live callers: client, bulk apply, ...
                    if here.f_globals.get("__name__", "").startswith("toolkit"):
                        frames.append(here)
                        apply_frames.append(here.f_globals["__name__"])
                    here = here.f_back
                searched.append(leaks_in_frames(frames))
                raise

        def url_room(self, path: str) -> int:
            return self.inner.url_room(path)

        def close(self) -> None:
            self.inner.close()

    plain = client(sb, retries=0)
    searching = toolkit.Client(transport=Searching(plain.transport))
    searching.options.backoff = 0.001  # the pause between re-adds of a bid change
    account = toolkit.load_account(plain, progress=False)
    base = {name: account.table(name).copy() for name in ("campaigns", "countries")}
    countries = base["countries"].copy()
    rows = countries.groupby("campaign_id").head(1).index[:2]
    countries.loc[rows, "bid"] = (countries.loc[rows, "bid"] + 0.01).round(4)
    plan = make_plan(plain, {**base, "countries": countries}, base=base)
    searching.account.user_id()  # the account apply checks the plan against, read before faults
    faults.configure({"rules": [{"body": "echo", "status": 502, "path": "/api/campaign/"}]})
    result = plan.apply(searching, progress=False, journal=Journal(tmp_path / "j.db"))
    faults.clear()
    assert searched and all(found == [] for found in searched)
    assert "toolkit.bulk.apply" in apply_frames
    frame = result.to_frame()
    assert set(frame["outcome"]) == {"unknown"}
    assert not frame.astype(str).apply(lambda c: c.str.contains(KEYS["real"])).any().any()
    shown = frame.to_string() + result.summary()
    assert "api-key=***" in shown and KEYS["real"] not in shown


# --------------------------------------------------------------------------- --showlocals


SHOWLOCALS_TEST = """
import toolkit


def test_balance_behind_an_echoing_gateway():
    client = toolkit.connect(retries=0)
    client.account.balance()
"""


def test_pytest_showlocals_does_not_print_the_key(sb, faults, tmp_path):
    (tmp_path / "test_echo.py").write_text(SHOWLOCALS_TEST)
    faults.configure({"rules": [{"body": "echo", "status": 502, "path": BALANCE}]})
    env = {
        **os.environ,
        "CAMPAIGN_API_KEY": KEYS["real"],
        "CAMPAIGN_API_URL": sb.url,
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["--showlocals", "--tb=long", "test_echo.py"]
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out[-2000:]
    assert "Bad gateway: upstream failed on GET" in out and "api-key=***" in out
    assert "response   = <Answer HTTP 502" in out  # the transport's locals were printed
    assert KEYS["real"] not in out


# --------------------------------------------------------------------------- redirects


class Elsewhere:
    """A server on another port of 127.0.0.1 that records every request it gets."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        paths = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"balance": 1}')

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[Elsewhere]:
    server = Elsewhere()
    yield server
    server.stop()


def test_a_redirect_to_another_host_is_refused_and_never_followed(sb, faults, elsewhere):
    c = client(sb, retries=2)
    target = f"{elsewhere.url}/api/campaign/balance"
    faults.configure({"rules": [{"redirect": target}]})
    for action in (c.account.balance, lambda: c.campaigns.create("push", "moved", 1)):
        exc = failure(action)
        assert type(exc) is TransportError, exc
        assert f"redirect (HTTP 307) off {sb.url}" in str(exc) and f"to {target}:" in str(exc)
        assert "?" not in str(exc) and "api-key" in str(exc)
        assert_no_key(exc)
    assert elsewhere.paths == []
    assert sb.stats()[f"GET {BALANCE} 307"] == 1  # refused at once, not retried


def test_a_redirect_on_the_same_host_is_followed_a_bounded_number_of_times(sb, faults):
    c = client(sb, retries=0)
    keys_sent: list[int] = []  # how many api-key parameters each request carried
    c.transport.session.hooks["response"].append(
        lambda r, **_: keys_sent.append(r.request.url.count("api-key="))
    )
    sb.app.stats.clear()
    faults.configure({"rules": [{"redirect": BALANCE, "count": 1}]})
    assert c.account.balance()["currency"]
    faults.configure({"rules": [{"redirect": f"{sb.url}/api/campaign/balance", "count": 2}]})
    assert c.account.balance()["currency"]
    assert sb.stats()[f"GET {BALANCE} 307"] == 3
    assert keys_sent == [1] * 5  # the key of the Location is dropped, the key added once
    faults.configure({"rules": [{"redirect": BALANCE}]})  # a loop
    exc = failure(c.account.balance)
    assert type(exc) is TransportError and "more than 5 redirects" in str(exc), exc
    assert sb.stats()[f"GET {BALANCE} 307"] == 3 + 6
    assert_no_key(exc)


# --------------------------------------------------------------------------- logs


def test_urllib3_debug_lines_show_the_path_without_the_key(sb, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("toolkit", "urllib3"):
        caplog.set_level(logging.DEBUG, logger=name)
    with client(sb) as c:
        c.account.balance()
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("urllib3")]
    assert any(f'"GET {BALANCE}?api-key=*** HTTP/1.1" 200' in line for line in lines), lines
    assert KEYS["real"] not in caplog.text
    assert any(f"GET {BALANCE} -> 200" in r.getMessage() for r in caplog.records)


def test_the_urllib3_logger_redacts_even_without_the_record_factory(caplog):
    """The filter on the ``urllib3`` logger is the second line: it redacts a record made by
    another record factory (one installed later by someone else)."""
    assert FILTER in logging.getLogger("urllib3").filters
    caplog.set_level(logging.DEBUG, logger="urllib3")
    previous = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    try:
        logging.getLogger("urllib3").debug("GET /x?api-key=%s&id=1", KEYS["wrong"])
    finally:
        logging.setLogRecordFactory(previous)
    assert [r.getMessage() for r in caplog.records] == ["GET /x?api-key=***&id=1"]
    assert KEYS["wrong"] not in caplog.text
