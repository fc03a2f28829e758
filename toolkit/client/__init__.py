"""The client: one method per operation of the interface, grouped by resource.

>>> import toolkit
>>> client = toolkit.connect()                                       # doctest: +SKIP
>>> result = client.lists.add_batch([1, 2], "subid_black", ["ab12"])  # doctest: +SKIP
>>> result.to_frame()                                                # doctest: +SKIP
"""

from .apikey import ApiKey
from .client import Client, ClientOptions, connect
from .results import BatchResult, parse_message

__all__ = ["ApiKey", "BatchResult", "Client", "ClientOptions", "connect", "parse_message"]
