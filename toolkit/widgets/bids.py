"""``BidForm``: the country bids of the selected campaigns in one paged table, the minimum,
recommended price and zone of each beside it (asked on a button: it costs price calls), and
edits of the rows shown: absolute, by a percentage, to the minimum, to the recommended price,
capped at the recommended price; countries added and removed.

>>> form = toolkit.widgets.BidForm(client, [1000001])                 # doctest: +SKIP
>>> form.prices_button.click()                                         # doctest: +SKIP
>>> form.how.value = "minimum"; form.change_button.click()            # doctest: +SKIP
>>> form.plan()                                                        # doctest: +SKIP
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
import numpy as np
import pandas as pd

from .. import spec
from ..frames.account_set import ACCOUNT
from ..reports import bid_report
from ..reports.zones import ZONES, zone
from .edits import BID_EDITS, COUNTRIES, add_countries, drop_countries, new_bids
from .form import Form, button
from .kinds import dictionary_options
from .money import MoneyText, parse_amount

PAGE_ROWS = 50


class BidForm(Form):
    """Country bids. Widgets: ``countries`` (SelectMultiple, ``Countries``: the rows' countries;
    none picked = all), ``zone_filter`` (Dropdown, ``Zone``: the zone of each bid with the
    edits), ``prices_button`` (``ct-prices``),
    ``bids_view`` (HTML, ``ct-bid-table``, one page), ``prev_button``/``next_button``
    (``ct-prev``/``ct-next``), ``how`` (Dropdown, ``Edit``: ``set``, ``percent``, ``minimum``,
    ``recommended``, ``cap``), ``amount`` (:class:`~toolkit.widgets.money.MoneyText`,
    ``Value``: USD, or % for a change), ``change_button``
    (``ct-change``), ``new_country`` (Dropdown, ``Country``), ``new_bid`` (MoneyText,
    ``Bid (USD)``), ``add_button`` (``ct-add-country``), ``remove_button``
    (``ct-remove-country``). CSS class ``ct-bid-form``."""

    css = "ct-bid-form"
    key = "bids"
    title = "Country bids"

    @property
    def prices(self) -> pd.DataFrame | None:
        """The prices asked (Get prices), of the account in focus over several accounts."""
        return self._prices.get(self.focused)

    @prices.setter
    def prices(self, value: pd.DataFrame | None) -> None:
        self._prices[self.focused] = value

    def build(self) -> list[w.Widget]:
        self.page = 0
        self._prices: dict[str | None, pd.DataFrame | None] = {}
        self.report = None
        self.countries = w.SelectMultiple(options=[], rows=6, description="Countries")
        self.zone_filter = w.Dropdown(
            options=[("(any)", None), *[(z, z) for z in ZONES]],
            description="Zone",
            tooltip="rows of one zone (after Get prices)",
        )
        self.prices_button = button(
            "Get prices",
            "ask the minimum and recommended prices (one price call per distinct targeting)",
            "ct-prices",
        )
        self.bids_view = w.HTML()
        self.bids_view.add_class("ct-bid-table")
        self.prev_button = button("Previous page", "previous page of rows", "ct-prev")
        self.next_button = button("Next page", "next page of rows", "ct-next")
        self.page_label = w.HTML()
        self.how = w.Dropdown(
            options=[(label, k) for k, (label, _p) in BID_EDITS.items()],
            value="set",
            description="Edit",
            tooltip="how to change the bids",
        )
        self.amount = MoneyText("Value", tooltip="USD, or % for a change (-5 lowers by 5 %)")
        self.change_button = button(
            "Change bids of the rows", "change the bids of the rows shown (all pages)", "ct-change"
        )
        self.new_country = w.Dropdown(options=[], description="Country")
        self.new_bid = MoneyText("Bid (USD)", tooltip="the bid of the country added")
        self.add_button = button("Add country", "target the country at the bid", "ct-add-country")
        self.remove_button = button(
            "Remove countries",
            "stop targeting the countries picked under Countries",
            "ct-remove-country",
        )
        for box in (self.countries, self.zone_filter):
            box.observe(lambda _c: self._guarded("filter", self._first_page), "value")
        each = self.for_each_account  # over several accounts, once per account
        wire = {
            self.prices_button: ("prices", lambda: each(self.ask_prices)),
            self.prev_button: ("page", lambda: self._turn(-1)),
            self.next_button: ("page", lambda: self._turn(1)),
            self.change_button: ("change bids", lambda: each(self.change)),
            self.add_button: ("add country", lambda: each(self.add_country)),
            self.remove_button: ("remove countries", lambda: each(self.remove_countries)),
        }
        for b, (name, func) in wire.items():
            b.on_click(lambda _b, name=name, func=func: self._guarded(name, func))
        return [
            w.HBox([self.countries, w.VBox([self.zone_filter, self.prices_button])]),
            w.HBox([self.prev_button, self.page_label, self.next_button]),
            self.bids_view,
            w.HBox([self.how, self.amount, self.change_button]),
            w.HBox([self.new_country, self.new_bid, self.add_button, self.remove_button]),
        ]

    # ------------------------------------------------------------------ rows

    def rows(self) -> pd.DataFrame:
        """The rows the edits apply to: bids of the selected campaigns (with the edits), of the
        countries picked (all when none) and of the zone picked; the prices beside them. Over
        several accounts (none in focus): every account's, ``account`` first."""
        if self.accounts is not None and self.focused is None:
            parts = self.per_account(self.rows)
            if not parts:
                return self._no_rows()
            framed = []
            for name, part in parts.items():
                part = part.copy()
                part.insert(0, ACCOUNT, name)
                framed.append(part)
            return pd.concat(framed, ignore_index=True)
        geo = spec.bid_kind().column
        df = self.table_rows()
        if self.countries.value:
            df = df[df[geo].isin(list(self.countries.value))]
        if self.zone_filter.value is not None:
            df = df[df["zone"].astype(object) == self.zone_filter.value]
        return df

    def table_rows(self) -> pd.DataFrame:
        geo = spec.bid_kind().column
        df = self.table(COUNTRIES)
        df = df[df["campaign_id"].isin(list(self.selected))]
        out = df[["campaign_id", geo, "bid"]].copy()
        out["_row"] = df.index
        if self.prices is not None and len(self.prices):
            out = out.merge(self.prices, on=["campaign_id", geo], how="left")
        else:
            out["minimum"] = out["recommended"] = np.nan
        out["zone"] = [  # of the bid with the edits
            zone(b, m, r) if pd.notna(m) and pd.notna(r) else None
            for b, m, r in zip(out["bid"], out["minimum"], out["recommended"], strict=True)
        ]
        return out.set_index("_row")

    def ask_prices(self) -> None:
        """The bid report of the selected campaigns (their prices, asked now)."""
        if not self.selected:
            raise ValueError("select campaigns first")
        report = bid_report(
            self.account,
            list(self.selected),
            client=self.session.client,
            progress=False,
            history=None,
            include="all",  # the campaigns picked, live or not
        )
        self.report = report
        geo = spec.bid_kind().column
        f = report.frame
        prices = f[["campaign_id", geo, "minimum", "recommended"]].copy()
        comparable = f["comparable"].astype(bool).to_numpy()
        for col in ("minimum", "recommended"):  # only in the bid's unit
            prices[col] = prices[col].where(comparable, np.nan)
        old = self.prices if self.prices is not None else prices.iloc[:0]
        merged = pd.concat([old, prices], ignore_index=True)
        self.prices = merged.drop_duplicates(["campaign_id", geo], keep="last")
        whose = f"{self.focused}: " if self.focused else ""
        self.say(f"{whose}prices of {len(f):,} row(s) asked in {report.calls} price call(s)", "ok")
        if self.focused is None:
            self.redraw()

    def plan_options(self) -> dict[str, Any]:
        """The minimum prices asked (Get prices), in the bid's unit: the planner's
        ``bid_jump`` guard refuses a bid set below them (unless its allow box is ticked)."""
        if self.prices is None or not len(self.prices):
            return {}
        geo = spec.bid_kind().column
        known = self.prices[self.prices["minimum"].notna()]
        return {
            "minimum_prices": {
                (int(c), str(g)): float(m)
                for c, g, m in zip(known["campaign_id"], known[geo], known["minimum"], strict=True)
            }
        }

    # ------------------------------------------------------------------ edits

    def change(self) -> None:
        """Change the bids of :meth:`rows` as ``how`` and ``amount`` say."""
        if not self.selected:
            raise ValueError("select campaigns first: an edit goes to the selected campaigns")
        rows = self.rows()
        if not len(rows):
            raise ValueError("no row to change: select campaigns (and countries)")
        how = self.how.value
        amount = None
        if not BID_EDITS[how][1]:  # the edits by an amount read it, the others need prices
            amount = parse_amount(
                self.amount.value, self.amount.description, unit="%" if how == "percent" else "USD"
            )
        elif rows["minimum"].isna().all():
            raise ValueError("no price for these rows: ask them first (the Get prices button)")
        new = new_bids(rows["bid"], how, amount, rows["minimum"], rows["recommended"])
        moved = new.notna() & (new.round(6) != rows["bid"].round(6))
        df = self.table(COUNTRIES).copy()
        df.loc[new.index[moved], "bid"] = new[moved].to_numpy()
        label = BID_EDITS[how][0] + (f" {amount:g}" if amount is not None else "")
        self.edit(COUNTRIES, df, f"bids {label}: {int(moved.sum()):,} of {len(rows):,} row(s)")

    def add_country(self) -> None:
        code = self.new_country.value
        if not code:
            raise ValueError("pick a country to add")
        ids = self._allowed()
        bid = self.new_bid.amount()
        df = add_countries(self.table(COUNTRIES), ids, [code], bid)
        self.edit(COUNTRIES, df, f"add country {code} at {bid:g} on {len(ids):,} campaign(s)")

    def remove_countries(self) -> None:
        codes = list(self.countries.value)
        if not codes:
            raise ValueError("pick the countries to remove under Countries")
        df = drop_countries(self.table(COUNTRIES), list(self.selected), codes)
        self.edit(
            COUNTRIES,
            df,
            f"remove country {', '.join(codes)} from {len(self.selected):,} campaign(s)",
        )

    def _allowed(self) -> list[int]:
        kind = spec.bid_kind()
        formats = self.session.campaign_formats().reindex(list(self.selected)).dropna()
        ids = [int(c) for c, f in formats.items() if kind.allowed_for(f)]
        if not ids:
            raise ValueError("select campaigns first")
        return ids

    # ------------------------------------------------------------------ view

    def _first_page(self) -> None:
        self.page = 0
        self._draw_table()

    def _turn(self, step: int) -> None:
        self.page = max(0, self.page + step)
        self._draw_table()

    def _present(self) -> set[str]:
        """The countries of the selected campaigns (with the edits)."""
        if self.accounts is not None and self.focused is None:
            return set().union(*self.per_account(self._present).values())
        geo = spec.bid_kind().column
        df = self.table(COUNTRIES)
        return set(df.loc[df["campaign_id"].isin(list(self.selected)), geo].dropna())

    def _no_rows(self) -> pd.DataFrame:
        geo = spec.bid_kind().column
        columns = ["campaign_id", geo, "bid", "minimum", "recommended", "zone", ACCOUNT]
        return pd.DataFrame({c: [] for c in columns})

    def _refs(self) -> dict[str, pd.DataFrame]:
        """The service's dictionaries (of the first account, over several)."""
        if self.accounts is None:
            return self.account.refs
        return self.accounts.session(self.accounts.names[0]).account.refs

    def redraw(self) -> None:
        if not hasattr(self, "countries"):
            return
        present = sorted(self._present())
        if list(v for _l, v in self.countries.options) != present:
            keep = set(self.countries.value)
            self.countries.options = [(c, c) for c in present]
            self.countries.value = tuple(c for c in present if c in keep)
        if not self.new_country.options:
            options = dictionary_options(spec.bid_kind(), self._refs(), [])
            self.new_country.options = [(label, v) for label, (_g, v) in options]
        self._draw_table()

    def _draw_table(self) -> None:
        rows = self.rows()
        pages = max(1, -(-len(rows) // PAGE_ROWS))
        self.page = min(self.page, pages - 1)
        page = rows.iloc[self.page * PAGE_ROWS : (self.page + 1) * PAGE_ROWS]
        self.page_label.value = f"page {self.page + 1} of {pages} ({len(rows):,} row(s))"
        self.bids_view.value = self._html(page)

    def _bases(self) -> dict[str | None, tuple[pd.Series, pd.Series]]:
        """Names by campaign id and loaded bids by (campaign id, country), by account."""
        geo = spec.bid_kind().column
        sessions = self.accounts.sessions if self.accounts else {None: self.session}
        return {
            n: (
                s.account.campaigns.set_index("id")["name"],
                s.account.countries.set_index(["campaign_id", geo])["bid"],
            )
            for n, s in sessions.items()
        }

    def _html(self, page: pd.DataFrame) -> str:
        geo = spec.bid_kind().column
        bases = self._bases()
        several = ACCOUNT in page
        cells = []
        for row in page.itertuples(index=False):
            cid, code, bid = int(row.campaign_id), str(getattr(row, geo)), float(row.bid)
            who = str(getattr(row, ACCOUNT)) if several else None
            names, base = bases[who]
            old = base.get((cid, code), np.nan)
            shown = _money(bid) if old == bid else f"{_money(old)} &rarr; <b>{_money(bid)}</b>"
            first = f"<td>{html.escape(str(who))}</td>" if several else ""
            cells.append(
                f"<tr>{first}<td>{cid}</td><td>{html.escape(str(names.get(cid, '')))}</td>"
                f"<td>{html.escape(code)}</td><td>{shown}</td><td>{_money(row.minimum)}</td>"
                f"<td>{_money(row.recommended)}</td>"
                f"<td>{html.escape(_word(row.zone))}</td></tr>"
            )
        columns = ("campaign", "name", geo, "bid", "minimum", "recommended", "zone")
        head = "".join(f"<th>{h}</th>" for h in ((ACCOUNT,) if several else ()) + columns)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(cells)}</tbody></table>"


def _word(value: object) -> str:
    """A cell's text: empty for a missing value (None, NaN, NA), never ``nan``."""
    return "" if value is None or bool(pd.isna(value)) else str(value)  # type: ignore[arg-type]


def _money(value: object) -> str:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    return "" if np.isnan(number) else f"{number:.4f}".rstrip("0").rstrip(".")


__all__ = ["PAGE_ROWS", "BidForm"]
