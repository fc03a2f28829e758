"""JupyterLab for the browser tests: a server on a free loopback port with settings, workspaces
and a theme of its own (in a temporary folder), and the steps a person takes in it: open a
notebook, wait for its kernel, Run All, switch the theme.

The theme and the news pop-up are set by an ``overrides.json`` in a temporary application
settings folder (``--LabApp.app_settings_dir``): it holds the defaults of
``@jupyterlab/apputils-extension:themes`` (``{"theme": "JupyterLab Light"}``) and turns off the
news and update notices that would cover the page. A test switches the theme as the menu
does, with the command ``apputils:change-theme`` (the choice goes to the temporary user
settings, so a test that switches back leaves the next one as it found it).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"
#: Seconds JupyterLab may take to answer its first request.
LAB_START = 90


def missing() -> str | None:
    """Why JupyterLab cannot run here, or None."""
    if importlib.util.find_spec("jupyterlab") is None:
        return "jupyterlab not installed (pip install -e '.[dev]')"
    return None


def overrides(theme: str = LIGHT) -> dict[str, Any]:
    """The ``overrides.json`` of the tests' JupyterLab: its theme, and no news or update
    notices."""
    return {
        "@jupyterlab/apputils-extension:themes": {"theme": theme},
        "@jupyterlab/apputils-extension:notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }


def lab_argv(folder: Path, settings: Path, port: int) -> list[str]:
    """The command line of JupyterLab serving ``folder``; ``settings`` holds its own
    application settings, user settings and workspaces."""
    app = settings / "app-settings"
    app.mkdir(parents=True, exist_ok=True)
    (app / "overrides.json").write_text(json.dumps(overrides()), encoding="utf-8")
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.root_dir={folder}",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.app_settings_dir={app}",
        f"--LabApp.user_settings_dir={settings / 'user-settings'}",
        f"--LabApp.workspaces_dir={settings / 'workspaces'}",
    ]


def start_lab(folder: Path, settings: Path, env: dict[str, str], log: Path, port: int) -> Any:
    """JupyterLab in a process group of its own, its output in ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            lab_argv(folder, settings, port),
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


KERNEL_STATUS = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session
        && w.sessionContext.session.kernel;
    return k ? k.status : null;
}"""


def run_notebook(page: Any, url: str) -> Any:
    """Open the notebook at ``url`` in JupyterLab, wait for its kernel, Run All (the command
    of the Run menu) and wait until the forms show; the page."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    page.wait_for_function(f"() => ({KERNEL_STATUS})() === 'idle'")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".ct-app").wait_for(state="visible")
    return page


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab's theme as the Settings menu does; waits until it is applied."""
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    light = "true" if theme == LIGHT else "false"
    page.wait_for_function(
        f"() => document.body.dataset.jpThemeLight === '{light}'"
        " && !document.querySelector('#jupyterlab-splash')"
    )
