"""The sandbox as an HTTP service: routing, methods, authentication, request forms, bad input."""

from __future__ import annotations

import random
import re

import pytest
import requests

from toolkit import spec
from toolkit.sandbox import limits, qs
from toolkit.sandbox.errors import BadRequest


def test_every_operation_of_the_interface_is_routed(api):
    """Each path of spec.operations() (aliases included) answers JSON, neither 404 nor 405."""
    for op in spec.operations():
        for path in (op.path, *op.aliases):
            method = op.methods[0]
            r = api.http.request(method, api.base + path, params={"api-key": api.key}, timeout=30)
            assert r.status_code not in (404, 405, 500), (path, r.status_code, r.text)
            assert r.headers["Content-Type"].startswith("application/json"), path
            r.json()


def test_interface_paths_are_all_in_spec():
    """Every /api/ path written in the interface document is an operation of spec.py."""
    text = open_interface()
    paths = set(re.findall(r"(/api/[a-z-]+/[a-z-]+)", text))
    # the generic batch form is written with placeholders; concrete ones are checked below
    missing = {p for p in paths if p not in spec.operations_by_path()}
    assert not missing, missing
    for kind in re.findall(
        r"`(connection-type|os|browser|region|isp-mobile|subs-age|country|"
        r"quality|category|cidr|domain)`",
        text,
    ):
        assert f"/api/campaign/add-{kind}-batch" in spec.operations_by_path()


def open_interface() -> str:
    from pathlib import Path

    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "service-interface.md"
        if candidate.exists():
            return candidate.read_text()
        candidate = parent.parent / "shared" / "service-interface.md"
        if candidate.exists():
            return candidate.read_text()
    pytest.skip("service-interface.md is not beside the checkout")


@pytest.mark.parametrize(
    "path,method",
    [
        ("/api/campaign/list", "POST"),
        ("/api/campaign/balance", "POST"),
        ("/api/creative/create", "GET"),
        ("/api/campaign/item", "DELETE"),
    ],
)
def test_method_not_allowed(api, path, method):
    r = api.http.request(method, api.base + path, params={"api-key": api.key}, timeout=30)
    assert r.status_code == 405
    body = r.json()
    assert body["status"] == "error"
    assert method in body["errorList"][0]


def test_get_post_operations_accept_both(api):
    cid = api.new_campaign("push")
    assert api.get("/api/campaign/add-os", id=cid, items=[1]).json()["status"] == "ok"
    assert api.post_json("/api/campaign/add-os", {"id": cid, "items": [2]}).json()["status"] == "ok"
    assert api.item(cid)["os"].keys() >= {"1", "2"}


@pytest.mark.parametrize("path", ["/api/campaign/nope", "/api/nothing", "/elsewhere", "/"])
def test_unknown_path_is_404(api, path):
    r = api.get(path)
    assert r.status_code == 404
    assert r.json()["status"] == "error"


def test_missing_key_is_401(sandbox):
    r = requests.get(sandbox.url + "/api/campaign/list", timeout=30)
    assert r.status_code == 401
    assert r.json() == {"status": "error", "errorList": [r.json()["errorList"][0]]}
    assert "api-key" in r.json()["errorList"][0]


def test_unknown_key_is_401_and_not_echoed(sandbox):
    bad = "not-a-key-" + "7" * 20
    r = requests.get(sandbox.url + "/api/campaign/list", params={"api-key": bad}, timeout=30)
    assert r.status_code == 401
    assert bad not in r.text


def test_key_in_json_body_does_not_authenticate(sandbox):
    r = requests.post(
        sandbox.url + "/api/campaign/price?adFormat=push",
        json={"api-key": sandbox.api_keys[0]},
        timeout=30,
    )
    assert r.status_code == 401


def test_accounts_are_isolated(api, other):
    mine = {c["id"] for c in api.get("/api/campaign/list").json()["items"]}
    theirs = {c["id"] for c in other.get("/api/campaign/list").json()["items"]}
    assert mine and theirs and not mine & theirs
    cid = next(iter(theirs))
    assert api.errors("/api/campaign/item", id=cid) == [f"Campaign not found #{cid}"]
    missing = max(mine | theirs) + 1000
    assert api.errors("/api/campaign/item", id=missing) == [f"Campaign not found #{missing}"]


