"""The read-only cells of rows a person added to a workbook's sheet: a new country's name
and a new target's label come from the account's dictionaries saved with the export; the
other read-only cells are left empty."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ... import spec
from .checks import Context, item_kind, key_matches
from .layout import SHEETS


def new_rows(table: str, df: pd.DataFrame, ctx: Context) -> np.ndarray | None:
    """Rows whose key was not exported, on a sheet with read-only columns (None when there
    are none, or nothing to compare with)."""
    base = ctx.base.get(table)
    sheet = SHEETS[table]
    if base is None or not sheet.read_only or df.empty:
        return None
    new = ~key_matches(df, base, list(sheet.key))
    return new if new.any() else None


def fill_read_only(table: str, df: pd.DataFrame, new: np.ndarray, ctx: Context) -> None:
    """The read-only cells of new rows: names from the dictionaries, the others empty."""
    sheet = SHEETS[table]
    for col in sheet.read_only:
        if col not in sheet.key:
            df.loc[new, col] = None
    if table == "countries":
        names = _ref_map(ctx.refs.get(spec.bid_kind().labels or ""), "code")
        code = spec.bid_kind().column
        df.loc[new, "country_name"] = df.loc[new, code].map(names, na_action="ignore")
    if table == "targets":
        labels = _Labels(ctx)
        df.loc[new, "label"] = [
            labels.of(kind, value, cid)
            for kind, value, cid in zip(
                df.loc[new, "kind"], df.loc[new, "value"], df.loc[new, "campaign_id"], strict=True
            )
        ]


def _ref_map(df: pd.DataFrame | None, by: str = "id") -> dict[str, str]:
    if df is None or df.empty or by not in df:
        return {}
    keys = df[by].astype(object)
    return {
        str(k): v
        for k, v in zip(keys, df["name"].astype(object), strict=True)
        if k is not None and k is not pd.NA
    }


class _Labels:
    """The label of a target: its value's name in the dictionary of its kind (``labels``,
    grouped by the campaign's format when the kind says ``by_format``)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.maps: dict[tuple[str, str | None], dict[str, str]] = {}

    def of(self, column: Any, value: Any, campaign_id: Any) -> str | None:
        kind = item_kind(column)
        if kind is None or kind.labels is None or value is None or value is pd.NA:
            return None
        fmt = self.ctx.formats.get(int(campaign_id)) if pd.notna(campaign_id) else None
        if kind.by_format and fmt is None:
            return None
        key = (kind.name, kind.label_group(fmt) if fmt else None)
        if key not in self.maps:
            self.maps[key] = _ref_map(self.ctx.labels(kind, fmt))
        return self.maps[key].get(str(value))


__all__ = ["fill_read_only", "new_rows"]
