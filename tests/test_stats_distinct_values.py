"""The pandas reader looks at each distinct cell once, and at plain numbers all at once: the
fast paths (``values._plain_classes``, ``totals.trimmed``) give what the cell-by-cell rules
give, on values as trackers and Excel write them; a frame's cell that no file can hold (a
lone surrogate, which those paths cannot encode) is refused with its line and column."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from toolkit.stats import totals, values

PLAIN = ["0", "7", "-3", "12.5", "-0.25", ".5", "1.234", "-123.456", "999.000", "0012", ""]
OTHER = [
    "1,5",
    "1.234,50",
    "$3",
    "12%",
    "(4.00)",
    "1e3",
    "1 234",
    "−2",
    "+2",
    "1,234",
    "abc",
    "1.2.3",
    "٣",
    "１２",
    "12\n3",
    "1.",
    "-",
    "€12,50",
]


def distinct(cells: list[str]) -> pd.Series:
    return pd.Series(list(dict.fromkeys(cells)), dtype=object)


@pytest.mark.parametrize("seed", range(6))
def test_plain_values_get_the_classes_of_the_cell_by_cell_rules(seed):
    rng = random.Random(seed)
    cells = rng.sample(PLAIN, k=rng.randint(1, len(PLAIN)))
    cells += [f"{rng.randint(0, 10**6)}.{rng.randint(0, 999):03d}" for _ in range(50)]
    cells += [str(rng.randint(-(10**9), 10**9)) for _ in range(50)]
    u = distinct(cells)
    fast = values._plain_classes(u)
    assert fast is not None
    assert fast.tolist() == values._classes(u)[0].tolist()
    # one value that is not plain sends the column the long way
    for odd in OTHER:
        mixed = distinct([*cells, odd])
        slow = values._classes(mixed)[0]
        assert values._plain_classes(mixed) is None, (odd, slow.iloc[-1])
        assert set(slow) - set("eipq"), odd


def test_number_shapes_of_plain_and_quirky_columns_are_the_cell_by_cell_shapes(monkeypatch):
    columns = [
        ["1.234", "12.5", "", "7"],
        ["1.234", "2.345"],
        ["3", "4", "5"],
        ["1.234", "1,5", "$3"],
        ["1,234", "12.50", "€1,00"],
    ]
    fast = [values.number_shapes(values.Column(pd.Series(c, dtype=object))) for c in columns]
    monkeypatch.setattr(values, "_plain_classes", lambda u: None)
    slow = [values.number_shapes(values.Column(pd.Series(c, dtype=object))) for c in columns]
    assert fast == slow
    assert [s.plain for s in fast] == [True, True, True, False, False]
    assert fast[0].ambiguous == "1.234" and fast[0].dot == "12.5"


def per_row(raw: pd.Series) -> list[str]:
    return raw.astype(object).where(raw.notna(), "").astype(str).str.strip().tolist()


@pytest.mark.parametrize(
    "raw",
    [
        pd.Series([" a", None, "a ", " a", "", "  ", np.nan, "Total ", "b"], dtype=object),
        pd.Series([1, 1.0, True, " 1", None, 2.5, "x"], dtype=object),  # Excel's mixed cells
        pd.Series([" a", None, "a ", "\u00a0b\u00a0", ""], dtype="string[pyarrow]"),
        pd.Series([" a", "a ", "a", "b"], dtype="string[pyarrow]"),  # none missing
        pd.Series([1.0, np.nan, 3.25]),
        pd.Series([], dtype=object),
    ],
    ids=["text", "mixed", "arrow", "arrow-full", "floats", "empty"],
)
def test_each_distinct_cell_trimmed_once_is_each_cell_trimmed(raw):
    codes, text = totals.trimmed(raw)
    assert text[codes].tolist() == per_row(raw)
    assert len(set(text)) == len(text)  # each trimmed value once
    assert totals.empty_cells(raw).tolist() == [t == "" for t in per_row(raw)]


def test_totals_rows_are_found_and_named_in_mixed_and_arrow_columns():
    raw = pd.DataFrame(
        {
            "Date": pd.Series(["2026-01-01", " Grand total:", "2026-01-02", None], dtype=object),
            "Zone": pd.Series(["z1", "", "TOTALS", None], dtype="string[pyarrow]"),
            "Cost": pd.Series([1.5, 3.0, 1.5, 3.0], dtype=object),
        }
    )
    found = totals.totals_rows(
        raw, labels=["Date", "Zone"], keys=["Date", "Zone"], metrics=["Cost"]
    )
    assert found == [
        (1, "totals row ('Grand total:' in Date)"),
        (2, "totals row ('TOTALS' in Zone)"),
        (3, totals.SUMS_ONLY),
    ]


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "string[python]"])
def test_a_column_of_text_cells_is_the_column_of_the_same_cells_as_objects(dtype):
    cells = [" 1", "1", None, "\u00a02.5\u202f", "", "2.5", "\t7\n", None, "x y", "1"]
    text = values.Column(pd.Series(cells, dtype=dtype))
    objects = values.Column(pd.Series(cells, dtype=object))
    assert text.take(text.uniques).tolist() == objects.take(objects.uniques).tolist()
    assert len(set(text.uniques)) == len(text.uniques)  # each stripped value once
    assert not text.is_typed.any() and text.typed is None


def test_a_frame_cell_holding_a_lone_surrogate_is_refused_with_its_line_and_column():
    from toolkit.errors import StatsError
    from toolkit.stats import read_stats

    raw = pd.DataFrame(
        {
            "date": ["2026-01-01"] * 3,
            "campaign_id": ["1"] * 3,
            "level": ["source"] * 3,
            "key": ["a", "b\udc80", "c"],
            "clicks": ["1", "2", "3\ud800"],
            "cost": ["1", "2", "3"],
            "conversions": ["0"] * 3,
            "revenue": ["0"] * 3,
        },
        dtype=object,
    )
    with pytest.raises(StatsError) as caught:
        read_stats(raw)
    problems = [(p.line, p.column, p.value) for p in caught.value.problems]
    assert problems == [(3, "key", "b\ufffd"), (4, "clicks", "3\ufffd")]
    str(caught.value).encode("utf-8")  # the message itself can be printed
