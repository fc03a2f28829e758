"""The client and :func:`connect`.

>>> import toolkit
>>> client = toolkit.connect()          # no key configured: the built-in sandbox  # doctest: +SKIP
>>> client.campaigns.list(ad_format="push")[:1]                                     # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import logging
import os
import sqlite3
import threading
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .. import spec
from ..datadir import ENV_DATA, sandbox_state
from ..errors import ConfigError
from .account import Account
from .apikey import (
    FROM_ARGUMENT,
    FROM_SANDBOX,
    ApiKey,
    from_config,
    from_environment,
    refuse_pickle,
)
from .campaigns import Campaigns
from .creatives import Creatives
from .profiles import Profile, parse_profiles, pick_profiles, slug
from .rules import BidRules, CpaRules
from .targeting import Lists, Targeting
from .transport import Transport, TransportLike

log = logging.getLogger("toolkit")

ENV_KEY = "CAMPAIGN_API_KEY"
ENV_URL = "CAMPAIGN_API_URL"
ENV_CONFIG = "CAMPAIGN_TOOLKIT_CONFIG"


@dataclass
class ClientOptions:
    """Tunables of a client; every one can be passed to :func:`connect` by name."""

    timeout: float | tuple[float, float] = (5.0, 60.0)
    retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 120.0
    rate_limit: float | None = None
    pool_size: int = 16
    max_batch_campaigns: int = 100
    max_batch_items: int = 1000
    adaptive: bool = True


class Client:
    """One account of the service: resources grouped as attributes.

    ``campaigns``, ``targeting``, ``lists``, ``bid_rules``, ``cpa_rules``, ``creatives`` and
    ``account`` each hold the operations of one part of the interface. The api-key (a string
    or an :class:`~toolkit.client.apikey.ApiKey`) is kept by the transport and never shown.

    ``transport`` replaces the :class:`~toolkit.client.transport.Transport` the client would
    build from ``base_url``, ``api_key`` and the transport options: any object of the
    :class:`~toolkit.client.transport.TransportLike` protocol (a wrapper that records calls,
    for one). It brings its own URL, key, timeouts and retries, so those are not passed too.
    A client is not pickled: the bytes would carry the key (a ``TypeError`` says so).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | ApiKey | None = None,
        *,
        transport: TransportLike | None = None,
        **options: Any,
    ) -> None:
        api_key = ApiKey.of(api_key, f"{FROM_ARGUMENT} of Client()")  # the raw str goes first
        names = {f.name for f in fields(ClientOptions)}
        unknown = set(options) - names
        if unknown:
            raise ConfigError(f"unknown client options {sorted(unknown)}; known: {sorted(names)}")
        if isinstance(options.get("timeout"), list):  # a TOML array: (connect, read)
            options["timeout"] = tuple(options["timeout"])
        self.options = ClientOptions(**options)
        if transport is None:
            transport = self._own_transport(base_url, api_key)
        else:
            _check_transport(transport, base_url, api_key, options)
        self.transport: TransportLike = transport
        self.sandbox: Any = None
        self._formats: dict[int, str] = {}
        self.campaigns = Campaigns(self)
        self.targeting = Targeting(self)
        self.lists = Lists(self)
        self.bid_rules = BidRules(self)
        self.cpa_rules = CpaRules(self)
        self.creatives = Creatives(self)
        self.account = Account(self)

    def _own_transport(self, base_url: str | None, api_key: ApiKey | None) -> Transport:
        if not base_url:
            raise ConfigError("a base URL is required (or a transport)")
        if not api_key:
            raise ConfigError("an api-key is required")
        api_key.check()
        o = self.options
        return Transport(
            base_url,
            api_key,
            timeout=o.timeout,
            retries=o.retries,
            backoff=o.backoff,
            max_backoff=o.max_backoff,
            max_retry_after=o.max_retry_after,
            rate_limit=o.rate_limit,
            pool_size=o.pool_size,
            adaptive=o.adaptive,
        )

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    def __repr__(self) -> str:
        # safe while __init__ is still running (tracebacks show half-built objects too)
        transport = getattr(self, "transport", None)
        where = "sandbox " if getattr(self, "sandbox", None) is not None else ""
        return f"<Client {where}{transport.base_url if transport else '(not ready)'}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        refuse_pickle("a Client")

    @property
    def service(self) -> str:
        """The service the account lives on, to which journaled runs are bound: the base URL,
        or for a sandbox with a state file ``sandbox:PATH#STATE`` (its port changes from process
        to process, its file does not; a reset makes it another state)."""
        return str(getattr(self.sandbox, "service", None) or self.base_url)

    @property
    def key_source(self) -> str:
        """Where the api-key came from, its length and fingerprint (never the key)."""
        return self.transport.key_source

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ formats

    def remember_format(self, item: dict[str, Any]) -> None:
        """Keep a campaign's format (from a list/detail/create answer) for checks."""
        code = spec.FORMAT_BY_LABEL.get(item.get("ad_format", ""))
        if code and "id" in item:
            self._formats[int(item["id"])] = code

    def known_format(self, campaign_id: int) -> str | None:
        return self._formats.get(int(campaign_id))