# --------------------------------------------------------------------------- bad input


def post_raw(api, path, data, content_type, **query):
    return api.http.post(
        api.base + path,
        params={"api-key": api.key, **query},
        data=data,
        headers={"Content-Type": content_type},
        timeout=30,
    )


@pytest.mark.parametrize(
    "data,needle",
    [
        (b"{not json", "Malformed JSON body"),
        (b'{"country": ["US"]', "Malformed JSON body"),
        (b"\xff\xfe\x00{", "not valid UTF-8"),
        (b"[1, 2, 3]", "must be an object"),
        (b'"text"', "must be an object"),
    ],
)
def test_bad_json_body_is_400(api, data, needle):
    r = post_raw(api, "/api/campaign/price", data, "application/json", adFormat="push")
    assert r.status_code == 400
    body = r.json()
    assert body["status"] == "error"
    assert needle in body["errorList"][0]


def test_wrong_content_type_is_400(api):
    r = post_raw(api, "/api/campaign/price", b"country=US", "text/plain", adFormat="push")
    assert r.status_code == 400
    assert "Unsupported Content-Type: text/plain" in r.json()["errorList"][0]


def test_form_body_is_accepted(api):
    cid = api.new_campaign("push")
    r = post_raw(
        api, "/api/campaign/add-os", f"id={cid}&items[]=3", "application/x-www-form-urlencoded"
    )
    assert r.json() == {"status": "ok"}
    assert "3" in api.item(cid)["os"]


def test_non_utf8_query_is_400(api):
    r = api.http.get(
        api.base + "/api/campaign/list?api-key=" + api.key + "&name=%ff%fe", timeout=30
    )
    assert r.status_code == 400
    assert "UTF-8" in r.json()["errorList"][0]


def test_mixed_bracket_forms_are_400(api):
    r = api.http.get(
        api.base + "/api/campaign/add-os",
        params=[("api-key", api.key), ("id", "1"), ("items[]", "1"), ("items[x]", "2")],
        timeout=30,
    )
    assert r.status_code == 400
    assert "items" in r.json()["errorList"][0]


def test_wrong_parameter_types_list_every_bad_value(api):
    cid = api.new_campaign("push")
    r = api.get("/api/campaign/add-os", id=cid, items=["abc", 1, "x2"])
    assert r.status_code == 400
    errors = r.json()["errorList"]
    assert len(errors) == 2
    assert "'abc'" in errors[0] and "'x2'" in errors[1]
    assert api.item(cid)["os"] == []  # nothing half-applied
    r = api.get("/api/campaign/item", id="seven")
    assert r.status_code == 400
    r = api.post_json("/api/campaign/add-os", {"id": cid, "items": [True]})
    assert r.status_code == 400
    r = api.post_json("/api/campaign/add-country", {"id": cid, "items": {"DE": "cheap"}})
    assert r.status_code == 400 and "DE" in r.json()["errorList"][0]


def test_missing_required_parameter_is_a_business_error(api):
    assert api.errors("/api/campaign/item") == ["Parameter 'id' is required"]


def test_fuzzed_requests_never_fail_the_server(api):
    """A bounded run of random queries and bodies: always JSON, never a 5xx."""
    rng = random.Random(7)
    paths = [op.path for op in spec.operations()]
    alphabet = "abc[]{}=&%0123456789-_.\"'/\\ \x00é"
    for _ in range(150):
        path = rng.choice(paths)
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 60)))
        ctype = rng.choice(
            [
                "application/json",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=xx",
                "text/plain",
            ]
        )
        url = f"{api.base}{path}?api-key={api.key}&{query}"
        r = api.http.post(url, data=body, headers={"Content-Type": ctype}, timeout=30)
        assert r.status_code < 500, (path, query, body, r.text)
        answer = r.json()
        # a success is 200 and "ok"; anything else is an "error" with its messages (a business
        # error may come with 200, as the service's do)
        if answer.get("status") == "ok":
            assert r.status_code == 200, (path, r.text)
            continue
        assert answer.get("status") == "error", (path, r.status_code, r.text)
        messages = answer.get("errorList")
        assert (
            isinstance(messages, list)
            and messages
            and all(isinstance(m, str) and m.strip() for m in messages)
        ), (path, r.text)


