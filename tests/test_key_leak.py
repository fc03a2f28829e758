"""The api-key never leaks: not in tracebacks printed with every frame's locals (as error
trackers and ``pytest --showlocals`` do), following every ``__cause__`` and ``__context__``
(even suppressed ones); not in log records of ``toolkit``, ``urllib3`` and ``requests`` at
DEBUG; not in a pickle.

Every error path runs over real HTTP: the sandbox with its fault injection for 5xx, 429, hangs,
401 and 404; a closed port for a refused connection; and, for what the sandbox cannot answer
(a dropped connection, a body that is not JSON, headers urllib3 cannot parse, an HTML error
page that echoes the URL), a small raw HTTP server on a loopback port.

The keys live in the module-level ``KEYS`` so that no test frame holds one as a local: a
traceback shows the locals of the caller's frames too.
"""

from __future__ import annotations

import copy
import logging
import pickle
import signal
import socket
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import toolkit
from toolkit import (
    ApiError,
    AuthError,
    ConfigError,
    MalformedAnswerError,
    NotFoundError,
    RateLimitError,
    TransportError,
    ValidationError,
)
from toolkit.client import Request
from toolkit.client.apikey import ApiKey
from toolkit.sandbox import Sandbox

FAST = {"backoff": 0.01, "max_backoff": 0.02}
#: name -> key; filled by the fixtures. Referenced as a global, never bound to a local.
KEYS: dict[str, str] = {"fake": "5ec12e7a11ce0b0e5ec12e7a11ce0b0e", "wrong": "feedface" * 4}
LOGGERS = ("toolkit", "urllib3", "requests")


# --------------------------------------------------------------------------- servers


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=3, accounts=2) as sandbox:
        KEYS["real"] = sandbox.api_keys[0]
        KEYS["theirs"] = sandbox.api_keys[1]
        yield sandbox


@pytest.fixture()
def faults(sb: Sandbox) -> Iterator[Any]:
    try:
        yield sb.faults
    finally:
        sb.faults.clear()


class RawServer:
    """Answers by path: ``/bad-json`` (200, unparsable header, body not JSON), ``/html-error``
    (500 HTML page echoing the request line, URL and key included), ``/drop`` (closes
    without answering)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                while b"\r\n\r\n" not in data and len(data) < 1 << 20:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                line = data.split(b"\r\n", 1)[0]
                if b" /drop" in line:
                    continue
                if b" /html-error" in line:
                    body = b"<html><body>Bad request: " + line + b"</body></html>"
                    head = b"HTTP/1.1 500 Oops\r\nContent-Type: text/html\r\n"
                else:
                    body = b"not json: " + line
                    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nBroken header line\r\n"
                head += b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
                conn.sendall(head + body)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.stop()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


# --------------------------------------------------------------------------- checks


def failure(action: Callable[[], Any]) -> BaseException:
    """The exception ``action`` raises, with its traceback."""
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - any error is examined
        return exc
    raise AssertionError("the action did not fail")


def linked(exc: BaseException) -> Iterator[BaseException]:
    """The exception and every exception reachable as cause or context (suppressed too)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]


def everything_shown(exc: BaseException) -> str:
    """All an error tracker could show: each linked exception formatted with every frame's
    locals, its str, repr and attributes."""
    parts = []
    for e in linked(exc):
        te = traceback.TracebackException(type(e), e, e.__traceback__, capture_locals=True)
        parts += ["".join(te.format()), str(e), repr(e), repr(vars(e))]
    return "\n".join(parts)


def assert_never_shown(text: str, *names: str) -> None:
    for name in names or tuple(KEYS):
        assert KEYS[name] not in text, f"the {name} key leaks"


def assert_logs_clean(caplog: pytest.LogCaptureFixture) -> None:
    assert caplog.records, "nothing was logged: the check would be empty"
    assert_never_shown(caplog.text)
    for record in caplog.records:
        assert_never_shown(record.getMessage())
        assert_never_shown(repr(record.args))
        if record.exc_info:  # what a tracker reading the record would capture
            assert_never_shown(everything_shown(record.exc_info[1]))


