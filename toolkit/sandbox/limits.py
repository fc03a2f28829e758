"""The sandbox's bounds on what one request may hold; beyond them it answers a clear error.

See the limits table in docs/sandbox.md.
"""

from __future__ import annotations

MAX_BODY = 16 * 1024 * 1024
"""Bytes of a request body (creative uploads included): HTTP 413 beyond."""

MAX_REQUEST_LINE = 64 * 1024
"""Bytes of the request line (method, path and query string): HTTP 414 beyond."""

MAX_HEADERS = 128 * 1024
"""Bytes of the request line and headers together: HTTP 431 beyond."""

MAX_PARAMS = 100_000
"""Parameters (``name=value`` pairs) of a query string or form body: HTTP 400 beyond."""

MAX_DEPTH = 32
"""Levels of nesting of a parameter (``a[b][c]`` is 3; a JSON body counts its objects and
arrays): HTTP 400 beyond."""

MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
"""Integer parameters are 64-bit signed integers, as the store keeps them: HTTP 400 beyond."""
