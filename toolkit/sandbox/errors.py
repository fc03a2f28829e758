"""Failures the sandbox answers with, each an HTTP status and the service's ``errorList``.

``Business`` failures answer HTTP 200 with ``status: error``, like the service's own
business errors; the others carry the HTTP status the sandbox chose where the interface is
silent (see docs/sandbox.md).
"""

from __future__ import annotations


class Failure(Exception):
    """An answer of ``{"status": "error", "errorList": [...]}`` with an HTTP status."""

    http_status = 200

    def __init__(self, *messages: str) -> None:
        super().__init__("; ".join(messages))
        self.messages = list(messages)


class Business(Failure):
    """A business error: HTTP 200, ``status: error``; nothing was changed."""


class BadRequest(Failure):
    """A malformed body, an unreadable encoding or a parameter of the wrong type."""

    http_status = 400


class Unauthorized(Failure):
    http_status = 401


class NotFound(Failure):
    http_status = 404


class MethodNotAllowed(Failure):
    http_status = 405


class PayloadTooLarge(Failure):
    http_status = 413