@pytest.fixture()
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def client(url: str, key: str = "real", **options: Any) -> toolkit.Client:
    return toolkit.connect(api_key=KEYS[key], base_url=url, **{**FAST, **options})


def probe(c: toolkit.Client, path: str, **params: Any) -> Callable[[], Any]:
    return lambda: c.transport.call(Request("probe", "GET", path, params))


# --------------------------------------------------------------------------- every error path


def test_no_error_path_leaks_the_key(sb, faults, raw, debug_logs):
    good = client(sb.url, retries=1, timeout=(1, 0.3))
    wrong = client(sb.url, "wrong")
    theirs = client(sb.url, "theirs").campaigns.list()[0]["id"]
    refused = client(closed_port_url(), "fake", retries=1)
    rawc = client(raw.url, "fake", retries=1)
    faults.configure(
        {
            "rules": [
                {"status": 503, "count": 2, "path": "/api/campaign/balance"},
                {
                    "status": 429,
                    "count": 2,
                    "path": "/api/campaign/list-refs-data",
                    "retry_after": 0,
                },
                {"hang_s": 1.0, "status": 503, "count": 2, "path": "/api/campaign/search"},
            ]
        }
    )
    cases: list[tuple[type[BaseException], Callable[[], Any], str]] = [
        (TransportError, refused.campaigns.list, "connection refused"),
        (TransportError, lambda: refused.lists.add(1, "subid_black", ["ab"] * 900), "refused"),
        (TransportError, lambda: good.account.search("city", "par"), "read timeout"),
        (TransportError, probe(rawc, "/drop"), "connection dropped"),
        (ApiError, good.account.balance, "unavailable"),
        (RateLimitError, lambda: good.account.dictionary("os"), ""),
        (AuthError, wrong.campaigns.list, "Invalid api-key"),
        (NotFoundError, lambda: good.campaigns.get(theirs), "Campaign not found"),
        (NotFoundError, probe(good, "/api/campaign/nothing"), "Unknown operation"),
        (MalformedAnswerError, probe(rawc, "/bad-json"), "unreadable answer"),
        (ApiError, probe(rawc, "/html-error"), "text/html"),
        (ValidationError, lambda: good.targeting.add(theirs, "country", {"XX": 1}), "XX"),
        (ValidationError, probe(good, "/api/campaign/list", name="x" * 5000), "limit 4096"),
    ]
    for kind, action, words in cases:
        exc = failure(action)
        assert type(exc) is kind, (kind, exc)
        assert words in str(exc)
        assert_never_shown(everything_shown(exc))
    assert "Failed to parse headers" in debug_logs.text  # urllib3's warning, redacted
    assert "api-key=***" in debug_logs.text
    assert_logs_clean(debug_logs)
    for c in (good, wrong, refused, rawc):
        c.close()


def test_connect_errors_do_not_show_the_key(sb, monkeypatch, tmp_path, debug_logs):
    monkeypatch.delenv("CAMPAIGN_API_URL", raising=False)
    monkeypatch.delenv("CAMPAIGN_API_KEY", raising=False)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    spaced = "a" * 16 + " " + "b" * 16
    KEYS["spaced"] = spaced
    cases = [
        (lambda: toolkit.connect(api_key=KEYS["fake"]), "no base URL"),
        (lambda: toolkit.connect(api_key=KEYS["spaced"], base_url=sb.url), "holds a space"),
        (lambda: toolkit.Client(sb.url, KEYS["spaced"]), "holds a space"),
        (lambda: toolkit.connect(api_key=KEYS["real"], base_url=sb.url, colour=1), "colour"),
    ]
    for action, words in cases:
        exc = failure(action)
        assert isinstance(exc, ConfigError) and words in str(exc), exc
        assert_never_shown(everything_shown(exc))
    config = tmp_path / "config.toml"
    config.write_text(f'[default]\napi_key = "{KEYS["fake"]}"\nbase_url = [1, \n')
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(config))
    exc = failure(toolkit.connect)
    assert isinstance(exc, ConfigError) and "not valid TOML" in str(exc)
    assert_never_shown(everything_shown(exc))
    config.write_text(f'[default]\napi_key = "{KEYS["fake"]}"\n')
    exc = failure(toolkit.connect)
    assert isinstance(exc, ConfigError) and str(config) in str(exc)
    assert_never_shown(everything_shown(exc))
    with client(sb.url) as c:
        c.account.balance()
    assert_logs_clean(debug_logs)


