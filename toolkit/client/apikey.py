"""The api-key: one small object that never shows its value, and says where it came from.

The raw key is revealed only by :meth:`ApiKey.reveal`, which the transport calls while
``requests`` prepares a request. Its ``repr``, ``str`` and ``format`` show ``***``; it refuses
to be pickled (a pickle would carry the key to wherever the bytes go). Building one never
raises, so that a bad key is reported by :meth:`ApiKey.check` only once the caller's raw
string is no longer a local variable of a frame that could end up in a traceback.

>>> key = ApiKey("0123456789abcdef", "the environment variable CAMPAIGN_API_KEY")
>>> key, str(key), f"{key:>8}"
(ApiKey(***, from the environment variable CAMPAIGN_API_KEY), '***', '***')
>>> key.describe()
'the environment variable CAMPAIGN_API_KEY (16 characters, fingerprint 9f9f5111)'
"""

from __future__ import annotations

import getpass
import hashlib
import sys
import threading
import weakref
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote, quote_plus

from ..errors import ConfigError

#: Where a key came from, as the end of "the api-key from ... was refused".
FROM_ARGUMENT = "the api_key argument"
FROM_CLI_OPTION = "the --api-key option"
FROM_PROMPT = "the prompt (--ask-api-key)"
FROM_STDIN = "standard input (--api-key-file -)"
FROM_SANDBOX = "the built-in sandbox"

# Keys of at least this length are also replaced word for word in redacted text; a shorter
# one would turn too many ordinary strings into ``***``.
_MIN_LITERAL = 8
_LIVE: weakref.WeakSet[ApiKey] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()
#: The live keys as weak references, read without the lock: redaction runs on every answer
#: of every thread, and a lock and a WeakSet walk per answer cost more than the request's own
#: work. Made again (dead keys left out) each time a key is made.
_SNAPSHOT: tuple[weakref.ref[ApiKey], ...] = ()


def from_file(path: str | Path) -> str:
    """The source phrase of a key read from a file."""
    return f"the file {path} (--api-key-file)"


def from_config(path: str | Path) -> str:
    """The source phrase of a key read from the config file."""
    return f"the config file {path}"


def from_environment(name: str) -> str:
    """The source phrase of a key read from an environment variable."""
    return f"the environment variable {name}"


