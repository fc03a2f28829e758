"""A faithful local Campaign Management service: :class:`Sandbox`.

It answers every operation of the interface over real HTTP on 127.0.0.1, keeps state in
SQLite, seeds deterministic demo accounts, and injects faults for tests and benchmarks.
It imports :mod:`toolkit.spec` and nothing else of the toolkit.
"""

from .server import DEFAULT_SEED, Sandbox

__all__ = ["DEFAULT_SEED", "Sandbox"]
