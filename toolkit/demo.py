"""The main job, on the built-in sandbox (``campaign-toolkit demo``): load the account,
export it, edit from a template, plan, apply, and report on the bids.

>>> run_demo(Path("campaign-toolkit-demo"))                          # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import spec


def _edit_rows(account: Any) -> tuple[list[dict[str, Any]], int]:
    """Rows of a blacklist action workbook: 3 subIds blacklisted in every push campaign and
    the first bid of 3 campaigns raised by 10%; and how many bids that is."""
    bids = spec.bid_kind()
    countries = account.table("countries").groupby("campaign_id").head(1).head(3)
    rows = [
        {"action": "add", "target": "subid_black", "campaign": "push", "item": sub}
        for sub in ("deadbeef01", "deadbeef02", "deadbeef03")
    ]
    rows += [
        {
            "action": "set",
            "target": bids.name,
            "campaign": int(r["campaign_id"]),
            "item": r[bids.column],
            "bid": round(float(r["bid"]) * 1.1, 4),
        }
        for r in countries.to_dict("records")
    ]
    return rows, len(countries)


def run_demo(out: Path, *, quiet: bool = False) -> int:
    """Run the main job into the folder ``out``; 0 when every item was applied, else 3."""
    import toolkit

    from .bulk.actions import TEMPLATES, plan_actions, write_template
    from .bulk.workbook import export_workbook

    out.mkdir(parents=True, exist_ok=True)
    client = toolkit.connect(api_key=None, base_url=None)
    print(f"1. Loading the account from {client.base_url} ...")
    account = toolkit.load_account(client, progress=not quiet)
    print(account)
    print(f"2. Exported {export_workbook(account, out / 'account.xlsx')}")
    rows, raised = _edit_rows(account)
    title, text, _examples = TEMPLATES["blacklist.xlsx"]
    actions = write_template(out / "actions.xlsx", title, text, rows)
    print(
        f"3. Edit from the blacklist template ({actions}): 3 subIds blacklisted in every push"
        f" campaign, {raised} country bids raised by 10%"
    )
    plan = plan_actions(client, actions)
    print(plan.summary())
    print(
        plan.to_frame()[["step", "action", "target", "campaigns", "items"]].to_string(index=False)
    )
    result = plan.apply(client, progress=not quiet, journal=out / "journal.db")
    frame = result.to_frame()
    print(result.summary())
    shown = ["action", "target", "campaign_id", "item", "bid", "outcome"]
    print(frame[shown].head(15).to_string(index=False))
    frame.to_csv(out / "result.csv", index=False)
    report = toolkit.bid_report(client, progress=not quiet, history=out / "prices.db")
    print(f"4. Bid report: {report.to_html(out / 'bids.html')}")
    print(report)
    print(
        f"5. Files left for you in {out}/: account.xlsx (the export), actions.xlsx (the edit),"
        " result.csv (one row per campaign and item), journal.db (for undo), bids.html (the"
        " bid estimate report), prices.db (the prices asked)"
    )
    return 0 if result.ok else 3