def test_body_values_win_over_query_values(api):
    cid = api.new_campaign("push")
    other_cid = api.new_campaign("push")
    r = api.post_json("/api/campaign/add-os", {"id": other_cid, "items": [4]}, id=cid)
    assert r.json()["status"] == "ok"
    assert "4" in api.item(other_cid)["os"] and api.item(cid)["os"] == []


# --------------------------------------------------------------------------- query decoder


def test_decoder_builds_nested_values():
    got = qs.decode("a[]=1&a[]=2&m[US]=0.5&m[DE]=1&t[c][]=3&i[7][type]=sum&x=y&e=")
    assert got == {
        "a": ["1", "2"],
        "m": {"US": "0.5", "DE": "1"},
        "t": {"c": ["3"]},
        "i": {"7": {"type": "sum"}},
        "x": "y",
        "e": "",
    }


def test_decoder_percent_decodes_and_keeps_plus_as_space():
    assert qs.decode("n=a%20b+c&k%5B%5D=1") == {"n": "a b c", "k": ["1"]}


@pytest.mark.parametrize("query", ["a=1&a[]=2", "a[]=1&a[x]=2", "a[x]=1&a[]=2", "a[b]=1&a[b][c]=2"])
def test_decoder_refuses_conflicting_forms(query):
    with pytest.raises(BadRequest):
        qs.decode(query)


def test_decoder_reads_raw_and_percent_encoded_utf8_alike():
    assert qs.decode("q=M%C3%BCnchen&k%C3%BC=1") == {"q": "München", "kü": "1"}
    assert qs.decode("q=München&kü=1".encode()) == {"q": "München", "kü": "1"}


@pytest.mark.parametrize("query", [b"q=M\xfcnchen", b"q=%FC", b"q=%ED%A0%80", b"k\xff=1"])
def test_decoder_names_the_parameter_that_is_not_utf8(query):
    with pytest.raises(BadRequest, match=r"not valid UTF-8: parameter '(q|k\\xff)'"):
        qs.decode(query)


def test_decoder_bounds_nesting_and_parameter_count():
    ok = "a" + "[b]" * (limits.MAX_DEPTH - 1)
    assert qs.split_key(ok) == ["a"] + ["b"] * (limits.MAX_DEPTH - 1)
    with pytest.raises(BadRequest, match=f"nested deeper than {limits.MAX_DEPTH} levels"):
        qs.decode(ok + "[b]=1")
    with pytest.raises(BadRequest, match="nested deeper than"):
        qs.decode("a" + "[b]" * 100_000 + "=1")  # refused before any work in its depth
    assert (
        len(qs.decode("&".join(f"k{i}=1" for i in range(limits.MAX_PARAMS)))) == limits.MAX_PARAMS
    )
    with pytest.raises(BadRequest, match="Too many parameters in the form body: more than"):
        qs.decode("&".join(["a[]=1"] * (limits.MAX_PARAMS + 1)), "form body")


@pytest.mark.parametrize(
    "value,message",
    [
        ("9223372036854775807", None),
        ("-9223372036854775808", None),
        ("9223372036854775808", "from -9223372036854775808 to 9223372036854775807"),
        ("9" * 5000, "from -9223372036854775808"),
        (2**63, "an integer of 64 bits"),
        (1e300, "from -9223372036854775808"),
        ("١٢", "must be an integer, got"),
    ],
)
def test_integers_are_64_bit(value, message):
    from toolkit.sandbox.params import to_int

    if message is None:
        assert to_int(value, "id") == int(value)
    else:
        with pytest.raises(BadRequest, match=message):
            to_int(value, "id")
