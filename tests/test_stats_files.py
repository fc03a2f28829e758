"""Statistics files in detail: the separator sniffed, DuckDB's reader of large files on
UTF-16 and cp1252, totals rows left out with their lines (and no other row), bad values still
reported at the file's lines, campaign maps from files, problems grouped by cause, and the
command line's --campaign-map and its warning of skipped rows."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from toolkit.errors import StatsError, StatsNote, StatsProblem
from toolkit.stats import aggregate, files, read_stats
from toolkit.stats.duck import window_sums
from toolkit.stats.files import separator, sniff_text

from .trackers.layouts import GENERIC, UUIDS, generic_rows, mapping, table, voluum
from .trackers.make_files import FILES

VOLUUM_MAP = mapping(UUIDS)


@pytest.mark.parametrize(
    ("text", "sep"),
    [
        ('"Cost, USD";Day;Zone\n"1,5";2026-01-01;z1\n', ";"),
        ("Day;Zone;Cost\n2026-01-01;z1;1,25\n2026-01-02;z2;0,5\n", ";"),  # decimal commas
        ('Day,"Zone; name",Cost\n2026-01-01,z1,1.25\n', ","),
        ("Day\tZone\tCost\n2026-01-01\tz,1\t1,25\n", "\t"),
        ("Day,Zone\n", ","),  # a header alone
    ],
)
def test_the_separator_is_the_one_whose_rows_fit_the_header(text, sep):
    assert separator(text) == sep


def test_encodings_are_sniffed_from_the_bytes():
    assert sniff_text("Day\tCost\n".encode("utf-16")) == ("utf-16", "\t")
    assert sniff_text("Café;€\n".encode("cp1252"))[0] == "cp1252"
    assert sniff_text("Дата;Клики;Расход\n".encode("cp1251"))[0] == "cp1251"
    assert sniff_text(b"\xef\xbb\xbfDay,Cost\n")[0] == "utf-8-sig"


@pytest.mark.parametrize("name", ["excel-unicode-text-le.txt", "cp1252-cafe-euro.csv"])
def test_duckdb_reads_large_files_of_any_encoding_as_pandas_does(name, monkeypatch):
    from toolkit.stats import read as read_module

    kwargs = {"campaign_map": VOLUUM_MAP} if name.endswith(".txt") else {}
    expected = read_stats(FILES / name, **kwargs)
    monkeypatch.setattr(read_module, "LARGE_CSV_BYTES", 0)  # DuckDB parses it
    pd.testing.assert_frame_equal(read_stats(FILES / name, **kwargs), expected)


def test_a_totals_row_is_left_out_with_its_line_and_a_note(tmp_path):
    text = table(GENERIC, generic_rows()) + "TOTAL:,,,,3500,130,4.00,4,20.00\r\n"
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.warns(StatsNote, match=r"skipped 1 totals row \(line 7\)"):
        df = read_stats(path)
    assert df.attrs["skipped"] == [(7, "totals row ('TOTAL:' in date)")]
    assert df[df["level"] == "source"]["clicks"].sum() == 130
    with pytest.warns(StatsNote, match=r"line 7"):
        sums = aggregate(path, by=("level",))
    assert sums.attrs["skipped"] == df.attrs["skipped"]
    assert sums.set_index("level")["clicks"].to_dict()["source"] == 130
    with pytest.warns(StatsNote, match=r"line 7"):
        window_sums(path, [7])


def test_only_totals_rows_are_left_out_and_bad_values_keep_their_lines(tmp_path):
    rows = generic_rows()
    text = table(
        GENERIC,
        [
            ("", "", "", "", "3500", "130", "4.00", "4", "20.00"),  # sums: left out (line 2)
            *rows,
            ("2026-01-03", "1000001", "source", "", "5", "5", "0.5", "0", "0"),  # empty key
            ("2026-01-03", "1000001", "source", "z9", "5", "5", "lots", "0", "0"),  # line 9
        ],
    )
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    for read in (read_stats, aggregate):
        with pytest.raises(StatsError) as caught, warnings.catch_warnings():
            warnings.simplefilter("ignore", StatsNote)
            read(path)
        got = {(p.line, p.column, p.message) for p in caught.value.problems}
        assert got == {(8, "key", "empty key"), (9, "cost", "not an amount (a number >= 0)")}


def test_a_normal_row_with_an_empty_key_still_gives_no_row_of_that_level(tmp_path):
    path = tmp_path / "v.csv"
    text = voluum(UUIDS)  # the second row has no subId: no subid row, and nothing skipped
    path.write_text(text, encoding="utf-8")
    df = read_stats(path, campaign_map=VOLUUM_MAP)
    assert df.attrs["skipped"] == []
    assert df.groupby("level", observed=True).size().to_dict() == {"source": 3, "subid": 2}


@pytest.mark.parametrize("form", ["csv", "json", "dict"])
def test_a_campaign_map_from_a_file_or_a_dict(tmp_path, form):
    path = tmp_path / "v.csv"
    path.write_text(voluum(UUIDS), encoding="utf-8")
    if form == "csv":
        the_map = tmp_path / "map.csv"
        lines = "".join(f"{t};{n}\n" for t, n in VOLUUM_MAP.items())
        the_map.write_text("voluum id;campaign id\n" + lines, encoding="utf-8")
    elif form == "json":
        the_map = tmp_path / "map.json"
        the_map.write_text(json.dumps(VOLUUM_MAP), encoding="utf-8")
    else:
        the_map = VOLUUM_MAP
    df = read_stats(path, campaign_map=the_map)
    assert sorted(df["campaign_id"].unique()) == [1000001, 1000002]
    sums = aggregate(path, by=("campaign_id",), campaign_map=the_map)
    assert sums["campaign_id"].tolist() == [1000001, 1000002]
    assert sums["clicks"].tolist() == [2 * 120, 10]  # 1000002 has a source row only


def test_a_bad_campaign_map_is_refused_naming_the_entry(tmp_path):
    with pytest.raises(StatsError, match="not a network campaign id for 'abc'"):
        read_stats(FILES / "voluum.csv", campaign_map={"abc": "x1"})
    bad = tmp_path / "map.csv"
    bad.write_text("a,1,2\n", encoding="utf-8")
    with pytest.raises(StatsError, match="a campaign map has two columns, not 3"):
        read_stats(FILES / "voluum.csv", campaign_map=bad)


def test_problems_are_grouped_by_column_and_message():
    problems = [StatsProblem(n, "Date", f"13/{n:02d}/2026", "not a date") for n in range(2, 1002)]
    problems += [StatsProblem(None, "cost", None, "missing column (generic layout)")]
    problems += [StatsProblem(5, "Cost", "x", "not a number")]
    err = StatsError(problems, "s.csv")
    lines = str(err).splitlines()
    assert lines[0] == "1,002 problems in s.csv:"
    assert lines[1].startswith(
        "  1,000 rows of \"Date\": not a date (line 2: '13/02/2026', line 3: '13/03/2026',"
    )
    assert lines[1].endswith(", ...)")
    assert lines[2:] == [
        "  file [cost]: missing column (generic layout)",
        "  line 5 [Cost]: 'x': not a number",
    ]
    assert err.problems == problems and len(err.to_frame()) == 1002
    one = StatsError(problems[:3], "s.csv")  # one cause: one line
    assert str(one).count("\n") == 0 and str(one).startswith('s.csv: 3 rows of "Date"')


def test_a_grouped_report_with_a_bad_level_names_its_line(tmp_path):
    text = (
        (FILES / "binom-grouped.csv").read_text(encoding="utf-8").replace("\n3,z2,", "\nthree,z2,")
    )
    path = tmp_path / "g.csv"
    path.write_text(text, encoding="utf-8")
    columns = {"Level 1": "date", "Level 2": "tracker_campaign", "Level 3": "source"}
    for read in (
        lambda: read_stats(path, columns, campaign_map={"12": 1000001, "13": 1000002}),
        lambda: aggregate(path, columns=columns, campaign_map={"12": 1000001, "13": 1000002}),
    ):
        with pytest.raises(StatsError) as caught:
            read()
        assert [(p.line, p.value) for p in caught.value.problems] == [(6, "three")]


@pytest.fixture()
def cli(sandbox_cli):
    return sandbox_cli


def test_the_command_line_reads_tracker_ids_through_campaign_map_and_notes_skipped_rows(
    cli, tmp_path
):
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n  - name: none\n    level: source\n    when: clicks > 1000000\n"
        "    action: blacklist\n",
        encoding="utf-8",
    )
    stats = FILES / "bemob-sums-row.csv"
    code, out, err = cli("rules", str(rules), str(stats))
    assert code == 2 and "look like Voluum/BeMob ids (UUIDs)" in err and "--campaign-map" in err
    the_map = tmp_path / "map.csv"
    the_map.write_text("".join(f"{t},{n}\n" for t, n in VOLUUM_MAP.items()), encoding="utf-8")
    code, out, err = cli("rules", str(rules), str(stats), "--campaign-map", str(the_map))
    assert code == 0, err
    assert f"  warning: {stats}: skipped 1 totals row (line 5)" in out  # the plan's warning
    assert "Plan: nothing to do." in out


EURO = "€".encode()  # three bytes


@pytest.mark.parametrize(
    ("data", "utf8"),
    [
        (b"x" * 40, True),
        (b"x" * 15 + "é".encode() + b"ab" * 20, True),  # a letter split over two chunks
        (b"x" * 14 + EURO + b"ab" * 20, True),
        # a sequence left open at a chunk's end, an ASCII chunk, then the byte it lacked
        (b"x" * 14 + EURO[:2] + b"a" * 16 + EURO[2:] + b"ab", False),
        (b"x" * 15 + EURO[:2] + b"ab" * 20, False),
        (b"x" * 15 + b"caf\xe9" + b"ab" * 20, False),  # cp1252 past the first chunk
        (b"x" * 40 + b"\xff", False),
    ],
)
def test_a_file_is_utf8_only_when_every_chunk_is(tmp_path, monkeypatch, data, utf8):
    monkeypatch.setattr(files, "CHUNK", 16)
    path = tmp_path / "u.csv"
    path.write_bytes(data)
    assert files._all_utf8(path) is utf8
