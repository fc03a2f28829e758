"""Country and language codes in workbooks: what a code that is not one probably meant, and
campaign ids in action-workbook messages shown as integers, against the sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pycountry
import pytest

import toolkit
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.bulk.workbook.actions import check_actions, plan_actions, write_template
from toolkit.errors import WorkbookError, WorkbookProblem
from toolkit.frames import Account
from toolkit.sandbox import Sandbox
from toolkit.stats.countries import (
    ALIASES,
    AMBIGUOUS,
    LANGUAGE_ALIASES,
    code_advice,
    code_problem,
    suggest_country,
    suggest_language,
)

COUNTRIES = {c.alpha_2 for c in pycountry.countries}
LANGUAGES = {lang.alpha_2 for lang in pycountry.languages if hasattr(lang, "alpha_2")}


# --------------------------------------------------------------------------- suggestions


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("UK", "GB"),
        ("uk ", "GB"),
        ("U.K.", "GB"),
        ("usa", "US"),
        ("USA", "US"),
        ("United States", "US"),
        ("united states of america", "US"),
        ("us", "US"),
        ("DEU", "DE"),
        ("Germany", "DE"),
        ("Germny", "DE"),  # one letter left out
        ("Frnace", "FR"),  # two swapped
        ("Russia", "RU"),
        ("Holland", "NL"),
        ("Nigera", None),  # one letter from Nigeria and from Niger: neither
        ("Korea", None),  # two countries
        ("Congo", None),
        ("840", None),  # a number is a mistake, not ISO's numeric code
        ("Atlantis", None),
        ("", None),
    ],
)
def test_suggest_country(text, code):
    assert suggest_country(text) == code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("english", "en"),
        ("EN", "en"),
        ("eng", "en"),
        ("Englsh", "en"),
        ("ger", "de"),
        ("deu", "de"),
        ("French", "fr"),
        ("jp", "ja"),
        ("cn", "zh"),
        ("ua", "uk"),
        ("Greek", "el"),
        ("uk", "uk"),  # Ukrainian is a code of its own
        ("klingon", None),
        ("zz", None),
    ],
)
def test_suggest_language(text, code):
    assert suggest_language(text) == code


def test_the_alias_tables_only_hold_what_is_no_code_and_name_codes():
    assert not {k.upper() for k in ALIASES if len(k) == 2} & COUNTRIES
    assert set(ALIASES.values()) - COUNTRIES == {"XK"}  # Kosovo: no ISO code, never suggested
    assert suggest_country("Kosovo") is None
    assert all(set(v) <= COUNTRIES and len(v) > 1 for v in AMBIGUOUS.values())
    assert not {k for k in LANGUAGE_ALIASES if len(k) == 2} & LANGUAGES
    assert set(LANGUAGE_ALIASES.values()) <= LANGUAGES


def test_code_problem_is_one_line_naming_the_text():
    assert code_problem("UK", "country") == '"UK" is not a country code; did you mean GB?'
    assert code_problem("usa", "country") == '"usa" is not a country code; did you mean US?'
    assert code_problem("Korea", "country") == (
        '"Korea" is not a country code; it could be KR or KP: write the one you mean'
    )
    assert code_problem("Atlantis", "country") == (
        '"Atlantis" is not a country code; write its ISO 3166-1 alpha-2 code (like US)'
    )
    assert code_problem("EN", "country").startswith('"EN" is not a country code (en is a lang')
    assert code_problem("english", "language") == (
        '"english" is not a language code; did you mean en?'
    )
    assert code_problem("US", "country") == code_problem("en", "language") == ""
    with pytest.raises(ValueError, match="'country' or 'language'"):
        code_problem("x", "os")


# --------------------------------------------------------------------------- workbooks


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, seed=9, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> Any:
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


@pytest.fixture(scope="module")
def account(client: Any) -> Account:
    return toolkit.load_account(client, progress=False)


@pytest.fixture(scope="module")
def exported(account: Account, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_workbook(account, tmp_path_factory.mktemp("codes") / "account.xlsx")


def untargeted(account: Account) -> tuple[int, str]:
    """A campaign and a country it does not target."""
    countries = account.table("countries")
    cid = int(countries["campaign_id"].iloc[0])
    have = set(countries.loc[countries["campaign_id"] == cid, "country"].astype(str))
    return cid, next(c for c in ("FR", "DE", "IT", "ES", "PL") if c not in have)


def appended(src: Path, dst: Path, sheet: str, rows: list[dict[str, Any]]) -> Path:
    wb = openpyxl.load_workbook(src)
    ws = wb[sheet]
    header = [c.value for c in ws[1]]
    for row in rows:
        ws.append([row.get(h) for h in header])
    wb.save(dst)
    return dst


def problems(path: Path) -> dict[tuple[int | None, str | None], WorkbookProblem]:
    with pytest.raises(WorkbookError) as info:
        read_workbook(path)
    return {(p.row, p.column): p for p in info.value.problems}


def test_an_unknown_country_on_the_countries_sheet_says_what_it_meant(account, exported, tmp_path):
    cid, _ = untargeted(account)
    texts = ["UK", " usa", "Congo", "Atlantis"]
    path = appended(
        exported,
        tmp_path / "b.xlsx",
        "countries",
        [{"campaign_id": cid, "country": t, "bid": 0.5} for t in texts],
    )
    found = problems(path)
    first = len(account.table("countries")) + 2
    assert {k: (p.value, p.message) for k, p in found.items()} == {
        (first, "country"): ("UK", "not a country code; did you mean GB?"),
        (first + 1, "country"): (" usa", "not a country code; did you mean US?"),
        (first + 2, "country"): (
            "Congo",
            "not a country code; it could be CG or CD: write the one you mean",
        ),
        (first + 3, "country"): (
            "Atlantis",
            "not a country code; write its ISO 3166-1 alpha-2 code (like US)",
        ),
    }
    assert "countries row" in str(found[(first, "country")])


def test_a_country_code_in_lower_case_is_that_code(account, exported, tmp_path):
    cid, code = untargeted(account)
    path = appended(
        exported,
        tmp_path / "b.xlsx",
        "countries",
        [{"campaign_id": cid, "country": code.lower(), "bid": 0.5}],
    )
    countries = read_workbook(path).desired["countries"]
    assert ((countries["campaign_id"] == cid) & (countries["country"] == code)).sum() == 1


def test_a_language_written_as_a_code_or_name_on_the_targets_sheet(account, exported, tmp_path):
    cid, _ = untargeted(account)
    rows = [
        {"campaign_id": cid, "kind": "language", "value": "english"},
        {"campaign_id": cid, "kind": "language", "value": "klingon"},
    ]
    found = problems(appended(exported, tmp_path / "b.xlsx", "targets", rows))
    refs = account.refs["language"]
    en = refs[refs["code"] == "en"].iloc[0]
    first = len(account.table("targets")) + 2
    assert found[(first, "value")].message == (
        f"not a language id (a positive integer); did you mean {int(en['id'])} (en, {en['name']})?"
    )
    assert found[(first + 1, "value")].message == "not a language id (a positive integer)"


def actions_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    return write_template(tmp_path / "actions.xlsx", "t", [], rows)


def test_action_items_say_what_an_unknown_code_meant(client, account, tmp_path):
    cid, code = untargeted(account)
    path = actions_file(
        tmp_path,
        [
            {"action": "add", "target": "country", "campaign": cid, "item": "UK", "bid": 0.5},
            {"action": "add", "target": "language", "campaign": cid, "item": "english"},
            {"action": "drop", "target": "country", "campaign": cid, "item": "Korea"},
            {"action": "add", "target": "country", "campaign": cid, "item": code.lower(), "bid": 1},
            {"action": "add", "target": "language", "campaign": cid, "item": "EN"},
        ],
    )
    with pytest.raises(WorkbookError) as info:
        plan_actions(client, path)
    found = {p.row: (p.column, p.value, p.message) for p in info.value.problems}
    assert found == {
        2: ("item", "UK", "not a country code; did you mean GB?"),
        3: ("item", "english", "not a language code; did you mean en?"),
        4: ("item", "Korea", "not a country code; it could be KR or KP: write the one you mean"),
    }


def test_action_codes_in_another_case_are_the_codes(client, account, tmp_path):
    cid, code = untargeted(account)
    path = actions_file(
        tmp_path,
        [
            {"action": "add", "target": "country", "campaign": cid, "item": code.lower(), "bid": 1},
            {"action": "add", "target": "language", "campaign": cid, "item": " EN"},
        ],
    )
    plan = plan_actions(client, path)
    sent = {(c.target, item) for c in plan.calls for item in (c.bids or c.items)}
    assert ("country", code) in sent and ("language", "en") in sent


@pytest.mark.parametrize("cell", [9999999, 9999999.0, "9999999", "9999999.0", " 9999999.00"])
def test_an_unknown_campaign_id_is_shown_as_an_integer(account, tmp_path, cell):
    path = actions_file(tmp_path, [{"action": "pause", "target": "campaign", "campaign": cell}])
    with pytest.raises(WorkbookError) as info:
        check_actions(path, account)
    (problem,) = info.value.problems
    assert problem.value == 9999999 and type(problem.value) is int
    text = str(info.value)
    assert "actions row 2 [campaign]: 9999999: campaign 9999999 is not in the account" in text
    assert "9999999.0" not in text


@pytest.mark.parametrize("cell", [12.5, "12.5", "1e3"])
def test_a_campaign_id_that_is_not_whole_is_refused_with_its_cell(account, tmp_path, cell):
    path = actions_file(tmp_path, [{"action": "pause", "target": "campaign", "campaign": cell}])
    with pytest.raises(WorkbookError) as info:
        check_actions(path, account)
    (problem,) = info.value.problems
    assert (problem.row, problem.column) == (2, "campaign")
    assert problem.message.startswith("not a whole number")


@pytest.mark.parametrize("form", [float, lambda c: f"{c}.0", str])
def test_a_campaign_id_read_as_a_float_or_text_is_that_campaign(account, tmp_path, form):
    cid = int(account.table("campaigns")["id"].iloc[0])
    path = actions_file(
        tmp_path, [{"action": "pause", "target": "campaign", "campaign": form(cid)}]
    )
    (action,) = check_actions(path, account)[0]
    assert action.campaigns == (cid,)


def test_code_advice_matches_what_the_workbook_says():
    assert code_advice("UK", "country") == "not a country code; did you mean GB?"
