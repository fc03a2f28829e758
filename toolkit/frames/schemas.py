"""The declared columns and dtypes of every frame the loaders return.

One table per frame: :data:`SCHEMAS` maps a frame's name to an ordered ``column -> dtype``
mapping. Every loader builds its frame through :func:`frame` (columns given as sequences) or
:func:`conform` (an existing DataFrame), so dtypes are never left to inference:

- ids and counts are nullable ``Int64``;
- text is ``string`` backed by pyarrow (``pd.StringDtype("pyarrow")``, missing is ``<NA>``);
- low-cardinality codes are ``category`` with a fixed, declared set of categories, so frames
  from different loads concatenate and compare equal;
- money and rates are ``float64`` (missing is ``NaN``);
- timestamps are tz-aware ``datetime64[ns, UTC]`` (the service's ``+hh:mm`` offset is
  converted to UTC).

>>> df = frame("bid_rules", {"campaign_id": [7], "item": ["ab12"], "bid": [0.05]})
>>> {col: str(dtype) for col, dtype in df.dtypes.items()}
{'campaign_id': 'Int64', 'item': 'string', 'bid': 'float64'}
>>> list(SCHEMAS["lists"])
['campaign_id', 'list', 'item']
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import spec

log = logging.getLogger("toolkit.frames")

#: Bumped whenever a schema changes; written into saved snapshots.
SCHEMA_VERSION = 1

STRING = pd.StringDtype("pyarrow")
INT = pd.Int64Dtype()
FLOAT = np.dtype("float64")
TIME = pd.DatetimeTZDtype("ns", "UTC")

Dtype = Any


def category(values: Sequence[str]) -> pd.CategoricalDtype:
    """An unordered categorical dtype over a declared set of codes."""
    return pd.CategoricalDtype(list(values), ordered=False)


# --------------------------------------------------------------------------- code sets

AD_FORMAT = category(spec.FORMAT_CODES)
CAMPAIGN_MODE = category(spec.MODES)
CAMPAIGN_STATUS = category(spec.CAMPAIGN_STATUSES)
CREATIVE_STATUS = category(spec.CREATIVE_STATUSES)
WORK_STATUS = category(spec.WORK_STATUSES)
LIST = category(spec.LISTS)
LIST_TYPE = category(spec.LIST_TYPES)
CPA_TYPE = category(spec.CPA_TYPES)
CPA_COND = category(spec.CPA_CONDS)
CPA_LEAD_TYPE = category(spec.CPA_LEAD_TYPES)
VIDEO_TYPE = category(("youtube", "video"))
VIDEO_CONVERT = category(spec.VIDEO_CONVERT_STATES)
CATEGORY_GROUP = category(sorted({f.category_group for f in spec.FORMATS.values()}))

# Limits of the detailed campaign view, each followed by its progress (``*_value``).
LIMIT_COLUMNS: dict[str, Dtype] = {}
for _lim in spec.LIMITS.values():
    _money = _lim.kind is float
    LIMIT_COLUMNS[_lim.field] = FLOAT if _money else INT
    LIMIT_COLUMNS[_lim.field + "_value"] = FLOAT if _money else INT


def kind_dtype() -> pd.CategoricalDtype:
    """The codes of ``targets.kind``: the table spelling of every kind of that table, read
    from :data:`toolkit.spec.TARGET_KINDS` when asked (a kind added at run time is one)."""
    return category([k.column for k in spec.item_kinds()])


def count_columns() -> dict[str, str]:
    """Counters of mode=count, as columns, and the detail field each counts: one per list,
    and one per ``count_fields`` entry of a kind (``n_<kind>[_<list type>]``)."""
    out = {f"n_{lk.name}": lk.detail_field for lk in spec.LISTS.values()}
    for kind in spec.TARGET_KINDS.values():
        for list_type, field in kind.count_fields.items():
            out["_".join(p for p in ("n", kind.column, list_type) if p)] = field
    return out


CAMPAIGN_LIST: dict[str, Dtype] = {
    "id": INT,
    "name": STRING,
    "ad_format": AD_FORMAT,
    "mode": CAMPAIGN_MODE,
    "status": CAMPAIGN_STATUS,
    "work_status": WORK_STATUS,
    "status_note": STRING,
    "vertical": STRING,
    "frequency_capping": INT,
    "url": STRING,
    "vast_tag": STRING,
    "note": STRING,
    "user_id": INT,
    "t_created": TIME,
}

CREATIVES: dict[str, Dtype] = {
    "id": INT,
    "campaign_id": INT,
    "title": STRING,
    "text": STRING,
    "url": STRING,
    "status": CREATIVE_STATUS,
    "work_status": WORK_STATUS,
    "icon_url": STRING,
    "image_url": STRING,
    "ctr": FLOAT,
    "t_created": TIME,
}


class _Schemas(Mapping[str, dict[str, Dtype]]):
    """Schemas by frame name; those that depend on the target kinds (``campaigns`` counters,
    ``targets.kind``, ``search.type``) are built when asked, from the kinds of that moment."""

    def __init__(self, table: dict[str, Any]) -> None:
        self._table = table

    def __getitem__(self, name: str) -> dict[str, Dtype]:
        entry = self._table[name]
        return entry() if callable(entry) else entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


#: Every frame the loaders return, by name: ``column -> dtype`` in column order.
SCHEMAS: Mapping[str, dict[str, Dtype]] = _Schemas(
    {
        "campaign_list": CAMPAIGN_LIST,
        "campaigns": lambda: {
            **CAMPAIGN_LIST,
            **LIMIT_COLUMNS,
            **dict.fromkeys(count_columns(), INT),
        },
        "countries": {
            "campaign_id": INT,
            "country": STRING,
            "country_name": STRING,
            "bid": FLOAT,
            "l_d_sum": FLOAT,
            "l_d_show": INT,
            "l_d_click": INT,
        },
        "targets": lambda: {
            "campaign_id": INT,
            "kind": kind_dtype(),
            "value": STRING,
            "label": STRING,
            "list_type": LIST_TYPE,
        },
        "lists": {
            "campaign_id": INT,
            "list": LIST,
            "item": STRING,
        },
        "bid_rules": {
            "campaign_id": INT,
            "item": STRING,
            "bid": FLOAT,
        },
        "cpa_rules": {
            "id": INT,
            "campaign_id": INT,
            "type": CPA_TYPE,
            "cond": CPA_COND,
            "amount": FLOAT,
            "lead_type": CPA_LEAD_TYPE,
            "lead_cond": CPA_COND,
            "lead_amount": FLOAT,
        },
        "creatives": CREATIVES,
        "creative_details": {
            **CREATIVES,
            "status_note": STRING,
            "type": VIDEO_TYPE,
            "convert": VIDEO_CONVERT,
            "duration": INT,
            "video_url": STRING,
        },
        "creative_files": {
            "creative_id": INT,
            "t_event": TIME,
            "type": STRING,
            "mime": STRING,
            "codec": STRING,
            "codec_name": STRING,
            "bit_rate": INT,
            "duration": INT,
            "width": INT,
            "height": INT,
            "url": STRING,
        },
        "balance": {
            "user_id": INT,
            "currency": STRING,
            "balance": FLOAT,
        },
        "ref_country": {"id": INT, "code": STRING, "name": STRING},
        "ref_os": {"id": INT, "name": STRING},
        "ref_browser": {"id": INT, "name": STRING},
        "ref_category": {"ad_format": CATEGORY_GROUP, "id": INT, "name": STRING},
        "ref_vertical": {"id": INT, "name": STRING},
        "ref_language": {"id": INT, "code": STRING, "name": STRING},
        "ref_language_code": {"code": STRING, "name": STRING},
        "ref_subs_age": {"id": INT, "name": STRING},
        "search": lambda: {
            "type": category(spec.search_types()),
            "id": INT,
            "label": STRING,
            "name": STRING,
            "country": STRING,
            "region": STRING,
        },
        "prices": {
            "ad_format": AD_FORMAT,
            "country": STRING,
            "minimum_price": FLOAT,
            "minimum_traffic": INT,
            "recommend_price": FLOAT,
            "recommend_traffic": INT,
        },
        "failures": {
            "campaign_id": INT,
            "operation": STRING,
            "error": STRING,
            "message": STRING,
        },
        "account_failures": {
            "account": STRING,
            "campaign_id": INT,
            "operation": STRING,
            "error": STRING,
            "message": STRING,
        },
    }
)

#: The dictionary types of ``list-refs-data``, each with the schema of its frame.
REF_SCHEMAS: dict[str, str] = {t: f"ref_{t}" for t in spec.DICTIONARY_TYPES}


# --------------------------------------------------------------------------- plans and runs
# The frames of a plan's calls (``Plan.to_frame()``) and of a run's outcomes
# (``ApplyResult.to_frame()``). Their coded columns take their codes from the planner, a layer
# above this one (which this module may not import): the caller gives them.

OBJECT = np.dtype(object)


def plan_calls_schema(steps: Sequence[str]) -> dict[str, Dtype]:
    """The columns and dtypes of ``Plan.to_frame()``, one row per call; ``step`` is ordered
    as ``steps`` (:data:`toolkit.bulk.calls.STEPS`, the order the calls are sent in).

    >>> {c: str(d) for c, d in plan_calls_schema(("drop", "add")).items() if c != "step"}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'action': 'string', 'target': 'string', 'list_type': 'string', 'campaigns': 'Int64',
     'campaign_ids': 'object', 'items': 'Int64', 'bid': 'float64', 'bids': 'object',
     'changes': 'Int64', 'detail': 'string', 'call': 'Int64'}
    """
    return {
        "step": pd.CategoricalDtype(list(steps), ordered=True),
        "action": STRING,
        "target": STRING,
        "list_type": STRING,
        "campaigns": INT,
        "campaign_ids": OBJECT,  # a list of ids per call
        "items": INT,
        "bid": FLOAT,
        "bids": OBJECT,  # country adds: code -> bid, else None
        "changes": INT,
        "detail": STRING,
        "call": INT,
    }


def run_outcomes_schema(outcomes: Sequence[str]) -> dict[str, Dtype]:
    """The columns and dtypes of ``ApplyResult.to_frame()``, one row per outcome; ``outcome``
    takes the codes ``outcomes`` (:data:`toolkit.bulk.outcome_states.OUTCOMES`).

    >>> list(run_outcomes_schema(("applied", "failed")))[-4:]
    ['bid', 'outcome', 'message', 'previous']
    """
    return {
        "seq": INT,
        "step": STRING,
        "action": STRING,
        "target": STRING,
        "list_type": STRING,
        "campaign_id": INT,
        "item": STRING,
        "bid": FLOAT,
        "outcome": category(outcomes),
        "message": STRING,
        "previous": STRING,
    }


# --------------------------------------------------------------------------- building


def schema(name: str) -> dict[str, Dtype]:
    """The ``column -> dtype`` mapping of frame ``name``."""
    try:
        return SCHEMAS[name]
    except KeyError:
        raise KeyError(f"unknown frame {name!r}; frames: {', '.join(SCHEMAS)}") from None


def empty(name: str) -> pd.DataFrame:
    """A frame with no rows and the declared columns and dtypes.

    >>> list(empty("lists").dtypes["list"].categories)
    ['source_black', 'source_white', 'subid_black', 'subid_white']
    """
    return frame(name, {})


def frame(name: str, columns: Mapping[str, Any], length: int | None = None) -> pd.DataFrame:
    """A DataFrame of frame ``name`` from columns given as sequences (or arrays).

    Columns left out are all missing; ``length`` gives the row count when no column is given.
    Values are converted to the declared dtype, never inferred.

    >>> frame("countries", {"campaign_id": [7, 7], "country": ["US", "CA"],
    ...                     "bid": [0.05, 0.04]})["l_d_show"].tolist()
    [<NA>, <NA>]
    """
    cols = schema(name)
    unknown = set(columns) - set(cols)
    if unknown:
        raise KeyError(f"{name}: unknown columns {sorted(unknown)}; columns: {list(cols)}")
    if length is None:
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"{name}: columns of different lengths {sorted(lengths)}")
        length = lengths.pop() if lengths else 0
    data = {}
    for col, dtype in cols.items():
        values = columns.get(col)
        if values is None:
            values = [None] * length
        elif len(values) != length:
            raise ValueError(f"{name}.{col}: {len(values)} values, expected {length}")
        data[col] = _series(values, dtype, f"{name}.{col}")
    return pd.DataFrame(data, index=pd.RangeIndex(length))


def records_frame(name: str, records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A frame from row dicts; keys outside the schema are ignored, missing keys are NA."""
    cols = schema(name)
    return frame(name, {c: [r.get(c) for r in records] for c in cols}, length=len(records))


