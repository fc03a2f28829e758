"""The main job, on a fresh sandbox of its own (``campaign-toolkit demo``): load the account,
export it, edit from a template, plan, apply, report on the bids, and run performance rules
over the demo account's tracker statistics (backtested against a threshold rule first).

The demo never touches the user's built-in sandbox (``toolkit.connect()`` without a key) nor a
configured account: it starts a sandbox in memory and stops it at the end. Its first line says
where it writes its files, and warns when that folder is inside a git checkout.

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


def demo_rules(when: str = "p_loss >= 0.95 and clicks >= 200", **extra: Any) -> dict[str, Any]:
    """The demo's rules: blacklist the subIds and the sources for which ``when`` holds over
    the last 14 days (``extra`` fields, ``limit=20`` say, added to both)."""
    rules = [
        {"name": f"{level}s: {when}", "level": level, "when": when, "action": "blacklist"} | extra
        for level in ("subid", "source")
    ]
    return {"window": 14, "rules": rules}


def _threshold(x: float) -> dict[str, Any]:
    """The common tools' rule: ``cost > x and conversions = 0``."""
    return demo_rules(f"cost > {x:.2f} and conversions = 0")


#: What the demo statistics are made of (toolkit/sandbox/stats_model.py), as the demo says it.
STATS_WORDS = (
    "   {days} days of the demo account's clicks, each in one source, one subId and one country"
    " (a campaign's levels add up to the same clicks, cost and revenue); revenue at each"
    " country's payout ({payouts}); exported on {last}, so the last week's conversions are"
    " still arriving (the last day shows about {known:.0f} % of its conversions)"
)


def _rules_step(client: Any, out: Path, quiet: bool) -> Any:
    """Statistics, a backtest against the threshold rule saving as much, and the plan."""
    import yaml

    import toolkit

    from .bulk.preview import Pointers
    from .frames.cells import write_csv
    from .rules import match_cost_saved, side_by_side
    from .sandbox.stats_gen import DELAY

    truth = client.sandbox.stats_export(out / "stats.csv", days=28, seed=5)
    stats = toolkit.read_stats(out / "stats.csv")
    print(f"5. Rules over {len(stats):,} rows of tracker statistics ({out / 'stats.csv'})")
    last, days = stats["date"].max().date(), stats["date"].nunique()
    known = DELAY[0] * 100  # the share of a day's conversions known on the day itself
    print(STATS_WORDS.format(days=days, last=last, payouts=out / "payouts.csv", known=known))
    print("   Backtest over 28 days, the threshold tuned to save the same cost:", flush=True)
    ours = toolkit.backtest(demo_rules(), stats, truth=truth, progress=not quiet)
    saved = float(ours.summary["cost_saved"].iloc[0])
    x, theirs = match_cost_saved(
        _threshold, saved, stats, 0.0, 64.0, steps=8, truth=truth, progress=not quiet
    )
    both = side_by_side({"statistical": ours, f"cost > {x:.2f} and conversions = 0": theirs})
    write_csv(both.summary, out / "backtest.csv")
    print(both.summary.round(3).to_string(index=False))
    rules = demo_rules(limit=3)
    (out / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False), "utf-8")
    journal = out / "journal.db"  # what the rules did is remembered where the run is journaled
    plan, decisions = toolkit.evaluate_rules(
        out / "rules.yaml", out / "stats.csv", client, journal=journal
    )
    write_csv(decisions, out / "decisions.csv")
    every = Pointers(changes=f"{out / 'decisions.csv'} lists every decision")  # not plan.changes()
    print(plan.summary(max_calls=6, max_lines=2, pointers=every))
    return plan.apply(client, progress=not quiet, journal=journal)


def git_checkout(folder: Path) -> Path | None:
    """The git checkout (work tree) ``folder`` is in, if any.

    >>> git_checkout(Path("/")) is None
    True
    """
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            return parent
    return None


def _ignored(checkout: Path, out: Path) -> bool:
    """Whether git ignores ``out`` in ``checkout`` (False when git cannot say)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "check-ignore", "-q", str(out / "account.xlsx")],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def where_line(out: Path) -> str:
    """The demo's first line: where its files go, and whether that is inside a git checkout."""
    checkout = git_checkout(out)
    if checkout is None:
        return f"The demo writes its files into {out}/ (--out DIR to choose another folder)"
    if _ignored(checkout, out):
        return (
            f"The demo writes its files into {out}/, inside the git checkout {checkout} (which"
            " ignores them; --out DIR to choose another folder)"
        )
    return (
        f"The demo writes its files into {out}/, inside the git checkout {checkout}, which"
        f" would show them as new files: choose a folder outside it with --out DIR, or add"
        f" {out.name}/ to its .gitignore"
    )


def run_demo(out: Path, *, quiet: bool = False) -> int:
    """Run the main job into the folder ``out`` on a fresh sandbox of its own; 0 when every
    item was applied, else 3."""
    from .client.client import sandbox_client
    from .sandbox import Sandbox

    out = out.expanduser().absolute()
    print(where_line(out), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with Sandbox() as sandbox, sandbox_client(sandbox) as client:
        return _steps(client, out, quiet)


def _steps(client: Any, out: Path, quiet: bool) -> int:
    import toolkit

    from .bulk.workbook import export_workbook
    from .bulk.workbook.actions import TEMPLATES, plan_actions, write_template
    from .frames.cells import write_csv

    print(f"1. Loading the account from a fresh sandbox at {client.base_url} ...")
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
    write_csv(frame, out / "result.csv")
    report = toolkit.bid_report(client, progress=not quiet, history=out / "prices.db")
    print(f"4. Bid report: {report.to_html(out / 'bids.html')}")
    print(report)
    ruled = _rules_step(client, out, quiet)
    print(ruled.summary())
    print(
        f"6. Files left for you in {out}/: account.xlsx (the export), actions.xlsx (the edit),"
        " result.csv (one row per campaign and item), journal.db (for undo), bids.html (the"
        " bid estimate report), prices.db (the prices asked), stats.csv (tracker statistics),"
        " payouts.csv (the payout per campaign and country),"
        " rules.yaml (the rules), backtest.csv (statistical vs threshold rule), decisions.csv"
        " (every decision with its numbers)"
    )
    return 0 if result.ok and ruled.ok else 3
