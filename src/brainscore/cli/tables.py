"""Tables for the terminal, drawn as rich draws them (its default box, a heavy header) at the cost of string joins.

rich laid out the leaderboard's 704 rows in seconds (it measures and wraps every cell); these tables are
plain columns whose width is the widest cell (``rich.cells.cell_len``, so wide characters count double).
"""
from __future__ import annotations

__all__ = ["box_table", "cell_width"]


def cell_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (``rich.cells.cell_len`` where it is not plain ASCII)."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def box_table(header: list[str], rows: list[list[str]], right=()) -> list[str]:
    """Lines of a table as rich draws one with its default box (a heavy header): one space either side of each cell,
    the columns ``right`` justified to the right, the others to the left.

    Examples
    --------
    >>> print("\\n".join(box_table(["model", "score"], [["pixels", "0.1123"]], right=[1])))
    ┏━━━━━━━━┳━━━━━━━━┓
    ┃ model  ┃  score ┃
    ┡━━━━━━━━╇━━━━━━━━┩
    │ pixels │ 0.1123 │
    └────────┴────────┘
    """
    right = set(right)
    widths = [max([cell_width(header[i])] + [cell_width(row[i]) for row in rows]) for i in range(len(header))]

    def line(cells: list[str], bar: str) -> str:
        parts = []
        for i, (cell, size) in enumerate(zip(cells, widths)):
            pad = " " * (size - cell_width(cell))
            parts.append(f" {pad}{cell} " if i in right else f" {cell}{pad} ")
        return bar + bar.join(parts) + bar

    def rule(left: str, middle: str, end: str, fill: str) -> str:
        return left + middle.join(fill * (size + 2) for size in widths) + end

    return ([rule("┏", "┳", "┓", "━"), line(header, "┃"), rule("┡", "╇", "┩", "━")]
            + [line(row, "│") for row in rows] + [rule("└", "┴", "┘", "─")])
