"""Country keys of tracker exports as ISO 3166-1 alpha-2 codes, the codes a campaign's country
bids carry: trackers write ``US``, ``us``, ``USA`` or ``United States``.

>>> country_codes(["us", "USA", "United States", "Russia", "Atlantis"])
['US', 'US', 'US', 'RU', 'Atlantis']

Workbooks and forms refuse a code the service does not take, and say what it probably meant
(:func:`code_problem`): a spelling the reader accepts, an alpha-3 code, a name, or a one-letter
typo of one code or name only. A text that could mean two countries suggests neither.

>>> print(code_problem("UK", "country"))
"UK" is not a country code; did you mean GB?
>>> print(code_problem("Korea", "country"))
"Korea" is not a country code; it could be KR or KP: write the one you mean
>>> suggest_language("English"), suggest_language("EN"), suggest_language("jp")
('en', 'en', 'ja')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..text import single_spaced

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
    "holland": "NL",
    "deutschland": "DE",
    "uae": "AE",
    "dr congo": "CD",
    "drc": "CD",
}

#: Names that mean two or more countries: never read as one (a wrong country is worse than
#: none), and the suggestion lists each.
AMBIGUOUS: dict[str, tuple[str, ...]] = {
    "congo": ("CG", "CD"),
    "korea": ("KR", "KP"),
    "virgin islands": ("VG", "VI"),
}

#: Spellings of languages that are no ISO 639-1 code: country codes written for a language
#: (``jp``, ``cn``), withdrawn codes (``iw``) and common names ISO spells otherwise.
LANGUAGE_ALIASES: dict[str, str] = {
    "jp": "ja",
    "cn": "zh",
    "ua": "uk",
    "gr": "el",
    "cz": "cs",
    "dk": "da",
    "vn": "vi",
    "il": "he",
    "kz": "kk",
    "rs": "sr",
    "iw": "he",
    "in": "id",
    "ji": "yi",
    "greek": "el",
    "farsi": "fa",
    "castilian": "es",
    "mandarin": "zh",
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


# --------------------------------------------------------------------------- suggestions


@lru_cache(maxsize=1)
def _country_codes() -> frozenset[str]:
    import pycountry

    return frozenset(str(c.alpha_2) for c in pycountry.countries)


@lru_cache(maxsize=1)
def _language_codes() -> frozenset[str]:
    """The language codes the service takes (its ``language_code`` dictionary: ISO 639-1)."""
    import pycountry

    return frozenset(str(lang.alpha_2) for lang in pycountry.languages if hasattr(lang, "alpha_2"))


@lru_cache(maxsize=1)
def _country_names() -> tuple[tuple[str, str], ...]:
    """(lower-case name or alpha-3 code, alpha-2 code) of every country, for typos."""
    import pycountry

    out = [(k, v) for k, v in ALIASES.items()]
    for c in pycountry.countries:
        for attr in ("alpha_3", "name", "official_name", "common_name"):
            if hasattr(c, attr):
                out.append((str(getattr(c, attr)).lower(), str(c.alpha_2)))
    return tuple(out)


@lru_cache(maxsize=1)
def _language_names() -> tuple[tuple[str, str], ...]:
    """(lower-case name or alpha-3 code, ISO 639-1 code) of every language with one."""
    import pycountry

    out = [(k, v) for k, v in LANGUAGE_ALIASES.items() if len(k) > 2]
    for lang in pycountry.languages:
        if not hasattr(lang, "alpha_2"):
            continue
        for attr in ("alpha_3", "bibliographic", "name", "common_name"):
            if hasattr(lang, attr):
                out.append((str(getattr(lang, attr)).lower(), str(lang.alpha_2)))
    return tuple(out)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with one letter changed, added, dropped, or two swapped.

    >>> _one_edit("germny", "germany"), _one_edit("frnace", "france"), _one_edit("ab", "ab")
    (True, True, False)
    """
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        return len(diff) == 1 or (swapped and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    pairs = zip(short, long[: len(short)], strict=True)
    i = next((i for i, (x, y) in enumerate(pairs) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def _typos(key: str, codes: frozenset[str], names: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The one code a one-letter typo of ``key`` names, or nothing when none or several do:
    short keys are compared with codes of their length, longer ones with names."""
    low = key.lower()
    if len(low) < 2 or not low.replace(" ", "").isalpha():
        return ()
    if len(low) == 2:
        pool = [(c.lower(), c) for c in codes]
    else:
        pool = [(n, c) for n, c in names if (len(n) == 3) == (len(low) == 3)]
    found = {code for name, code in pool if code in codes and _one_edit(low, name)}
    return (found.pop(),) if len(found) == 1 else ()


@lru_cache(maxsize=4096)
def _country_candidates(text: str) -> tuple[str, ...]:
    """The alpha-2 codes ``text`` may mean (one when it is clear; several when it could mean
    each; none when nothing fits)."""
    import pycountry

    key = single_spaced(text)
    if key.upper() in _country_codes():
        return (key.upper(),)
    for spelling in dict.fromkeys((key, key.replace(".", ""))):
        low = spelling.lower()
        if low in AMBIGUOUS:
            return AMBIGUOUS[low]
        if low in ALIASES and ALIASES[low] in _country_codes():  # not Kosovo's XK: no ISO code
            return (ALIASES[low],)
        if spelling.isalpha() or " " in spelling:  # no numeric codes: a number is a mistake
            try:
                return (str(pycountry.countries.lookup(spelling).alpha_2),)
            except LookupError:
                pass
    return _typos(key, _country_codes(), _country_names())


@lru_cache(maxsize=4096)
def _language_candidates(text: str) -> tuple[str, ...]:
    """The ISO 639-1 codes ``text`` may mean (see :func:`_country_candidates`)."""
    import pycountry

    key = single_spaced(text)
    low = key.lower()
    if low in _language_codes():
        return (low,)
    if low in LANGUAGE_ALIASES:
        return (LANGUAGE_ALIASES[low],)
    if len(low) > 2 and low.replace(" ", "").isalpha():
        try:
            code = getattr(pycountry.languages.lookup(key), "alpha_2", None)
        except LookupError:
            code = None
        if code in _language_codes():
            return (str(code),)
    return _typos(key, _language_codes(), _language_names())


@dataclass(frozen=True)
class _Vocabulary:
    """The codes of one kind of item: their name (the kind's), the standard, the codes."""

    name: str
    standard: str
    codes: Callable[[], frozenset[str]]
    candidates: Callable[[str], tuple[str, ...]]
    upper: bool


def _vocabularies() -> tuple[_Vocabulary, _Vocabulary]:
    """The country codes (the kind that carries bids) and the language codes (the kind sent
    as codes), named as :mod:`toolkit.spec` names their kinds."""
    from .. import spec

    countries = spec.bid_kind().name
    languages = next(k.name for k in spec.BASE_KINDS if k.sent_as_code)
    return (
        _Vocabulary(
            countries, "ISO 3166-1 alpha-2 code (like US)", _country_codes,
            _country_candidates, True,
        ),
        _Vocabulary(
            languages, "ISO 639-1 code (like en)", _language_codes, _language_candidates, False
        ),
    )  # fmt: skip


def _vocabulary(kind: str) -> _Vocabulary:
    """The vocabulary of ``kind`` (``country`` or ``language``)."""
    found = [v for v in _vocabularies() if v.name == str(kind).strip().lower()]
    if not found:
        names = " or ".join(repr(v.name) for v in _vocabularies())
        raise ValueError(f"kind is {names}, not {kind!r}")
    return found[0]


def suggest_country(text: str) -> str | None:
    """The ISO 3166-1 alpha-2 code ``text`` probably means, or None when nothing fits or it
    could mean two countries. A code returns itself (upper-cased: ``us`` -> ``US``).

    >>> [suggest_country(t) for t in ["UK", "usa", " uk ", "United States", "DEU", "Germny"]]
    ['GB', 'US', 'GB', 'US', 'DE', 'DE']
    >>> suggest_country("Congo"), suggest_country("Atlantis")
    (None, None)
    """
    found = _country_candidates(str(text))
    return found[0] if len(found) == 1 else None


def suggest_language(text: str) -> str | None:
    """The ISO 639-1 code (the service's ``language_code``) ``text`` probably means, or None.

    >>> [suggest_language(t) for t in ["english", "EN", "eng", "ger", "Japanese", "farsi"]]
    ['en', 'en', 'en', 'de', 'ja', 'fa']
    """
    found = _language_candidates(str(text))
    return found[0] if len(found) == 1 else None


def code_advice(text: str, kind: str) -> str:
    """What is wrong with ``text`` as a code of ``kind`` (``country`` or ``language``), in
    words that do not repeat it (for messages that show the value beside); ``""`` when it is
    a code exactly as the service takes it.

    >>> code_advice("usa", "country"), code_advice("US", "country")
    ('not a country code; did you mean US?', '')
    """
    vocabulary = _vocabulary(kind)
    found = vocabulary.candidates(str(text))
    name = vocabulary.name
    if found == (str(text),):
        return ""
    if len(found) == 1:
        return f"not a {name} code; did you mean {found[0]}?"
    if found:
        return f"not a {name} code; it could be {' or '.join(found)}: write the one you mean"
    other = next(v for v in _vocabularies() if v.name != name)
    code = canonical_code(str(text), other.name)
    hint = f" ({code} is a {other.name} code)" if code else ""
    return f"not a {name} code{hint}; write its {vocabulary.standard}"


def code_problem(text: str, kind: str) -> str:
    """One line on ``text`` as a code of ``kind`` (``country`` or ``language``): what it
    probably meant, or what to write; ``""`` when it is a code as the service takes it.

    >>> code_problem("english", "language")
    '"english" is not a language code; did you mean en?'
    >>> code_problem("Atlantis", "country")
    '"Atlantis" is not a country code; write its ISO 3166-1 alpha-2 code (like US)'
    """
    advice = code_advice(text, kind)
    return f'"{text}" is {advice}' if advice else ""


def canonical_code(text: str, kind: str) -> str | None:
    """The code ``text`` is, written as the service takes it, when it differs only in case
    and surrounding spaces (``us`` -> ``US``, ``EN`` -> ``en``); None for anything else.

    >>> canonical_code(" us", "country"), canonical_code("EN", "language")
    ('US', 'en')
    >>> canonical_code("UK", "country") is None
    True
    """
    vocabulary = _vocabulary(kind)
    key = str(text).strip()
    code = key.upper() if vocabulary.upper else key.lower()
    return code if code in vocabulary.codes() else None


__all__ = [
    "ALIASES",
    "AMBIGUOUS",
    "LANGUAGE_ALIASES",
    "canonical_code",
    "code_advice",
    "code_problem",
    "country_code",
    "country_codes",
    "suggest_country",
    "suggest_language",
]