def test_urllib3_records_are_redacted_even_for_loggers_created_later(debug_logs):
    late = logging.getLogger("urllib3.contrib.some_module_imported_later")
    late.warning("GET %s", f"/api/campaign/list?api-key={KEYS['fake']}&id=1")
    late.debug("Failed to parse headers (url=%s)", f"http://h/x?api-key={KEYS['fake']}")
    try:
        raise ValueError(f"http://h/x?api-key={KEYS['fake']}")
    except ValueError:
        logging.getLogger("requests.adapters").debug("failed", exc_info=True)
    assert [r.getMessage() for r in debug_logs.records] == [
        "GET /api/campaign/list?api-key=***&id=1",
        "Failed to parse headers (url=http://h/x?api-key=***)",
        "failed",
    ]
    assert "ValueError: http://h/x?api-key=***" in debug_logs.text
    assert_logs_clean(debug_logs)


# --------------------------------------------------------------------------- the key object


def test_api_key_never_shows_its_value():
    key = ApiKey(KEYS["fake"], "the environment variable CAMPAIGN_API_KEY")
    percent = "%s %r" % (key, key)  # noqa: UP031 - the old formatting too
    shown = [repr(key), str(key), f"{key}", f"{key!r:>40}", percent, repr([key])]
    assert_never_shown("\n".join(shown))
    assert repr(key) == "ApiKey(***, from the environment variable CAMPAIGN_API_KEY)"
    assert key.reveal() == KEYS["fake"]
    assert copy.deepcopy({"k": key})["k"] is key
    assert len(key.fingerprint) == 8 and key.fingerprint in key.describe()
    assert "32 characters" in key.describe()
    assert ApiKey(f"  {KEYS['fake']}\n").reveal() == KEYS["fake"]
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match="not pickled"):
            pickle.dumps(key, protocol)


def test_a_client_is_refused_by_pickle(sb):
    with client(sb.url) as c:
        for obj in (c, c.transport, {"client": c}, [c.campaigns]):
            for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):
                exc = failure(lambda obj=obj, protocol=protocol: pickle.dumps(obj, protocol))
                assert isinstance(exc, TypeError) and "toolkit.connect()" in str(exc)
                assert_never_shown(everything_shown(exc))
        assert c.account.balance()["currency"]  # still usable


def test_an_interrupted_request_does_not_carry_the_key(sb, faults):
    """Ctrl-C while a request waits: the KeyboardInterrupt's traceback (shown with locals by
    ``%xmode Verbose`` in a notebook) holds no frame of urllib3 whose locals hold the URL."""
    # the answer hangs far longer than the 0.3 s before the interrupt, so that a loaded
    # machine still interrupts the request while it waits
    faults.configure({"rules": [{"hang_s": 8, "status": 503, "count": 1}]})
    main = threading.main_thread().ident
    timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
    # Ctrl-C as Python answers it, whatever handler an earlier test (a kernel, a server)
    # left installed in this process
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with client(sb.url, retries=0, timeout=(1, 12)) as c:
            timer.start()
            try:
                c.account.balance()
            except KeyboardInterrupt as exc:
                interrupted: BaseException | None = exc
            else:
                interrupted = None
            finally:
                timer.cancel()  # no Ctrl-C left to land in a later test
                timer.join()
    finally:
        signal.signal(signal.SIGINT, handler)
    assert isinstance(interrupted, KeyboardInterrupt)
    assert_never_shown(everything_shown(interrupted))
