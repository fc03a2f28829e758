"""Fixtures: a sandbox on a free loopback port, and a thin HTTP helper over plain requests.

The whole session (and every child process it starts) keeps the built-in sandbox's state and
the default journal in a temporary data folder (``$CAMPAIGN_TOOLKIT_DATA``), never in the
user's; a test that needs a fresh built-in account of its own asks for ``own_data``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests

from toolkit.datadir import ENV_DATA
from toolkit.sandbox import Sandbox

#: Variables that would point a kernel (a notebook's, Voila's) at a real account or at the
#: user's files: unset where notebooks run in the tests.
UNSET = (
    "CAMPAIGN_API_KEY",
    "CAMPAIGN_API_URL",
    "CAMPAIGN_TOOLKIT_CONFIG",
    "CAMPAIGN_TOOLKIT_JOURNAL",
    ENV_DATA,
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "JUPYTER_CONFIG_DIR",
    "IPYTHONDIR",
    "MPLBACKEND",
)


#: The session's data folder (set by :func:`pytest_configure`).
SESSION_DATA: dict[str, Path] = {}
#: The user's own data files as the session found them: (exists, size, mtime) by path.
USER_FILES: dict[Path, tuple[bool, int, int]] = {}


def user_files() -> dict[Path, tuple[bool, int, int]]:
    """The state of the user's own journal and built-in sandbox files, now."""
    from toolkit.datadir import user_data_dir

    found = {}
    for name in ("sandbox.db", "sandbox.db-wal", "journal.db", "journal.db-wal"):
        path = user_data_dir() / name
        stat = path.stat() if path.exists() else None
        found[path] = (True, stat.st_size, stat.st_mtime_ns) if stat else (False, 0, 0)
    return found


def pytest_configure(config: pytest.Config) -> None:
    """Point ``$CAMPAIGN_TOOLKIT_DATA`` at a temporary folder before any test runs, for this
    process and every child it starts (and note the user's own files, to check they stay)."""
    USER_FILES.update(user_files())
    folder = Path(tempfile.mkdtemp(prefix="campaign-toolkit-tests-"))
    SESSION_DATA["folder"] = folder
    os.environ[ENV_DATA] = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = SESSION_DATA.pop("folder", None)
    if folder is not None:
        if os.environ.get(ENV_DATA) == str(folder):
            del os.environ[ENV_DATA]
        shutil.rmtree(folder, ignore_errors=True)


def brackets(params: dict[str, Any]) -> list[tuple[str, str]]:
    """Encode nested params as the interface's query form: ``a[]=``, ``a[K]=``, ``a[K][f]=``."""
    pairs: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}[{k}]", v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                if isinstance(v, (dict, list, tuple)):
                    raise ValueError("nested lists need explicit keys")
                pairs.append((f"{prefix}[]", str(v)))
        elif value is not None:
            pairs.append((prefix, str(value)))

    for name, value in params.items():
        walk(name, value)
    return pairs


class Api:
    """Plain HTTP calls to the sandbox as one account."""

    def __init__(self, base: str, key: str) -> None:
        self.base = base
        self.key = key
        self.http = requests.Session()

    def get(self, path: str, **params: Any) -> requests.Response:
        query = [("api-key", self.key), *brackets(params)]
        return self.http.get(self.base + path, params=query, timeout=30)

    def post_json(self, path: str, body: Any, **query: Any) -> requests.Response:
        q = [("api-key", self.key), *brackets(query)]
        return self.http.post(self.base + path, params=q, json=body, timeout=30)

    def post_form(
        self, path: str, data: Any = None, files: Any = None, **query: Any
    ) -> requests.Response:
        q = [("api-key", self.key), *brackets(query)]
        return self.http.post(self.base + path, params=q, data=data, files=files, timeout=30)

    def ok(self, path: str, **params: Any) -> dict[str, Any]:
        """GET that must answer 200 with ``status: ok``."""
        r = self.get(path, **params)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body.get("status") == "ok", body
        return body

    def errors(self, path: str, **params: Any) -> list[str]:
        """GET that must answer 200 with ``status: error``; its errorList."""
        r = self.get(path, **params)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["status"] == "error", body
        return body["errorList"]

    def item(self, cid: int, mode: str = "full") -> dict[str, Any]:
        return self.ok("/api/campaign/item", id=cid, mode=mode)["item"]

    _names = itertools.count(1)

    def new_campaign(self, ad_format: str = "push", targeted: bool = True, **extra: Any) -> int:
        """Create a fresh campaign; ``targeted`` gives it category, quality and country."""
        params: dict[str, Any] = {
            "adFormat": ad_format,
            "name": f"test {ad_format} {next(self._names)}",
            "vertical_id": 1,
            **extra,
        }
        if ad_format == "pops":
            params.setdefault("url", "https://example.com/landing")
        if targeted:
            cats = self.ok("/api/campaign/list-refs-data", type="category")["category"]
            group = {"inpage": "push"}.get(ad_format, ad_format)
            params["target"] = {
                "category": [next(iter(cats[group]))],
                "quality": ["high"],
                "country": {"US": "0.5"},
            }
        body = self.post_json("/api/campaign/create", params, adFormat=ad_format).json()
        assert body["status"] == "ok", body
        return body["item"]["id"]


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(campaigns=20, accounts=2) as sb:
        yield sb


@pytest.fixture(scope="session")
def api(sandbox: Sandbox) -> Api:
    """The demo account."""
    return Api(sandbox.url, sandbox.api_keys[0])


