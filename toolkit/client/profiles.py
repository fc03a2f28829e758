"""Named accounts: the ``[profiles.NAME]`` tables of the config file.

A media buyer or an agency runs several accounts of the service, each with its own api-key.
The config file (``~/.config/campaign-toolkit/config.toml``) names them::

    [default]                        # what connect() uses when no profile is named
    base_url = "https://api.example.net"

    [profiles.client-a]
    api_key_env = "CLIENT_A_KEY"     # the key from an environment variable ...

    [profiles.client-b]
    api_key_file = "~/.keys/client-b"  # ... or the first line of a file ...
    rate_limit = 5                   # and any option of connect()

    [profiles.client-c]
    api_key = "..."                  # ... or written here (keep the file private)
    base_url = "https://eu.api.example.net"

A profile takes ``base_url`` and the options of ``[default]`` unless it sets its own, never
``[default]``'s key: a profile's key is its own, so a call of one account cannot carry another
account's key. ``$CAMPAIGN_API_KEY`` does not apply to profiles for the same reason.

>>> names = ["a", "b", "c"]
>>> pick_profiles("all", names), pick_profiles("b,a", names)
(['a', 'b', 'c'], ['b', 'a'])
>>> pick_profiles("d", names)
Traceback (most recent call last):
...
toolkit.errors.ConfigError: unknown account 'd'; the accounts are a, b, c
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .apikey import ApiKey, from_config, from_environment, read_key_file

#: The three ways a profile gives its key; exactly one is set.
KEY_FIELDS: tuple[str, ...] = ("api_key", "api_key_env", "api_key_file")
#: A profile's name: it becomes a folder name in saved sets and a cell in workbooks.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
#: What ``--account`` and :func:`toolkit.load_accounts` take for every profile.
ALL = "all"


@dataclass(frozen=True, repr=False)
class Profile:
    """One named account: its base URL, where its key comes from, its client options.

    ``key()`` reads the key (the environment variable or the file is read then, so a missing
    one fails only the account that needs it); ``repr`` shows where the key comes from, never
    the key.
    """

    name: str
    base_url: str | None
    key_field: str
    key_value: Any = field(compare=False)
    options: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def key(self) -> ApiKey:
        """The profile's api-key; a :class:`~toolkit.errors.ConfigError` says what is missing."""
        where = f"profile {self.name!r} of {self.path}"
        if self.key_field == "api_key":
            return ApiKey.of(self.key_value, f"{from_config(self.path or '')} [{self.name}]")
        if self.key_field == "api_key_env":
            name = str(self.key_value)
            value = os.environ.get(name)
            if not value:
                raise ConfigError(f"{where}: the environment variable {name} is not set")
            return ApiKey(value, f"{from_environment(name)} (profile {self.name!r})")
        path = Path(str(self.key_value)).expanduser()
        try:
            key = read_key_file(str(path))
        except ConfigError as exc:
            problem = str(exc).replace("--api-key-file", "api_key_file")
            raise ConfigError(f"{where}: {problem}") from None
        key.source = f"the file {path} (profile {self.name!r})"
        return key

    def __repr__(self) -> str:
        return f"<Profile {self.name} {self.base_url or '(no base_url)'} key from {self.key_field}>"


def parse_profiles(data: Mapping[str, Any], path: Path | None) -> dict[str, Profile]:
    """The profiles of a parsed config file, in the file's order, every table checked."""
    tables = data.get("profiles", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"config file {path}: profiles must be tables ([profiles.NAME])")
    default = data.get("default", {})
    default = default if isinstance(default, dict) else {}
    inherited = {k: v for k, v in default.items() if k not in KEY_FIELDS}
    out: dict[str, Profile] = {}
    for name, table in tables.items():
        where = f"config file {path}, [profiles.{name}]"
        check_name(name, where)
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table")
        given = [k for k in KEY_FIELDS if k in table]
        if len(given) != 1:
            raise ConfigError(
                f"{where}: give exactly one of {', '.join(KEY_FIELDS)}"
                f" ({'none' if not given else ' and '.join(given)} given)"
            )
        options = {**inherited, **{k: v for k, v in table.items() if k not in KEY_FIELDS}}
        url = options.pop("base_url", None)
        out[name] = Profile(name, url, given[0], table[given[0]], options, path)
    return out


def check_name(name: object, where: str) -> None:
    """Refuse a name that cannot name an account: it becomes a folder of a saved set."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or name == ALL:
        raise ConfigError(
            f"{where}: an account's name is letters, digits, '-', '_' and '.', and not {ALL!r}"
            " (it names a folder of a saved set)"
        )


def pick_profiles(accounts: str | Iterable[str], names: Sequence[str]) -> list[str]:
    """The profile names ``accounts`` means: ``"all"``, one name, a comma list or a list.

    Unknown and repeated names are refused in one line that lists the known ones.
    """
    if isinstance(accounts, str):
        wanted = [a.strip() for a in accounts.split(",") if a.strip()]
    else:
        wanted = [str(a).strip() for a in accounts]
    if wanted == [ALL]:
        wanted = list(names)
    if not wanted:
        raise ConfigError(
            f"no account named; the accounts are {', '.join(names) or '(none configured)'}"
        )
    unknown = [a for a in wanted if a not in names]
    if unknown:
        known = ", ".join(names) or "(none configured)"
        plural = "s" if len(unknown) > 1 else ""
        raise ConfigError(
            f"unknown account{plural} {', '.join(map(repr, unknown))}; the accounts are {known}"
        )
    repeated = sorted({a for a in wanted if wanted.count(a) > 1})
    if repeated:
        raise ConfigError(f"account {', '.join(map(repr, repeated))} named twice")
    return wanted


def slug(name: str) -> str:
    """A profile name from an account's display name: ``Northwind Media`` -> ``northwind-media``.

    >>> slug("Northwind Media"), slug("Demo account")
    ('northwind-media', 'demo')
    """
    if name.lower() == "demo account":
        return "demo"
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "account"


__all__ = [
    "ALL",
    "KEY_FIELDS",
    "Profile",
    "check_name",
    "parse_profiles",
    "pick_profiles",
    "slug",
]
