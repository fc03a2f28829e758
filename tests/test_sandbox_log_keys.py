"""The sandbox scrubs its own log records: no key, even with the client's redaction gone.

The client's redaction covers every process that imports the toolkit; the sandbox does not
rely on it (it imports nothing of the client). Checked in a fresh process whose log record
factory and logger filters are put back as they are before the client installs them.
"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import io, json, logging, sys
import requests
from toolkit.client import redaction
from toolkit.sandbox import Sandbox

logging.setLogRecordFactory(logging.LogRecord)  # the client's redaction, undone
for name in list(logging.root.manager.loggerDict):
    logger = logging.getLogger(name)
    if redaction.FILTER in logger.filters:
        logger.removeFilter(redaction.FILTER)

buf = io.StringIO()
handler = logging.StreamHandler(buf)
handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
for name in ("toolkit", "waitress"):
    logging.getLogger(name).addHandler(handler)
    logging.getLogger(name).setLevel(logging.DEBUG)

with Sandbox(campaigns=1) as sb:
    key = sb.api_keys[0]

    def broken(request):  # a bug whose message holds the URL and the bare key
        raise RuntimeError(f"cannot serve {request.url} for {request.args.get('api-key')}")

    sb.app.carry_out = broken
    answer = requests.get(sb.url + "/api/campaign/list", params={"api-key": key}, timeout=10)
    logging.getLogger("toolkit.sandbox").error("a body %s", {"api-key": key})
log = buf.getvalue()
print(json.dumps({
    "status": answer.status_code,
    "client_filter": any(
        redaction.FILTER in logging.getLogger(n).filters for n in ("toolkit", "toolkit.sandbox")
    ),
    "logged": "sandbox error on GET /api/campaign/list" in log and "cannot serve" in log,
    "leaked": key in log or key in answer.text,
    "scrubbed": log.count("***"),
}))
"""


def test_a_sandbox_without_the_client_logs_no_key():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] == 500
    assert out["client_filter"] is False
    assert out["logged"], "the sandbox's error line is missing"
    assert out["scrubbed"] >= 3  # the URL's parameter, the bare key, the dict's value
    assert out["leaked"] is False
