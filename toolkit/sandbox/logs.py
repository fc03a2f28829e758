"""The sandbox's log records carry no api-key, whether or not the client is loaded.

A process that loads the client scrubs every ``toolkit`` record (see
:mod:`toolkit.client.redaction`); a sandbox started on its own (``campaign-toolkit sandbox``)
never imports the client, so it scrubs its own records: ``api-key`` parameters in every
spelling (query, JSON, dict repr) and the keys of its accounts word for word, in the message
and in an attached traceback.

>>> remember(["3f9c0a"])
>>> scrub("cannot serve /api/campaign/list?api-key=3f9c0a&id=1; key 3f9c0a")
'cannot serve /api/campaign/list?api-key=***&id=1; key ***'
>>> scrub("{'api-key': 'abc'}")
"{'api-key': '***'}"
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from collections.abc import Iterable

#: The loggers whose records the sandbox scrubs (its own, its HTTP server's, waitress's).
LOGGERS: tuple[str, ...] = ("toolkit.sandbox", "toolkit.sandbox.http", "waitress")

KEY_IN_TEXT = re.compile(
    r"""(api[-_]?key(?:\s*=\s*['"]?|%3D|['"]\s*:\s*['"]?))[^&\s"',;)}\]]+""",
    re.IGNORECASE,
)
_known: set[str] = set()
_lock = threading.Lock()


def remember(keys: Iterable[str]) -> None:
    """Add the keys of a sandbox's accounts to those scrubbed word for word."""
    with _lock:
        _known.update(k for k in keys if k)


def scrub(text: str) -> str:
    """``text`` with every api-key parameter blanked and every known key replaced."""
    text = KEY_IN_TEXT.sub(r"\1***", text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for key in known:
        if key in text:
            text = text.replace(key, "***")
    return text


class ScrubFilter(logging.Filter):
    """Scrubs each record of the logger it is attached to (message, arguments, traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: keep what can be shown
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = scrub(message), ()
        if record.exc_info:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            record.exc_text, record.exc_info = scrub(text), None
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True


FILTER = ScrubFilter()


def install() -> None:
    """Attach the filter to the sandbox's loggers (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if FILTER not in logger.filters:
            logger.addFilter(FILTER)
