"""Which part of a workbook's archive holds which sheet, from ``xl/workbook.xml`` and its
relationships (what every reader of sheet XML and the writer that splices rows in look up).

>>> import io, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("xl/workbook.xml", '<workbook xmlns="%s" xmlns:r="%s"><sheets>'
...         '<sheet name="stats" sheetId="1" r:id="rId1"/></sheets></workbook>'
...         % (NS["m"], NS["r"]))
...     z.writestr("xl/_rels/workbook.xml.rels", '<Relationships xmlns="%s"><Relationship '
...         'Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>' % NS["rel"])
>>> sheet_parts(zipfile.ZipFile(buf))
{'stats': 'xl/worksheets/sheet1.xml'}
"""

from __future__ import annotations

import zipfile
from xml.etree import ElementTree

#: The namespaces of the workbook part and of its relationships.
NS = {
    "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
}


def sheet_parts(archive: zipfile.ZipFile) -> dict[str, str]:
    """``{sheet name: part name}`` of a workbook, from its workbook.xml and its rels; two
    sheets of one name (whatever its case: Excel allows none) or on one part raise
    ``ValueError``."""
    workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target", "") for r in rels.findall("rel:Relationship", NS)}
    out: dict[str, str] = {}
    for sheet in workbook.findall("m:sheets/m:sheet", NS):
        target = targets[sheet.get(f"{{{NS['r']}}}id")]
        target = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        name = sheet.get("name", "")
        if name.lower() in {n.lower() for n in out} or target in out.values():
            raise ValueError(f"two sheets named {name!r} or on the part {target}")
        out[name] = target
    return out


__all__ = ["NS", "sheet_parts"]