def conform(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with exactly the declared columns, in order, each cast to its declared dtype.

    Used on frames read back from files, where storage may have widened a dtype.
    """
    cols = schema(name)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise KeyError(f"{name}: missing columns {missing}")
    data = {col: _series(df[col], dtype, f"{name}.{col}") for col, dtype in cols.items()}
    return pd.DataFrame(data, index=pd.RangeIndex(len(df)))


def _series(values: Any, dtype: Dtype, where: str) -> pd.Series:
    if isinstance(values, pd.Series):
        values = values.reset_index(drop=True)
        if values.dtype == dtype:
            return values
    if isinstance(dtype, pd.CategoricalDtype):
        if isinstance(values, pd.Categorical) and values.dtype == dtype:
            return pd.Series(values)
        return _categorical(values, dtype, where)
    if isinstance(dtype, pd.StringDtype):
        return pd.Series(pd.array(_strings(values), dtype=dtype))
    if isinstance(dtype, pd.DatetimeTZDtype):
        if isinstance(values, pd.Series) and isinstance(values.dtype, pd.DatetimeTZDtype):
            return values.dt.tz_convert(dtype.tz).astype(dtype)
        parsed = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601")
        return parsed.astype(dtype)
    if isinstance(dtype, pd.Int64Dtype):
        if isinstance(values, pd.Series):
            return values.astype(dtype)
        array = values if isinstance(values, np.ndarray) else list(values)
        return pd.Series(pd.array(array, dtype=dtype))
    return pd.Series(values, dtype=dtype)


#: Types of values a string column takes as they are (checked by type first: a set of types
#: is found in C, much faster than a test per value over a million subIds).
_PLAIN_TEXT = frozenset({str, type(None)})


def _strings(values: Any) -> Any:
    if isinstance(values, pd.Series):
        if isinstance(values.dtype, pd.StringDtype):
            return values.array
        values = values.astype(object).where(values.notna(), None).tolist()
    if isinstance(values, np.ndarray) and values.dtype.kind in "US":
        return values
    out = list(values)
    if set(map(type, out)) <= _PLAIN_TEXT or all(v is None or isinstance(v, str) for v in out):
        return out
    return [None if v is None or v is pd.NA else str(v) for v in out]


def _categorical(values: Any, dtype: pd.CategoricalDtype, where: str) -> pd.Series:
    series = values if isinstance(values, pd.Series) else pd.Series(values, dtype=object)
    declared = list(dtype.categories)
    present = series.dropna().unique()
    extra = sorted(str(v) for v in present if v not in set(declared))
    if extra:
        message = f"{where}: values outside the declared codes kept as extra categories: {extra}"
        warnings.warn(message, stacklevel=4)
        log.warning(message)
        dtype = category(declared + extra)
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object).where(series.notna(), None)
    return pd.Series(pd.Categorical(series, dtype=dtype))


def dtype_names(name: str) -> dict[str, str]:
    """``column -> dtype`` as text, as docs/frames.md writes it (``category`` for codes)."""
    return {c: _dtype_name(d) for c, d in schema(name).items()}


def _dtype_name(dtype: Dtype) -> str:
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if isinstance(dtype, pd.StringDtype):
        return "string"
    return str(dtype)


__all__ = [
    "SCHEMAS",
    "SCHEMA_VERSION",
    "conform",
    "dtype_names",
    "empty",
    "frame",
    "plan_calls_schema",
    "records_frame",
    "run_outcomes_schema",
    "schema",
]
