"""The client: one method per operation of the interface, grouped by resource.

>>> import toolkit
>>> client = toolkit.connect()                                       # doctest: +SKIP
>>> result = client.lists.add_batch([1, 2], "subid_black", ["ab12"])  # doctest: +SKIP
>>> result.to_frame()                                                # doctest: +SKIP

Public beside the client: the transport (:class:`Transport`, :class:`Request` and the
:class:`TransportLike` protocol a ``Client(transport=...)`` accepts), :func:`redact`, which
keeps api-keys out of text, and :mod:`toolkit.client.checks`, the checks run before sending
(``checks.item_problems(kind, value)`` for one targeting item).
"""

from . import checks
from .apikey import ApiKey
from .client import Client, ClientOptions, connect, profiles
from .results import BatchResult, parse_message
from .transport import Request, Transport, TransportLike, redact

__all__ = [
    "ApiKey",
    "BatchResult",
    "Client",
    "ClientOptions",
    "Request",
    "Transport",
    "TransportLike",
    "checks",
    "connect",
    "parse_message",
    "profiles",
    "redact",
]
