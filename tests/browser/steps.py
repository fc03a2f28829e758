"""Steps of the browser tests that type and click as a person does, and the readings that
check their outcome without the form: the sandbox (through a client of the test's own), the
journal file the kernels write, and the colours Chromium renders.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

import toolkit
from toolkit.bulk.journal import Journal

#: The form's buttons a run disables.
RUN_BUTTONS = (".ct-preview", ".ct-apply", ".ct-undo", ".ct-clear")

# --------------------------------------------------------------------------- the sandbox


def started(client: Any) -> list[int]:
    """The ids of the started campaigns (the ones the tests edit)."""
    listed = client.campaigns.list()
    return sorted(int(c["id"]) for c in listed if c.get("work_status") == "Started")


def country_bids(client: Any, ids: list[int]) -> dict[tuple[int, str], float]:
    """``{(campaign id, country): bid}`` as the sandbox has them now."""
    c = toolkit.load_account(client, ids, progress=False).countries
    return {(int(r.campaign_id), str(r.country)): float(r.bid) for r in c.itertuples(index=False)}


def busiest_country(bids: dict[tuple[int, str], float]) -> tuple[str, list[int]]:
    """The country most campaigns of ``bids`` bid on, and those campaigns."""
    by_country: dict[str, list[int]] = {}
    for cid, code in bids:
        by_country.setdefault(code, []).append(cid)
    code = max(sorted(by_country), key=lambda c: len(by_country[c]))
    return code, sorted(by_country[code])


def bids_of(client: Any, ids: list[int], code: str) -> dict[int, float]:
    """The bids on ``code`` of campaigns ``ids``."""
    return {cid: bid for (cid, c), bid in country_bids(client, ids).items() if c == code}


# --------------------------------------------------------------------------- the journal


def runs(journal: Path) -> pd.DataFrame:
    """The runs of the journal file the kernels write (empty before the first run)."""
    if not journal.exists():
        return pd.DataFrame(columns=["run_id", "undoes"])
    return Journal(journal).runs()


def applied(journal: Path) -> list[str]:
    """The ids of the runs that apply edits (not undos), oldest first."""
    r = runs(journal)
    return [str(i) for i in r.loc[r["undoes"].isna(), "run_id"]]


def undos(journal: Path) -> dict[str, str]:
    """``{undo run id: the run it undoes}``."""
    r = runs(journal)
    r = r[r["undoes"].notna()]
    return dict(zip(r["run_id"].astype(str), r["undoes"].astype(str), strict=True))


# --------------------------------------------------------------------------- the page


def pick_started(page: Any, expected: list[int]) -> Any:
    """Filter the picker on work status Started and select all that match."""
    from playwright.sync_api import expect

    picker = page.locator(".ct-picker")
    picker.get_by_label("Work status").select_option("Started")
    picker.get_by_role("button", name="Select all matching").click()
    n = len(expected)
    count = picker.locator(".widget-html-content").filter(has_text="selected")
    expect(count).to_contain_text(re.compile(rf"{n} of \d+ match, {n} selected"))
    return picker


def open_tab(page: Any, title: str, form_css: str) -> Any:
    """Click the tab ``title``; its form (CSS class ``form_css``)."""
    from playwright.sync_api import expect

    page.locator(".ct-tabs").get_by_role("tab", name=title).click()
    form = page.locator(f".{form_css}")
    expect(form).to_be_visible()
    return form


def status(form: Any) -> Any:
    return form.locator(".ct-status")


#: Milliseconds between two keys typed (a quick typist: ten keys a second).
KEY_DELAY = 100


def type_into(box: Any, text: str, delay: float = KEY_DELAY) -> None:
    """Click ``box``, select what it holds and type ``text`` key by key, ``delay`` ms apart,
    as a person does."""
    box.click()
    box.press("Control+a")
    box.page.keyboard.type(text, delay=delay)


def bids_form(page: Any, ids: list[int], code: str) -> Any:
    """The bids tab with the started campaigns ``ids`` picked, its rows those of ``code``,
    its edit "set to (USD)"."""
    pick_started(page, ids)
    form = open_tab(page, "Country bids", "ct-bid-form")
    form.get_by_label("Countries").select_option(code)
    form.get_by_label("Edit").select_option(label="set to (USD)")
    return form


def set_bids(form: Any, typed: str) -> None:
    """Type ``typed`` into the Value box and click "Change bids of the rows"."""
    type_into(form.get_by_label("Value", exact=True), typed)
    form.get_by_role("button", name="Change bids of the rows").click()


def sync(form: Any) -> None:
    """Wait until the kernel has handled every click sent before: a click on Preview with
    nothing pending, and its answer (the kernel handles messages in order)."""
    from playwright.sync_api import expect

    form.get_by_role("button", name="Preview").click()
    expect(status(form)).to_contain_text("Nothing to apply")


WATCH_BUSY = """(form) => {
    window.ctSawBusy = "";
    const check = () => {
        const disabled = %s.map((css) => form.querySelector(css).disabled);
        if (form.classList.contains("ct-busy") && disabled.every(Boolean))
            window.ctSawBusy = "busy, all disabled";
        else if (form.classList.contains("ct-busy") && !window.ctSawBusy)
            window.ctSawBusy = "busy";
    };
    new MutationObserver(check).observe(form, {attributes: true, subtree: true});
}""" % list(RUN_BUTTONS)  # noqa: UP031 - a JavaScript literal


def watch_busy(form: Any) -> None:
    """Record (in the page, not in the form: that would wake the observer again) whether the
    form showed its busy state (CSS class ``ct-busy``) with Preview, Apply, Undo and Clear
    disabled, however briefly."""
    form.evaluate(WATCH_BUSY)


def saw_busy(form: Any) -> str:
    return str(form.page.evaluate("() => window.ctSawBusy"))


# --------------------------------------------------------------------------- colours

EFFECTIVE_COLOURS = """(el) => {
    let bg = null;
    for (let e = el; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c && c !== "transparent" && !/rgba\\(.*,\\s*0\\)$/.test(c)) { bg = c; break; }
    }
    return [getComputedStyle(el).color, bg || getComputedStyle(document.body).backgroundColor];
}"""


def rgba(css: str) -> tuple[float, float, float, float]:
    """``rgb(…)``/``rgba(…)`` as computed by the browser: red, green, blue (0-255), alpha."""
    found = [float(v) for v in re.findall(r"[\d.]+", css)]
    assert len(found) in (3, 4), css
    return found[0], found[1], found[2], found[3] if len(found) == 4 else 1.0


def rgb(css: str) -> tuple[float, float, float]:
    """An opaque CSS colour as three 0-255 numbers."""
    return rgba(css)[:3]


def luminance(colour: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance."""

    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of text of colour ``fg`` (its alpha blended over ``bg``) on the
    opaque ``bg`` (1 to 21)."""
    *top, alpha = rgba(fg)
    under = rgb(bg)
    seen = tuple(alpha * t + (1 - alpha) * u for t, u in zip(top, under, strict=True))
    a, b = sorted((luminance(seen), luminance(under)), reverse=True)  # type: ignore[arg-type]
    return (a + 0.05) / (b + 0.05)


def status_contrast(form: Any) -> tuple[float, str, str]:
    """The contrast of the status line's text on what is behind it, and both colours."""
    fg, bg = form.locator(".ct-status span").first.evaluate(EFFECTIVE_COLOURS)
    return contrast(fg, bg), fg, bg
