"""Country keys of tracker exports as ISO 3166-1 alpha-2 codes, the codes a campaign's country
bids carry: trackers write ``US``, ``us``, ``USA`` or ``United States``.

>>> country_codes(["us", "USA", "United States", "Russia", "Atlantis"])
['US', 'US', 'US', 'RU', 'Atlantis']
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

#: Common names that ISO 3166 spells otherwise (``Russian Federation``...).
ALIASES: dict[str, str] = {
    "russia": "RU",
    "uk": "GB",
    "great britain": "GB",
    "england": "GB",
    "turkey": "TR",
    "ivory coast": "CI",
    "macedonia": "MK",
    "laos": "LA",
    "syria": "SY",
    "moldova": "MD",
    "venezuela": "VE",
    "vatican": "VA",
    "palestine": "PS",
    "north korea": "KP",
    "czech republic": "CZ",
    "kosovo": "XK",
}


@lru_cache(maxsize=4096)
def country_code(text: str) -> str:
    """The alpha-2 code of a country key, or the key as given when it names no country."""
    import pycountry

    key = str(text).strip()
    alias = ALIASES.get(key.lower())
    if alias:
        return alias
    try:
        return str(pycountry.countries.lookup(key).alpha_2)
    except LookupError:
        return key


def country_codes(keys: Iterable[str]) -> list[str]:
    """:func:`country_code` of each key."""
    return [country_code(k) for k in keys]


__all__ = ["ALIASES", "country_code", "country_codes"]
