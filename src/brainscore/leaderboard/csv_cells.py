"""CSV cells a spreadsheet reads as data, never as a formula (issue 36: ``/leaderboard.csv`` carried
``=HYPERLINK(...)`` cells from model identifiers).

The OWASP rule for CSV injection (https://owasp.org/www-community/attacks/CSV_Injection): a cell that starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with a single quote, so Excel, LibreOffice
and Google Sheets show it as text. Numbers stay numbers: an int or float, or a text that is a plain decimal
number (``-0.123456``, ``1e-05``), is written as it is, so a negative score is not turned into text.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable

__all__ = ["safe_cell", "safe_row", "FORMULA_STARTS"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""The first characters that make a spreadsheet read a cell as a formula (OWASP)."""

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet evaluates: numbers (and texts that are plain decimal numbers) as
    they are, any other text starting with one of :data:`FORMULA_STARTS` prefixed with ``'``; None as ``""``.

    Examples
    --------
    >>> safe_cell('=HYPERLINK("http://evil","x")'), safe_cell("-0.250000"), safe_cell(-0.25), safe_cell("@net")
    ('\\'=HYPERLINK("http://evil","x")', '-0.250000', -0.25, "'@net")
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return value if not isinstance(value, float) or math.isfinite(value) else str(value)
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def safe_row(values: Iterable[Any]) -> list:
    """:func:`safe_cell` of every value of a row."""
    return [safe_cell(v) for v in values]
