"""Text as people read it on one line.

>>> single_spaced("  Campaign   not\\n found ")
'Campaign not found'
"""

from __future__ import annotations


def single_spaced(value: object) -> str:
    """``str(value)`` on one line: leading and trailing whitespace gone, every run of
    whitespace inside (spaces, tabs, line breaks) one space.

    >>> single_spaced(ValueError("bad\\n\\tcell  B7"))
    'bad cell B7'
    """
    return " ".join(str(value).split())


__all__ = ["single_spaced"]
