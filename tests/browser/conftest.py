"""Fixtures of the browser tests: a sandbox, Voila serving this folder's notebooks against it,
and headless Chromium driven by Playwright.

The notebooks reach the sandbox through the Voila process's environment: ``CAMPAIGN_API_URL``
and ``CAMPAIGN_API_KEY`` (the key is written to no file). The kernels run this very Python
(a kernelspec names ``sys.executable``), with a home, a journal and a Jupyter configuration of
their own in a temporary folder.

Chromium is Debian's (``/usr/bin/chromium``, or ``chromium`` on ``PATH``), launched through
``executable_path``; ``playwright install`` is never needed. ``$CAMPAIGN_TOOLKIT_CHROMIUM``
names another executable; set it to ``none`` to skip these tests. Every test here skips, saying
why, where Chromium, Playwright or Voila is missing.

Every wait is bounded: Voila must serve within :data:`VOILA_START` seconds, a page action
within :data:`ACTION_TIMEOUT`. The sandbox, Voila (its whole process group) and Chromium stop
after the last test of this folder, not at the end of the session.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from toolkit.sandbox import Sandbox

from ..conftest import UNSET
from . import lab

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: Names another Chromium executable; ``none`` (or a path that is not there) skips the tests.
ENV_CHROMIUM = "CAMPAIGN_TOOLKIT_CHROMIUM"
DEBIAN_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
#: Seconds Voila may take to answer its first request.
VOILA_START = 60
#: Milliseconds a page action or an expectation may wait (a kernel starts on each page load).
ACTION_TIMEOUT = 60_000
VIEWPORT = {"width": 1280, "height": 900}
#: What Voila shows of a cell's standard error (tracebacks included).
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


def find_chromium() -> tuple[str | None, str]:
    """``(executable, "")``, or ``(None, why not)``."""
    named = os.environ.get(ENV_CHROMIUM)
    if named is not None:
        if named.strip().lower() in ("", "none", "0", "no"):
            return None, f"Chromium turned off (${ENV_CHROMIUM}={named!r})"
        found = shutil.which(named)
        if found:
            return found, ""
        return None, f"Chromium not found at ${ENV_CHROMIUM}={named!r}"
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found, ""
    if os.access(DEBIAN_CHROMIUM, os.X_OK):
        return DEBIAN_CHROMIUM, ""
    return None, (
        f"Chromium not found (neither {DEBIAN_CHROMIUM} nor chromium on PATH): on Debian, "
        "apt-get install chromium fonts-dejavu-core"
    )


def missing_modules() -> list[str]:
    return [m for m in ("playwright", "voila") if importlib.util.find_spec(m) is None]


def why_skip() -> str | None:
    """Why the browser tests cannot run here, or None."""
    missing = missing_modules()
    if missing:
        return f"{' and '.join(missing)} not installed (pip install -e '.[dev]')"
    return find_chromium()[1] or None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_kernelspec(folder: Path) -> Path:
    """A ``python3`` kernelspec that runs this Python, under ``folder/kernels``."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3 (browser tests)", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- Voila


