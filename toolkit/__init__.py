"""campaign-toolkit: manage push, popunder, in-page and video ad campaigns in bulk.

>>> import toolkit
>>> client = toolkit.connect()    # no key configured: the built-in sandbox   # doctest: +SKIP

The local sandbox of the service is :class:`toolkit.sandbox.Sandbox`.
"""

from .client import BatchResult, Client, connect
from .errors import (
    ApiError,
    AuthError,
    ConfigError,
    NotFoundError,
    RateLimitError,
    ToolkitError,
    TransportError,
    ValidationError,
)

__version__ = "0.1.0"
__all__ = [
    "ApiError",
    "AuthError",
    "BatchResult",
    "Client",
    "ConfigError",
    "NotFoundError",
    "RateLimitError",
    "ToolkitError",
    "TransportError",
    "ValidationError",
    "__version__",
    "connect",
]