#: Options that configure a :class:`Transport`; a transport passed in brings its own.
TRANSPORT_OPTIONS = frozenset(
    {
        "timeout",
        "retries",
        "backoff",
        "max_backoff",
        "max_retry_after",
        "rate_limit",
        "pool_size",
        "adaptive",
    }
)


def _check_transport(
    transport: object, base_url: str | None, api_key: ApiKey | None, options: dict[str, Any]
) -> None:
    """A transport passed to :class:`Client` brings its URL, key and retry settings."""
    if not isinstance(transport, TransportLike):
        missing = [
            name
            for name in ("base_url", "key_source", "call", "url_room", "close")
            if not hasattr(transport, name)
        ]
        raise ConfigError(
            f"transport {type(transport).__name__} lacks {', '.join(missing)}"
            " (see toolkit.client.TransportLike)"
        )
    if base_url is not None or api_key:
        raise ConfigError("pass either a transport or base_url and api_key, not both")
    given = sorted(TRANSPORT_OPTIONS & set(options))
    if given:
        raise ConfigError(
            f"options {given} configure a Transport; the transport passed in has its own"
        )


# --------------------------------------------------------------------------- connect

_SANDBOX_LOCK = threading.Lock()
_SANDBOX: Any = None


def _embedded_sandbox() -> Any:
    """The process's built-in sandbox over the user's state (:func:`toolkit.datadir.
    sandbox_state`), started once per state file and stopped at exit.

    The state outlives the process: the demo account is the one every command and session of
    the user sees, until ``campaign-toolkit sandbox reset``. Each process serves it on a port
    of its own; several may at once (see :mod:`toolkit.sandbox.store`)."""
    global _SANDBOX
    with _SANDBOX_LOCK:
        state = sandbox_state()
        if _SANDBOX is None or not _SANDBOX.running or Path(_SANDBOX.db) != state:
            from ..sandbox import Sandbox

            try:
                state.parent.mkdir(parents=True, exist_ok=True)
                sandbox = Sandbox(db=state).start()
            except (OSError, sqlite3.Error) as exc:
                raise ConfigError(_state_problem(state, exc)) from None
            atexit.register(sandbox.stop)
            _SANDBOX = sandbox
            log.warning(
                "built-in sandbox, demo account, state in %s (no API key configured; serving"
                " at %s; `campaign-toolkit sandbox reset` starts it over)",
                state,
                sandbox.url,
            )
        return _SANDBOX


def _state_problem(state: Path, exc: BaseException) -> str:
    """One line for a built-in sandbox state that cannot be opened, and what to do."""
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return (
            f"the built-in sandbox's state {state} is not a sandbox database ({exc}): move the"
            f" file away (the next command seeds a new one), or set {ENV_DATA} to another folder"
        )
    return (
        f"the built-in sandbox cannot keep its state in {state} ({exc}): set {ENV_DATA} to a"
        " folder you can write, or configure an api-key"
    )


