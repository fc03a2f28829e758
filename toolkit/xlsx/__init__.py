"""A workbook's file checked before a reader parses it, for every layer that reads one (the
statistics reader and the workbook readers of ``bulk``).

A reader trusts the file: it sizes what it holds by the farthest cell reference, unpacks
what the zip directory says, and resolves a row or a cell stored twice as it likes. So the
file is read first, as a stream, within bounds, and refused in one line naming the sheet and
the cell:

- :mod:`.archive`: the zip (is it an .xlsx at all, a part stored twice, a zip bomb) and
  each part unpacked no further than its directory entry says;
- :mod:`.parts`: which part holds which sheet;
- :mod:`.guard`: each sheet's rows and cells (references, order, area, shared strings);
- :mod:`.cellscan`: the rows and cells of a block of sheet XML, found with numpy;
- :mod:`.ods`: the area an OpenDocument sheet's repeated rows and cells claim (an .ods
  has no cell references; the statistics reader takes one).

For example, a sheet whose cell says it is in column CYWOQVJ::

    from toolkit.xlsx.archive import check_file
    from toolkit.xlsx.guard import SheetGuard

    check_file("stats.xlsx")                  # the zip: WorkbookError if it is refused
    SheetGuard("stats.xlsx").check("Sheet1")  # WorkbookError: 1 problem in the workbook
    # stats.xlsx: Sheet1 row 2: 'CYWOQVJ2': cell reference 'CYWOQVJ2' is not a cell of a
    # worksheet (columns A to XFD, rows 1 to 1,048,576): ...
"""
