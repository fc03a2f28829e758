"""campaign-toolkit: manage push, popunder, in-page and video ad campaigns in bulk.

The local sandbox of the service is :class:`toolkit.sandbox.Sandbox`.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
