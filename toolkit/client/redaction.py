"""Keeping the api-key out of text and log records.

:func:`redact` removes ``api-key=...`` parameters (and the other spellings a key takes in
URLs, JSON, dict reprs and TOML) and every live :class:`~toolkit.client.apikey.ApiKey` word
for word.

Log records of the ``toolkit``, ``urllib3`` and ``requests`` loggers (and their children, also
ones created later) are scrubbed when they are created: the message is rendered with its
arguments and redacted, and an attached exception becomes redacted text (``exc_text``) instead
of a live traceback, whose frames' locals hold the request URL. This is done by a wrapper
around the process's log record factory (the previous factory is still called), and by a
filter on those loggers as a second line.
"""

from __future__ import annotations

import logging
import re
import traceback
from typing import Any

from .apikey import ApiKey, live_keys

WATCHED_LOGGERS = ("toolkit", "urllib3", "requests")

_KEY_IN_TEXT = re.compile(
    r"""(api[-_]?key(?:\s*=\s*['"]?|%3D|['"]\s*:\s*['"]?))[^&\s"',;)}\]]+""",
    re.IGNORECASE,
)


def redact(text: str, key: str | ApiKey | None = None) -> str:
    """``text`` without an api-key: ``api-key=...`` values, ``key`` and every live key.

    >>> redact("GET /api/campaign/list?api-key=abc123&id=1")
    'GET /api/campaign/list?api-key=***&id=1'
    >>> redact('{"api-key": "abc123"}'), redact("Missing api-key: pass the key")
    ('{"api-key": "***"}', 'Missing api-key: pass the key')
    """
    text = _KEY_IN_TEXT.sub(r"\1***", text)
    if isinstance(key, ApiKey):
        text = key.redact(text)
    elif key:
        text = text.replace(key, "***")
    for live in live_keys():
        text = live.redact(text)
    return text


def _watched(name: str) -> bool:
    return any(name == w or name.startswith(w + ".") for w in WATCHED_LOGGERS)


def scrub_record(record: logging.LogRecord) -> None:
    """Redact one record in place (idempotent): message with arguments, exception, stack."""
    if getattr(record, "_key_scrubbed", False):
        return
    try:
        message = record.getMessage()
    except Exception:  # a malformed record: keep what can be shown
        message = f"{record.msg} {record.args!r}"
    record.msg = redact(message)
    record.args = ()
    if record.exc_info:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text = redact(text)
        record.exc_info = None
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    record._key_scrubbed = True


class RedactFilter(logging.Filter):
    """Scrubs every record of the logger it is attached to; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        scrub_record(record)
        return True


class _Factory:
    """Wraps the log record factory: records of the watched loggers are scrubbed at birth."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.previous(*args, **kwargs)
        if _watched(record.name):
            scrub_record(record)
        return record


FILTER = RedactFilter()


def install() -> None:
    """Install the factory wrapper (once) and the filter on the watched loggers that exist."""
    if not isinstance(logging.getLogRecordFactory(), _Factory):
        logging.setLogRecordFactory(_Factory(logging.getLogRecordFactory()))
    names = [n for n in list(logging.root.manager.loggerDict) if _watched(n)]
    for name in {*names, *WATCHED_LOGGERS}:
        logger = logging.getLogger(name)
        if FILTER not in logger.filters:
            logger.addFilter(FILTER)
