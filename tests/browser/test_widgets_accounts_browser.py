"""The forms over several accounts in a real browser: a notebook opening
``toolkit.widgets.open(accounts="all")`` on a sandbox of three accounts (named by a config
file's profiles, each key in a variable of Voila's environment, none in a file), served by
Voila and driven in headless Chromium. Picking an account in the picker's Account filter
narrows the campaigns to that account's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from toolkit.client.client import sandbox_client
from toolkit.sandbox import Sandbox

from .conftest import STDERR, Voila, start_voila, voila_env

pytestmark = pytest.mark.browser

NAMES = ["north", "south", "east"]
NOTEBOOK = "accounts.ipynb"
CELLS = [
    "# The forms over several accounts",
    'import toolkit.widgets\n\napp = toolkit.widgets.open(accounts="all")\napp',
]


@pytest.fixture(scope="module")
def three(chromium: str) -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, accounts=3, seed=5) as sb:
        yield sb


def write_notebook(folder: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(CELLS[0]), nbformat.v4.new_code_cell(CELLS[1])]
    nbformat.write(nb, folder / NOTEBOOK)


def write_config(path: Path, sb: Sandbox) -> None:
    """The profiles of the three accounts; their keys are read from variables."""
    tables = "".join(f'\n[profiles.{n}]\napi_key_env = "KEY_{n.upper()}"\n' for n in NAMES)
    path.write_text(f'[default]\nbase_url = "{sb.url}"\n{tables}', encoding="utf-8")


@pytest.fixture(scope="module")
def accounts_voila(three: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Voila]:
    base = tmp_path_factory.mktemp("voila-accounts")
    served = base / "notebooks"
    served.mkdir()
    write_notebook(served)
    write_config(base / "config.toml", three)
    env = voila_env(base, three)
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        env.pop(name)  # the profiles bring their own keys
    env["CAMPAIGN_TOOLKIT_CONFIG"] = str(base / "config.toml")
    env.update({f"KEY_{n.upper()}": k for n, k in zip(NAMES, three.api_keys, strict=True)})
    server = start_voila(served, env, base / "voila.log")
    try:
        server.wait_serving()
        yield server
    finally:
        server.stop()


def listed(sb: Sandbox, index: int) -> list[int]:
    return sorted(int(c["id"]) for c in sandbox_client(sb, index).campaigns.list())


def test_picking_an_account_narrows_the_picker(
    accounts_voila: Voila, three: Sandbox, page: Any, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    page.goto(accounts_voila.page(NOTEBOOK), wait_until="domcontentloaded")
    picker = page.locator(".ct-picker")
    expect(picker).to_be_visible()
    errors = page.locator(STDERR).filter(has_text="Traceback")
    assert not errors.count(), errors.first.inner_text()
    options = picker.locator("select[multiple] option")
    every = sum(len(listed(three, i)) for i in range(3))
    expect(options).to_have_count(every)
    shown = "s => s.selectedIndex < 0 ? '' : s.options[s.selectedIndex].text"
    for label in ("Account", "Format", "Buying model", "Status", "Work status"):
        assert picker.get_by_label(label, exact=True).evaluate(shown) == "(any)", label
    picker.get_by_label("Account").select_option("south")
    south = listed(three, 1)
    expect(options).to_have_count(len(south))
    texts = options.all_inner_texts()
    assert [int(re.match(r"south\s+(\d+)", t).group(1)) for t in texts] == south, texts
    count = picker.locator(".ct-count")
    expect(count).to_contain_text(f"{len(south)} of {every} match")
    path = screenshots / "widgets_accounts.png"
    page.locator(".ct-app").screenshot(path=path)
    print(f"screenshot: {path}")
