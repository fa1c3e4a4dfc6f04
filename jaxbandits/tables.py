"""Tables of strings as markdown or aligned plain text, and printed with rich on a terminal.

One renderer for every table jaxbandits shows: the command line's ``run`` / ``sweep`` /
``compare`` / ``list`` reports and ``summary.md``, and the reproduction and benchmark scripts.

Example::

    from jaxbandits.tables import print_table, render_table

    rows = [["lin-ts", "12.30 ± 1.10"], ["lin-ucb", "15.70 ± 1.40"]]
    print(render_table(["agent", "final regret"], rows))
    # | agent | final regret |
    # |---|---|
    # | lin-ts | 12.30 ± 1.10 |
    # | lin-ucb | 15.70 ± 1.40 |
    print(render_table(["agent", "final regret"], rows, format="text"))
    # agent    final regret
    # lin-ts   12.30 ± 1.10
    # lin-ucb  15.70 ± 1.40
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["print_table", "render_table"]


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *,
                 format: str = "markdown", align: str | None = None, title: str | None = None,
                 note: str | None = None) -> str:
    """A table as text: GitHub-flavoured markdown or aligned plain text.

    Args:
      headers: the ``C`` column headings.
      rows: the rows, each ``C`` cells (``str()`` of each is shown).
      format: ``"markdown"`` (``| a | b |`` lines; ``|`` inside a cell is escaped) or
        ``"text"`` (columns padded to their widest cell, two spaces apart).
      align: one letter per column, ``"l"`` (left) or ``"r"`` (right). Plain text defaults to
        the first column left and the others right; markdown marks right-aligned columns
        (``---:``) only when ``align`` is given (its columns are left-aligned by default).
      title: a line above the table (with a blank line after it), such as ``"### Results"``.
      note: a paragraph under the table (after a blank line): units, what the numbers are.

    Returns:
      The table, lines joined by ``"\\n"``, without a final newline.

    Raises:
      ValueError: a row has another number of cells than ``headers``, ``format`` or ``align``
        is not one of the above.
    """
    headers = [str(h) for h in headers]
    cells = [[str(c) for c in row] for row in rows]
    for i, row in enumerate(cells):
        if len(row) != len(headers):
            raise ValueError(f"render_table: row {i} has {len(row)} cells, the headers "
                             f"{len(headers)}")
    sides = _sides(align, len(headers))
    if format == "markdown":
        def line(row: list[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"

        marks = {"l": "---", "r": "---:"}
        rule = "|" + "|".join(marks[s] if align else "---" for s in sides) + "|"
        lines = [line(headers), rule] + [line(row) for row in cells]
    elif format == "text":
        widths = [max(len(c) for c in column) for column in zip(headers, *cells, strict=True)]
        lines = ["  ".join(c.ljust(w) if s == "l" else c.rjust(w)
                           for c, w, s in zip(row, widths, sides, strict=True)).rstrip()
                 for row in [headers, *cells]]
    else:
        raise ValueError(f"render_table: format must be 'markdown' or 'text', got {format!r}")
    if title:
        lines = [title, ""] + lines
    if note:
        lines += ["", note]
    return "\n".join(lines)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *,
                title: str | None = None, note: str | None = None, align: str | None = None,
                plain: bool = False, file: TextIO | None = None) -> None:
    """Prints a table: with rich on a terminal (cells wrap, never cut), else as markdown
    (:func:`render_table`), whatever the width of the log or pipe it goes to.

    Args:
      headers / rows / align: as for :func:`render_table` (rich aligns the first column left
        and the others right unless ``align`` says otherwise).
      title: the table's title (rich's title; a line above the markdown).
      note: a paragraph under the table.
      plain: print markdown even on a terminal.
      file: where to print (default ``sys.stdout``).
    """
    file = sys.stdout if file is None else file
    if plain or not file.isatty():
        print(render_table(headers, rows, align=align, title=title, note=note), file=file,
              flush=True)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column, side in zip(headers, _sides(align, len(headers)), strict=True):
        table.add_column(str(column), justify="left" if side == "l" else "right",
                         overflow="fold")
    for row in rows:
        table.add_row(*(str(c) for c in row))
    console = Console(file=file)
    console.print(table)
    if note:
        console.print(note, style="dim", highlight=False)


def _sides(align: str | None, columns: int) -> str:
    """One of ``l`` / ``r`` per column: ``align``, or the first column left, the rest right."""
    if align is None:
        return "l" + "r" * (columns - 1) if columns else ""
    if len(align) != columns or set(align) - {"l", "r"}:
        raise ValueError(f"render_table: align must be one letter l or r per column ({columns}),"
                         f" got {align!r}")
    return align