@dataclass
class Voila:
    """A Voila process serving a folder of notebooks on 127.0.0.1."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    #: The journal its kernels write (``$CAMPAIGN_TOOLKIT_JOURNAL`` of :func:`voila_env`).
    journal: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def page(self, notebook: str) -> str:
        """The URL of ``notebook`` rendered."""
        return f"{self.url}/voila/render/{notebook}"

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def kernels(self) -> int:
        """How many kernel processes this server has started and not yet stopped."""
        return len(kernel_processes(self.process.pid))

    def wait_serving(self, seconds: float = VOILA_START) -> float:
        """Seconds until Voila answers ``/``; fails with its log if it dies or takes longer."""
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{type(self).__name__} exited ({self.process.returncode}):\n{self.output()}"
                )
            try:
                if requests.get(self.url + "/", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(
            f"{type(self).__name__} did not serve within {seconds} s:\n{self.output()}"
        )

    def stop(self) -> None:
        """Stop Voila and its kernels (the whole process group)."""
        if self.process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def voila_env(base: Path, sandbox: Sandbox) -> dict[str, str]:
    """Voila's environment: the sandbox's URL and demo key, everything else of its own."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    home = base / "home"
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        CAMPAIGN_API_URL=sandbox.url,
        CAMPAIGN_API_KEY=sandbox.api_keys[0],
        JUPYTER_PATH=str(write_kernelspec(base / "share")),
        JUPYTER_CONFIG_DIR=str(home / "jupyter-config"),
        JUPYTER_DATA_DIR=str(home / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(home / "jupyter-runtime"),
        CAMPAIGN_TOOLKIT_JOURNAL=str(base / "journal.db"),
        PYTHONUNBUFFERED="1",
        # the kernels import this checkout, wherever an editable install points
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return env


def start_voila(
    folder: Path, env: dict[str, str], log: Path, options: tuple[str, ...] = ()
) -> Voila:
    """Voila serving ``folder`` on a free loopback port, in a process group of its own; it
    reads a ``voila.json`` in ``folder`` (its working folder), ``options`` go on its command
    line."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "voila",
        str(folder),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--show_tracebacks=True",
        *options,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Voila(process, port, log)


def kernel_processes(parent: int) -> list[int]:
    """The ids of the kernel processes (``ipykernel_launcher``) whose parent is ``parent``
    (Linux: read from ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if int(stat[1]) == parent and b"ipykernel_launcher" in command:
            found.append(int(entry.name))
    return found


# --------------------------------------------------------------------------- JupyterLab


class JupyterLab(Voila):
    """A JupyterLab server (see :mod:`tests.browser.lab`)."""

    def page(self, notebook: str) -> str:
        """The URL of ``notebook`` opened in JupyterLab."""
        return f"{self.url}/lab/tree/{notebook}"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable; skips the test where it, Playwright or Voila is missing."""
    reason = why_skip()
    if reason:
        pytest.skip(reason)
    return find_chromium()[0]  # type: ignore[return-value]


@pytest.fixture(scope="package")
def browser_sandbox(chromium: str) -> Iterator[Sandbox]:
    """A sandbox of the browser tests' own (they change its state)."""
    with Sandbox(campaigns=12, accounts=1) as sb:
        yield sb


@pytest.fixture()
def client(browser_sandbox: Sandbox) -> Any:
    """A client of the browser sandbox's demo account, to read what the browser changed."""
    import toolkit

    return toolkit.connect(api_key=browser_sandbox.api_keys[0], base_url=browser_sandbox.url)


@pytest.fixture(scope="package")
def voila(browser_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Voila]:
    """Voila serving a copy of this folder's notebooks against :func:`browser_sandbox`."""
    base = tmp_path_factory.mktemp("voila")
    served = base / "notebooks"
    served.mkdir()
    for notebook in HERE.glob("*.ipynb"):
        shutil.copy(notebook, served / notebook.name)
    server = start_voila(served, voila_env(base, browser_sandbox), base / "voila.log")
    server.journal = base / "journal.db"
    try:
        took = server.wait_serving()
        print(f"Voila serving in {took:.1f} s")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def jupyter_lab(
    browser_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterLab]:
    """JupyterLab serving a copy of this folder's notebooks against :func:`browser_sandbox`,
    with settings of its own; skips where JupyterLab is not installed."""
    reason = lab.missing()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("lab")
    served = base / "notebooks"
    served.mkdir()
    for notebook in HERE.glob("*.ipynb"):
        shutil.copy(notebook, served / notebook.name)
    port = free_port()
    env = voila_env(base, browser_sandbox)
    process = lab.start_lab(served, base / "settings", env, base / "lab.log", port)
    server = JupyterLab(process, port, base / "lab.log", base / "journal.db")
    try:
        took = server.wait_serving(lab.LAB_START)
        print(f"JupyterLab serving in {took:.1f} s")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def browser(chromium: str) -> Iterator[Any]:
    """Headless Chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        launched = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
    finally:
        pw.stop()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (a context of its own) with bounded waits."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ACTION_TIMEOUT)
    expect.set_options(timeout=ACTION_TIMEOUT)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


@pytest.fixture()
def open_notebook(voila: Voila, page: Any) -> Callable[[str], Any]:
    """``open_notebook("forms.ipynb")``: the page, once Voila has run every cell; a cell that
    raised fails the test with its traceback."""

    def open_(name: str) -> Any:
        # Voila sends the page as the cells run: the document is complete after the last one.
        page.goto(voila.page(name), wait_until="domcontentloaded")
        page.wait_for_function(
            "() => !document.querySelector('#loading') || "
            "getComputedStyle(document.querySelector('#loading')).display === 'none'"
        )
        errors = page.locator(STDERR).filter(has_text="Traceback")
        if errors.count():
            pytest.fail(f"{name} raised in Voila:\n{errors.first.inner_text()}", pytrace=False)
        return page

    return open_


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests save their screenshots (a temporary folder)."""
    return tmp_path_factory.mktemp("screenshots")
