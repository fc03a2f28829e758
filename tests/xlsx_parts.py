"""Parts of hand-built xlsx files shared by the hostile-workbook tests."""

from __future__ import annotations


def declare_strings(name: str, data: str) -> str:
    """``data`` of the part ``name`` with a shared-strings part declared in it."""
    if name == "[Content_Types].xml":
        return data.replace(
            "</Types>",
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        )
    if name == "xl/_rels/workbook.xml.rels":
        return data.replace(
            "</Relationships>",
            '<Relationship Id="rIdSS" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        )
    return data
