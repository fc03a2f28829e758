"""``campaign-toolkit sandbox reset``: the built-in sandbox's state (or ``--db FILE``) seeded
anew.

>>> reset(argparse.Namespace(db="state.db", campaigns=5, seed=1))    # doctest: +SKIP
Reset the sandbox state in /home/me/state.db: ...
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path


def reset(args: argparse.Namespace) -> int:
    """Seed the state anew and say which file, what it held and what it holds now."""
    from .datadir import sandbox_state
    from .sandbox import Sandbox

    path = Path(args.db).expanduser().absolute() if args.db else sandbox_state()
    which = "the sandbox state" if args.db else "the built-in sandbox's state"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        before = Sandbox.reset_file(path, campaigns=args.campaigns, seed=args.seed)
    except sqlite3.Error as exc:
        print(
            f"campaign-toolkit: {path}: cannot be reset ({exc}); nothing changed: if it is not a"
            " sandbox state, move it away first",
            file=sys.stderr,
        )
        return 2
    print(f"Reset {which} in {path}:")
    if before is None:
        print("  before: no demo account (a new file)")
    else:
        print(f"  before: a demo account of {before} campaign(s), with every change made to it")
    print(f"  now: the demo account seeded anew, {args.campaigns} campaign(s) (seed {args.seed})")
    if before is not None:
        print(
            "Runs journaled before stay in the history, bound to the old state: undo and repair"
            " refuse them. Commands running on the state now go on with the new one."
        )
    return 0


__all__ = ["reset"]