def sandbox_client(sandbox: Any, account: int = 0, **options: Any) -> Client:
    """A client of a running sandbox's demo account, or of its ``account``-th account
    (``client.sandbox`` is the sandbox).

    >>> from toolkit.sandbox import Sandbox                        # doctest: +SKIP
    >>> with Sandbox(campaigns=5) as sb:                           # doctest: +SKIP
    ...     sandbox_client(sb).campaigns.list()
    """
    keys = sandbox.api_keys
    source = FROM_SANDBOX if account == 0 else f"{FROM_SANDBOX} (account {account + 1})"
    client = Client(sandbox.url, ApiKey(keys[account], source), **options)
    client.sandbox = sandbox
    return client


def config_path() -> Path:
    """``$CAMPAIGN_TOOLKIT_CONFIG`` or ``~/.config/campaign-toolkit/config.toml``."""
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "campaign-toolkit" / "config.toml"


def _config_data(path: Path) -> dict[str, Any]:
    """The parsed config file, ``{}`` when there is none."""
    if not path.exists():
        return {}
    problem = None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        # raised below, outside this block: the parser's frames hold the file's text
        problem = f"config file {path} is not valid TOML: {exc}"
    if problem is not None:
        raise ConfigError(problem)
    return data


def read_config(path: Path | None = None) -> dict[str, Any]:
    """The ``[default]`` table of the config file (``api_key``, ``base_url``, options).

    ``api_key`` comes back as an :class:`~toolkit.client.apikey.ApiKey` whose source names
    the file.
    """
    path = path or config_path()
    return _default_table(_config_data(path), path)


def _default_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The ``[default]`` table of parsed config ``data`` (or its top-level keys)."""
    for table in (data, data.get("default")):
        if isinstance(table, dict) and "api_key" in table:
            table["api_key"] = ApiKey.of(table["api_key"], from_config(path))
    table = data.get("default", data)
    if not isinstance(table, dict):
        raise ConfigError(f"config file {path}: [default] must be a table")
    if table is data:  # a file of top-level keys: its profiles are not options
        table = {k: v for k, v in data.items() if k != "profiles"}
    return table


def read_profiles(path: Path | None = None) -> dict[str, Profile]:
    """The ``[profiles.NAME]`` tables of the config file (see :mod:`toolkit.client.profiles`)."""
    path = path or config_path()
    return parse_profiles(_config_data(path), path)


def profiles() -> list[str]:
    """The names of the accounts :func:`connect` knows, in order.

    The config file's profiles; with none configured and no api-key anywhere, the built-in
    sandbox's accounts (``demo``, ``northwind-media``, ...), so that every command that takes
    accounts runs on the demo data too.

    >>> toolkit.client.client.profiles()                       # doctest: +SKIP
    ['demo', 'northwind-media']
    """
    named, sandbox = _known_accounts(
        f"no profiles are configured: add [profiles.NAME] tables to {config_path()}"
    )
    return list(named) if named else _sandbox_profiles(sandbox)


def _known_accounts(none_configured: str) -> tuple[dict[str, Profile], Any]:
    """The config file's profiles (read once); with none, the built-in sandbox whose accounts
    stand for them, unless a key is configured: then ``none_configured`` is raised."""
    path = config_path()
    data = _config_data(path)
    named = parse_profiles(data, path)
    if named:
        return named, None
    if os.environ.get(ENV_KEY) or _default_table(data, path).get("api_key"):
        raise ConfigError(f"{none_configured} (see docs/accounts.md)")
    return {}, _embedded_sandbox()


def _sandbox_profiles(sandbox: Any) -> list[str]:
    """A sandbox's accounts as profile names, made unique by a number where two slugs meet."""
    out: list[str] = []
    for i, name in enumerate(sandbox.account_names):
        name = slug(name)
        out.append(name if name not in out else f"{name}-{i + 1}")
    return out


