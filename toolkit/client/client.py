"""The client and :func:`connect`.

>>> import toolkit
>>> client = toolkit.connect()          # no key configured: the built-in sandbox  # doctest: +SKIP
>>> client.campaigns.list(ad_format="push")[:1]                                     # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .. import spec
from ..errors import ConfigError
from .account import Account
from .campaigns import Campaigns
from .creatives import Creatives
from .rules import BidRules, CpaRules
from .targeting import Lists, Targeting
from .transport import Transport

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


class Client:
    """One account of the service: resources grouped as attributes.

    ``campaigns``, ``targeting``, ``lists``, ``bid_rules``, ``cpa_rules``, ``creatives`` and
    ``account`` each hold the operations of one part of the interface. The api-key is kept by
    the transport and never shown.
    """

    def __init__(self, base_url: str, api_key: str, **options: Any) -> None:
        names = {f.name for f in fields(ClientOptions)}
        unknown = set(options) - names
        if unknown:
            raise ConfigError(f"unknown client options {sorted(unknown)}; known: {sorted(names)}")
        if not api_key:
            raise ConfigError("an api-key is required")
        if isinstance(options.get("timeout"), list):  # a TOML array: (connect, read)
            options["timeout"] = tuple(options["timeout"])
        self.options = ClientOptions(**options)
        o = self.options
        self.transport = Transport(
            base_url,
            api_key,
            timeout=o.timeout,
            retries=o.retries,
            backoff=o.backoff,
            max_backoff=o.max_backoff,
            max_retry_after=o.max_retry_after,
            rate_limit=o.rate_limit,
            pool_size=o.pool_size,
        )
        self.sandbox: Any = None
        self._formats: dict[int, str] = {}
        self.campaigns = Campaigns(self)
        self.targeting = Targeting(self)
        self.lists = Lists(self)
        self.bid_rules = BidRules(self)
        self.cpa_rules = CpaRules(self)
        self.creatives = Creatives(self)
        self.account = Account(self)

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    def __repr__(self) -> str:
        where = "sandbox " if self.sandbox is not None else ""
        return f"<Client {where}{self.base_url}>"

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


# --------------------------------------------------------------------------- connect

_SANDBOX_LOCK = threading.Lock()
_SANDBOX: Any = None


def _embedded_sandbox() -> Any:
    """The process's built-in sandbox, started once and stopped at exit."""
    global _SANDBOX
    with _SANDBOX_LOCK:
        if _SANDBOX is None:
            from ..sandbox import Sandbox

            _SANDBOX = Sandbox().start()
            atexit.register(_SANDBOX.stop)
            log.warning(
                "No API key configured: using the built-in sandbox with its demo account at %s",
                _SANDBOX.url,
            )
        return _SANDBOX


def config_path() -> Path:
    """``$CAMPAIGN_TOOLKIT_CONFIG`` or ``~/.config/campaign-toolkit/config.toml``."""
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "campaign-toolkit" / "config.toml"


def read_config(path: Path | None = None) -> dict[str, Any]:
    """The ``[default]`` table of the config file (``api_key``, ``base_url``, options)."""
    path = path or config_path()
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    table = data.get("default", data)
    if not isinstance(table, dict):
        raise ConfigError(f"config file {path}: [default] must be a table")
    return table


def connect(api_key: str | None = None, base_url: str | None = None, **options: Any) -> Client:
    """A client for an account: the key comes from the argument, ``$CAMPAIGN_API_KEY`` or the
    config file, in that order; the base URL likewise (``$CAMPAIGN_API_URL``).

    With no key anywhere, the built-in sandbox is started (once per process) and the client
    uses its demo account; a log line says so.
    """
    config = read_config()
    key = api_key or os.environ.get(ENV_KEY) or config.get("api_key")
    url = base_url or os.environ.get(ENV_URL) or config.get("base_url")
    merged = {k: v for k, v in config.items() if k not in ("api_key", "base_url")}
    merged.update(options)
    if not key:
        running = _SANDBOX
        if url and (running is None or url.rstrip("/") != running.url):
            raise ConfigError(
                f"a base URL is configured ({url}) but no api-key: set {ENV_KEY} or pass api_key"
            )
        sandbox = _embedded_sandbox()
        client = Client(sandbox.url, sandbox.api_keys[0], **merged)
        client.sandbox = sandbox
        return client
    if not url:
        raise ConfigError(
            f"an api-key is configured but no base URL: set {ENV_URL}, pass base_url, or add"
            f" base_url to {config_path()}"
        )
    return Client(url, key, **merged)