class ApiKey:
    """An api-key and its ``source`` (a phrase such as ``the environment variable ...``).

    - ``reveal()`` gives the raw key; the transport calls it inside the request-building call
      of ``requests`` only;
    - ``repr``, ``str`` and ``format`` show ``***``; ``pickle`` refuses it with a ``TypeError``;
    - ``fingerprint`` is the first 8 hex digits of the key's SHA-256: enough to tell two keys
      apart, too short to find the key;
    - a value that cannot be a key (not a string, or with a space or line break inside) is
      kept as a problem and raised as a :class:`~toolkit.errors.ConfigError` by ``check()``.
      Spaces and line breaks at the ends are dropped (a pasted key, a key file's newline).
    """

    __slots__ = ("_value", "_problem", "_forms", "source", "__weakref__")

    def __init__(self, value: Any, source: str = FROM_ARGUMENT) -> None:
        self.source = source
        self._problem: str | None = None
        self._value = ""
        if isinstance(value, ApiKey):
            self._value, self._problem = value._value, value._problem
        elif isinstance(value, str):
            self._value = value.strip()
            if any(c.isspace() or not c.isprintable() for c in self._value):
                self._problem = "holds a space, a line break or a control character"
        else:
            self._problem = f"is a {type(value).__name__}, not a string"
        # the spellings redact() replaces, worked out once (redaction runs on every answer)
        forms = {self._value, quote(self._value, safe=""), quote_plus(self._value)}
        self._forms = tuple(forms) if self._value else ()
        if len(self._value) >= _MIN_LITERAL:
            global _SNAPSHOT
            with _LIVE_LOCK:
                _LIVE.add(self)
                _SNAPSHOT = tuple(weakref.ref(k) for k in _LIVE)

    @classmethod
    def of(cls, value: Any, source: str = FROM_ARGUMENT) -> ApiKey | None:
        """``value`` as an ApiKey (an ApiKey keeps its own source); None for None or ``""``."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if isinstance(value, ApiKey):
            return value
        return cls(value, source)

    # ------------------------------------------------------------------ the value

    def reveal(self) -> str:
        """The raw key. Call it inline where the request is built; never keep it in a variable."""
        return self._value

    def redact(self, text: str, *, long_only: bool = False) -> str:
        """``text`` with this key, and its URL-encoded forms, replaced by ``***``; with
        ``long_only``, a key of fewer than 8 characters is left (it could be ordinary text)."""
        if not self._value or (long_only and len(self._value) < _MIN_LITERAL):
            return text
        for form in self._forms:
            if form in text:
                text = text.replace(form, "***")
        return text

    @property
    def fingerprint(self) -> str:
        """First 8 hex digits of the key's SHA-256 (``sha256sum`` of the key without newline)."""
        return hashlib.sha256(self._value.encode("utf-8", "replace")).hexdigest()[:8]

    @property
    def detail(self) -> str:
        """The key's length and fingerprint: ``32 characters, fingerprint 1a2b3c4d``."""
        return f"{len(self._value)} characters, fingerprint {self.fingerprint}"

    def describe(self) -> str:
        """Where the key came from, its length and fingerprint; never the key."""
        return f"{self.source} ({self.detail})"

    def check(self) -> None:
        """Raise :class:`~toolkit.errors.ConfigError` if the value cannot be a key."""
        if self._problem is not None:
            raise ConfigError(f"the api-key from {self.source} {self._problem}")

    def __bool__(self) -> bool:
        return bool(self._value) or self._problem is not None

    # ------------------------------------------------------------------ never shown

    def __repr__(self) -> str:
        return f"ApiKey(***, from {self.source})"

    def __str__(self) -> str:
        return "***"

    def __format__(self, spec: str) -> str:
        return "***"

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        refuse_pickle("an ApiKey")

    def __copy__(self) -> ApiKey:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ApiKey:
        return self


def refuse_pickle(what: str) -> NoReturn:
    """The one error for pickling an object that holds the api-key."""
    raise TypeError(
        f"{what} is not pickled: the bytes would carry the api-key. In another process, call "
        "toolkit.connect() there (the key comes from CAMPAIGN_API_KEY or the config file)."
    )


def live_keys() -> list[ApiKey]:
    """The keys alive in this process that are long enough to be redacted word for word."""
    return [key for ref in _SNAPSHOT if (key := ref()) is not None]


# --------------------------------------------------------------------------- reading a key


def read_key_file(path: str) -> ApiKey:
    """The key in a file (its first line; spaces and the newline dropped); ``-`` is stdin.

    A missing or unreadable file, or one whose first line is empty, is a
    :class:`~toolkit.errors.ConfigError` that names the file and never shows its content.
    """
    if path == "-":
        return _one_line(sys.stdin.readline(), FROM_STDIN)
    source = from_file(path)
    problem = None
    try:
        with open(path, encoding="utf-8") as handle:
            return _one_line(handle.readline(), source)
    except FileNotFoundError:
        problem = f"no such file: {path} (--api-key-file)"
    except IsADirectoryError:
        problem = f"{path} is a folder, not a key file (--api-key-file)"
    except (OSError, UnicodeDecodeError) as exc:
        problem = f"cannot read {path} (--api-key-file): {type(exc).__name__}"
    raise ConfigError(problem)


def ask_key(prompt: str = "API key: ") -> ApiKey:
    """The key typed at a prompt that does not echo it (``getpass``)."""
    return _one_line(getpass.getpass(prompt), FROM_PROMPT)


def _one_line(text: str, source: str) -> ApiKey:
    key = ApiKey(text, source)
    if not key:
        raise ConfigError(f"the api-key from {source} is empty")
    return key