def _connect_profile(profile: str, options: dict[str, Any]) -> Client:
    """The client of one named account: a configured profile, or a built-in sandbox account."""
    named, sandbox = _known_accounts(
        f"profile {profile!r}: no profiles are configured; add [profiles.{profile}] to"
        f" {config_path()}"
    )
    if named:
        pick_profiles([profile], list(named))
        chosen = named[profile]
        url = chosen.base_url or os.environ.get(ENV_URL)
        if not url:
            raise ConfigError(
                f"profile {profile!r} of {config_path()} has no base_url (nor has [default]):"
                f" add one, or set {ENV_URL}"
            )
        return Client(url, chosen.key(), **{**chosen.options, **options})
    names = _sandbox_profiles(sandbox)
    pick_profiles([profile], names)
    return sandbox_client(sandbox, account=names.index(profile), **options)


def connect(
    api_key: str | ApiKey | None = None,
    base_url: str | None = None,
    *,
    profile: str | None = None,
    **options: Any,
) -> Client:
    """A client for an account: the key comes from the argument, ``$CAMPAIGN_API_KEY`` or the
    config file, in that order; the base URL likewise (``$CAMPAIGN_API_URL``).

    ``api_key`` may be an :class:`~toolkit.client.apikey.ApiKey` (the command line passes one
    that says which option it came from). A refused key raises :class:`~toolkit.AuthError`
    naming where the key came from.

    With no key anywhere, the built-in sandbox is started (once per process) and the client
    uses its demo account, whose state lives in ``sandbox.db`` of the user's data folder
    (``$CAMPAIGN_TOOLKIT_DATA``, else ``~/.local/share/campaign-toolkit``) and so outlives the
    process; a log line says so and where.

    ``profile`` names an account of the config file's ``[profiles.NAME]`` tables (see
    :mod:`toolkit.client.profiles`), or with none configured one of the built-in sandbox's
    accounts (:func:`profiles` lists them); its key is the profile's own, so ``api_key`` and
    ``base_url`` are not passed with it.

    >>> client = toolkit.connect(profile="client-a")              # doctest: +SKIP
    """
    api_key = ApiKey.of(api_key, FROM_ARGUMENT)  # the raw string leaves this frame's locals
    if profile is not None:
        if api_key or base_url:
            raise ConfigError(
                "pass a profile or an api_key and base_url, not both: a profile brings its own"
            )
        return _connect_profile(profile, options)
    config = read_config()
    key = (
        api_key
        or ApiKey.of(os.environ.get(ENV_KEY), from_environment(ENV_KEY))
        or config.get("api_key")
    )
    url = base_url or os.environ.get(ENV_URL) or config.get("base_url")
    merged = {k: v for k, v in config.items() if k not in ("api_key", "base_url")}
    merged.update(options)
    if not key:
        running = _SANDBOX if _SANDBOX is not None and _SANDBOX.running else None
        if url and (running is None or url.rstrip("/") != running.url):
            raise ConfigError(
                f"a base URL is configured ({url}) but no api-key: set {ENV_KEY} or pass api_key"
            )
        sandbox = _embedded_sandbox()
        return sandbox_client(sandbox, **merged)
    if not url:
        raise ConfigError(
            f"an api-key is configured ({key.source}) but no base URL: set {ENV_URL}, pass"
            f" base_url, or add base_url to {config_path()}"
        )
    return Client(url, key, **merged)


def profile_clients(
    names: Iterable[str], given: Mapping[str, Client] | None = None
) -> dict[str, Client]:
    """A client for each account of ``names``: the one in ``given`` (not None), else one
    connected by the profile of that name (:func:`connect`)."""
    given = dict(given or {})
    return {n: c if (c := given.get(n)) is not None else connect(profile=n) for n in names}