@pytest.fixture(scope="session")
def other(sandbox: Sandbox) -> Api:
    """The second account."""
    return Api(sandbox.url, sandbox.api_keys[1])


@pytest.fixture(scope="session")
def _demo_statistics(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, list]:
    """The demo account's 28 days of statistics (seed 5), as ``campaign-toolkit demo`` and
    notebook 07 have them, read, and their truth: made once per test process."""
    import toolkit

    path = tmp_path_factory.mktemp("demo-stats") / "stats.csv"
    with Sandbox() as sandbox:  # the demo account of toolkit.connect()
        truth = sandbox.stats_export(path, days=28, seed=5)
    return toolkit.read_stats(path), truth


@pytest.fixture(scope="module")
def demo_statistics(_demo_statistics: tuple[pd.DataFrame, list]) -> tuple[pd.DataFrame, list]:
    """:func:`_demo_statistics`, the module's own copy (the frame and the truth's rows)."""
    stats, truth = _demo_statistics
    return stats.copy(), [dict(row) for row in truth]


@pytest.fixture()
def sb() -> Iterator[Sandbox]:
    """A fresh sandbox of 12 campaigns (seed 11) for a test that changes the account; a test
    module that needs another one defines its own ``sb``."""
    with Sandbox(campaigns=12, seed=11) as sandbox:
        yield sandbox


@pytest.fixture()
def client(sb: Sandbox) -> Any:
    """A client of ``sb``'s demo account that does not retry (faults show at once)."""
    import toolkit

    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


@pytest.fixture()
def faults(sb: Sandbox) -> Iterator[Any]:
    """The faults of the module's ``sb``, cleared before and after the test."""
    sb.faults.clear()
    yield sb.faults
    sb.faults.clear()


@pytest.fixture()
def fresh_sandbox() -> Iterator[Sandbox]:
    """A sandbox of its own, for tests that change faults or reset state."""
    with Sandbox(campaigns=5, accounts=2) as sb:
        yield sb


def profiles_config(
    sb: Sandbox,
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    names: Sequence[str],
    defaults: str = "retries = 2\nbackoff = 0.01\nmax_backoff = 0.05\n",
) -> Path:
    """A config file at ``path`` naming the sandbox's accounts as profiles ``names`` (each
    key written as ``api_key``), with ``defaults`` under ``[default]``, in force for the test;
    no key or URL in the environment. The sandbox is seeded anew, without faults."""
    sb.reset()
    sb.faults.clear()
    keys = zip(names, sb.api_keys, strict=False)
    profiles = "".join(f'[profiles.{n}]\napi_key = "{k}"\n' for n, k in keys)
    path.write_text(f'[default]\nbase_url = "{sb.url}"\n{defaults}{profiles}', encoding="utf-8")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        monkeypatch.delenv(name, raising=False)
    return path


def cli_runner(sb: Sandbox, capsys: Any) -> Callable[..., tuple[int, str, str]]:
    """``run(*args) -> (exit code, stdout, stderr)``: the command line in this process, with
    no traceback and no api-key of ``sb`` in what it prints."""
    from toolkit.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        assert sb.api_keys[0] not in out + err
        return code, out, err

    return run


@pytest.fixture()
def sandbox_cli(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> Callable[..., tuple[int, str, str]]:
    """:func:`cli_runner` on the session's sandbox, with its key and URL in the environment and
    no config file."""
    monkeypatch.setenv("CAMPAIGN_API_KEY", sandbox.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sandbox.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    return cli_runner(sandbox, capsys)


def child_env(sb: Sandbox | None, tmp_path: Path) -> dict[str, str]:
    """The environment of a child process that runs the toolkit against ``sb``: its key and
    URL, a journal in ``tmp_path``, no config file, the test's data folder (the session's, or
    ``own_data``'s) and this checkout on the path. With ``sb=None``: no key and no URL, so
    the child uses the built-in sandbox of that data folder."""
    root = str(Path(__file__).resolve().parents[1])
    env = {
        **os.environ,
        "CAMPAIGN_TOOLKIT_JOURNAL": str(tmp_path / "journal.db"),
        "CAMPAIGN_TOOLKIT_CONFIG": str(tmp_path / "missing.toml"),
        ENV_DATA: os.environ[ENV_DATA],
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        env.pop(name, None)
    if sb is not None:
        env.update(CAMPAIGN_API_KEY=sb.api_keys[0], CAMPAIGN_API_URL=sb.url)
    return env


@pytest.fixture()
def own_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A data folder of the test's own: ``toolkit.connect()`` without a key (here and in the
    children of :func:`child_env`) uses a fresh built-in account there, seeded on first use
    (a test that never connects costs no seed). The built-in sandbox it started is stopped."""
    import toolkit.client.client as client_module

    folder = tmp_path_factory.mktemp("data")
    monkeypatch.setenv(ENV_DATA, str(folder))
    monkeypatch.setattr(client_module, "_SANDBOX", None)
    yield folder
    started = client_module._SANDBOX
    if started is not None and started.running:
        started.stop()


@pytest.fixture(autouse=True)
def own_journal(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test journals into a file of its own, never the user's journal: a run a test
    applies without ``journal=`` must not meet the runs of another test (rules read the
    journal to know which steps they made already). A test may set its own."""
    folder = tmp_path_factory.mktemp("journal")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(folder / "journal.db"))
