"""The sandbox as a server: :class:`Sandbox` runs it on 127.0.0.1 in a background thread.

>>> from toolkit.sandbox import Sandbox
>>> with Sandbox(campaigns=5) as sb:                      # doctest: +SKIP
...     requests.get(sb.url + "/api/campaign/list", params={"api-key": sb.api_keys[0]})
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from .. import spec
from . import control_fields, logs
from .app import App
from .errors import BadRequest, MethodNotAllowed, NotFound
from .faults import Faults
from .handlers.common import Config
from .httpserver import Server
from .refs import load_refs
from .seed import seed_store
from .stats_gen import DELAY, PAYOUTS, generate_stats
from .store import Store

log = logging.getLogger("toolkit.sandbox")

DEFAULT_SEED = 20261121


class Sandbox:
    """A faithful local Campaign Management service with seeded demo accounts.

    ``campaigns`` sets the size of the demo account (each other account gets a tenth);
    ``latency_ms`` adds latency to every ``/api/`` request; ``db`` keeps state in a SQLite file
    that survives a restart (seeded only when empty); ``seed`` makes the demo data repeatable;
    ``rate_limit`` answers HTTP 429 (with ``Retry-After``) past that many ``/api/`` requests
    per second of one api-key (a sliding one-second window).

    Use it as a context manager, or call :meth:`start` and :meth:`stop`.

    >>> sb = Sandbox(campaigns=5).start()                   # doctest: +SKIP
    >>> sb.url, len(sb.api_keys)                            # doctest: +SKIP
    ('http://127.0.0.1:54321', 2)
    >>> sb.stop()                                           # doctest: +SKIP
    """

    def __init__(
        self,
        campaigns: int = 50,
        latency_ms: float = 0,
        db: str | Path | None = None,
        seed: int = DEFAULT_SEED,
        *,
        accounts: int = 2,
        host: str = "127.0.0.1",
        port: int = 0,
        auto_approve: bool = False,
        max_batch_campaigns: int | None = None,
        max_items: int | None = None,
        rate_limit: int | None = None,
    ) -> None:
        if campaigns < 0:
            raise ValueError(f"campaigns must be >= 0, got {campaigns}")
        if accounts < 1:
            raise ValueError(f"accounts must be >= 1, got {accounts}")
        self.campaigns = campaigns
        self.seed = seed
        self.accounts = accounts
        self.host = host
        self.port = port
        self.db = db
        self.config = Config(auto_approve, max_batch_campaigns, max_items)
        try:
            self.faults = Faults(latency_ms=latency_ms, seed=seed, rate_limit=rate_limit)
        except BadRequest as exc:
            raise ValueError(str(exc)) from None
        self.store: Store | None = None
        self.app: App | None = None
        self._server: Server | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self) -> Sandbox:
        """Open (and seed if empty) the store, then serve in a background thread."""
        if self._server is not None:
            return self
        self.faults.stopping.clear()
        refs = load_refs()  # before the seed's transaction: other processes wait less
        self.store = Store(self.db)
        self._seed_if_empty()
        logs.remember(self.store.api_keys())
        self.app = App(self.store, refs, self.config, self.faults, self._control)
        try:
            self._server = Server(self.host, self.port, self.app)
        except OSError as exc:
            self.store.close()
            self.store = None
            raise OSError(f"cannot listen on {self.host}:{self.port}: {exc.strerror}") from exc
        self._server.start()
        return self

    def _seed_if_empty(self) -> None:
        """Seed an empty store, or take the size and seed of the one found. One transaction:
        of processes opening the same new file at once, one seeds and the others see it."""
        assert self.store is not None
        with self.store.transaction():
            if self.store.is_empty():
                seed_store(
                    self.store, campaigns=self.campaigns, seed=self.seed, accounts=self.accounts
                )
                self._new_state_id()
            self.campaigns = int(self.store.meta("campaigns", str(self.campaigns)) or 0)
            self.seed = int(self.store.meta("seed", str(self.seed)) or 0)
            self.accounts = int(self.store.meta("accounts", str(self.accounts)) or 1)

    def _new_state_id(self) -> None:
        """Name this seeding of the state: runs journaled on it are bound to it, so that after
        a reset they are runs of another account (see :attr:`service`)."""
        assert self.store is not None
        with self.store.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('state', ?)",
                (uuid.uuid4().hex[:8],),
            )

    def stop(self) -> None:
        """Stop serving; requests held by latency or a hang are answered 503 at once."""
        self.faults.stopping.set()
        if self._server is not None:
            self._server.stop(timeout=5)
            self._server = None
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait(self) -> None:
        """Block until interrupted (for the command line)."""
        server = self._server
        while server is not None and server.is_alive():
            server.join(0.5)

    def __repr__(self) -> str:
        state = self.url if self._server is not None else "stopped"
        return f"<Sandbox {state} campaigns={self.campaigns} accounts={self.accounts}>"

    # ------------------------------------------------------------------ properties

    @property
    def service(self) -> str:
        """What runs journaled on this sandbox are bound to: its URL; with a state file, the file
        and the seeding of its state (``sandbox:/path/state.db#1a2b3c4d``), the same in every
        process that serves the file (each on a port of its own) until a reset."""
        if not self.db:
            return self.url
        assert self.store is not None, "the sandbox is not running"
        return f"sandbox:{Path(self.db).resolve()}#{self.store.meta('state', '')}"

    @property
    def running(self) -> bool:
        """Whether the sandbox is serving (started and not stopped)."""
        return self._server is not None

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321``."""
        if self._server is None:
            raise RuntimeError("the sandbox is not running: call start() first")
        return f"http://{self.host}:{self._server.server_port}"

    @property
    def api_keys(self) -> list[str]:
        """One key per account, the demo account's first."""
        if self.store is None:
            raise RuntimeError("the sandbox is not running: call start() first")
        return self.store.api_keys()

    @property
    def account_names(self) -> list[str]:
        """The accounts' names, in the order of :attr:`api_keys`."""
        if self.store is None:
            raise RuntimeError("the sandbox is not running: call start() first")
        return self.store.account_names()

    # ------------------------------------------------------------------ control

    def reset(
        self, campaigns: int | None = None, seed: int | None = None, accounts: int | None = None
    ) -> list[str]:
        """Drop all state and seed again (one transaction: another process on the same file
        sees the old state or the new, never an empty one); returns the new api keys."""
        assert self.store is not None, "the sandbox is not running"
        self.campaigns = self.campaigns if campaigns is None else int(campaigns)
        self.seed = self.seed if seed is None else int(seed)
        self.accounts = self.accounts if accounts is None else int(accounts)
        with self.store.transaction():
            self.store.clear()
            seed_store(self.store, campaigns=self.campaigns, seed=self.seed, accounts=self.accounts)
            self._new_state_id()
        keys = self.store.api_keys()
        logs.remember(keys)
        return keys

    @classmethod
    def reset_file(
        cls, db: str | Path, *, campaigns: int = 50, seed: int = DEFAULT_SEED, accounts: int = 2
    ) -> int | None:
        """Seed the state file ``db`` anew without serving it (processes serving it go on, on
        the new state); returns the demo account's campaigns before, None when it had none."""
        sandbox = cls(campaigns=campaigns, db=db, seed=seed, accounts=accounts)
        sandbox.store = Store(db)
        try:
            with sandbox.store.transaction() as conn:
                row = conn.execute(
                    "SELECT count(c.id) FROM accounts a LEFT JOIN campaigns c USING(user_id)"
                    " GROUP BY a.user_id ORDER BY a.user_id LIMIT 1"
                ).fetchone()
                sandbox.reset()
        finally:
            sandbox.store.close()
            sandbox.store = None
        return None if row is None else int(row[0])

    def moderate(
        self,
        kind: str,
        id: int,
        status: str,
        status_note: str | None = None,  # noqa: A002
        convert: str | None = None,
    ) -> None:
        """Set the moderation status of a campaign or creative (and a video's conversion)."""
        assert self.store is not None, "the sandbox is not running"
        statuses = spec.CAMPAIGN_STATUSES if kind == "campaign" else spec.CREATIVE_STATUSES
        if kind not in ("campaign", "creative"):
            raise BadRequest(f"'type' must be campaign or creative, got {kind!r}")
        if status not in statuses:
            raise BadRequest(f"'status' must be one of {', '.join(statuses)}, got {status!r}")
        if convert is not None and convert not in spec.VIDEO_CONVERT_STATES:
            raise BadRequest(f"'convert' must be one of {spec.VIDEO_CONVERT_STATES}")
        table = "campaigns" if kind == "campaign" else "creatives"
        with self.store.transaction() as db:
            cur = db.execute(
                f"UPDATE {table} SET status=?, status_note=? WHERE id=?", (status, status_note, id)
            )
            if not cur.rowcount:
                raise NotFound(f"No {kind} #{id}")
            if convert is not None and kind == "creative":
                db.execute("UPDATE creatives SET convert=? WHERE id=?", (convert, id))

    def stats(self) -> dict[str, int]:
        """Requests answered so far, keyed ``"METHOD /path STATUS"``."""
        assert self.app is not None, "the sandbox is not running"
        with self.app._stats_lock:
            return {f"{m} {p} {s}": n for (m, p, s), n in sorted(self.app.stats.items())}

    def calls_by_account(self) -> dict[int, int]:
        """Authenticated ``/api/`` calls so far per account (user id)."""
        assert self.app is not None, "the sandbox is not running"
        with self.app._stats_lock:
            return dict(sorted(self.app.by_account.items()))

    def foreign_calls(self) -> list[tuple[int, int]]:
        """``(caller's user id, campaign id)`` of every call so far that named a campaign of
        another account than the key's: a client that crossed accounts shows up here."""
        assert self.app is not None, "the sandbox is not running"
        return list(self.app.foreign)

    def stats_export(
        self,
        path: str | Path,
        *,
        days: int = 14,
        seed: int = 0,
        delay: Any = DELAY,
        payouts: str | Path | None = PAYOUTS,
    ) -> list[dict[str, Any]]:
        """Write a tracker-style statistics CSV for the demo account's sources, subIds and
        countries (one click stream per campaign; conversions known by the last day under
        ``delay``, None for none), the payouts per campaign and country to ``payouts``
        (``payouts.csv`` beside ``path``; None: not written), and return the truth of each
        item (see :func:`toolkit.sandbox.stats_gen.generate_stats`). The sandbox must be
        started."""
        if self.store is None:
            raise RuntimeError("start the sandbox first")
        return generate_stats(self.store, path, days=days, seed=seed, delay=delay, payouts=payouts)

    def _control(self, method: str, name: str, data: dict[str, Any]) -> dict[str, Any]:
        handlers = {
            "health": self._control_health,
            "reset": self._control_reset,
            "moderate": self._control_moderate,
            "faults": self._control_faults,
            "stats": self._control_stats,
        }
        handler = handlers.get(name)
        if handler is None:
            raise NotFound(f"Unknown control endpoint: /_sandbox/{name}")
        answer = handler(method, data)
        if answer is None:
            raise MethodNotAllowed(f"Method {method} is not allowed for /_sandbox/{name}")
        return answer

    def _control_health(self, method: str, data: dict[str, Any]) -> dict[str, Any] | None:
        return {"status": "ok"} if method == "GET" else None

    def _control_reset(self, method: str, data: dict[str, Any]) -> dict[str, Any] | None:
        if method != "POST":
            return None
        keys = self.reset(**control_fields.reset_args(data))
        return {"status": "ok", "api_keys": keys}

    def _control_moderate(self, method: str, data: dict[str, Any]) -> dict[str, Any] | None:
        if method != "POST":
            return None
        self.moderate(**control_fields.moderate_args(data))
        return {"status": "ok"}

    def _control_faults(self, method: str, data: dict[str, Any]) -> dict[str, Any] | None:
        if method == "POST":
            self.faults.configure(data)
        elif method == "DELETE":
            self.faults.clear()
        elif method != "GET":
            return None
        return {"status": "ok", **self.faults.describe()}

    def _control_stats(self, method: str, data: dict[str, Any]) -> dict[str, Any] | None:
        if method == "GET":
            by_account = {str(k): n for k, n in self.calls_by_account().items()}
            foreign = [list(pair) for pair in self.foreign_calls()]
            return {
                "status": "ok",
                "requests": self.stats(),
                "by_account": by_account,
                "foreign": foreign,
            }
        if method != "DELETE":
            return None
        assert self.app is not None
        with self.app._stats_lock:
            self.app.stats.clear()
            self.app.by_account.clear()
            self.app.foreign.clear()
        return {"status": "ok"}
