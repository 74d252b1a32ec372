"""Write the score colour classes (``.c0`` .. ``.c100``, ``.c-none``) into the website's stylesheet.

The pages colour a score by a class (:func:`brainscore.web.site.colour_class`), not an inline style: the
Content-Security-Policy allows no inline style (issue 23). Run from the project root after a change of
:func:`brainscore.web.site.colour`::

    PYTHONPATH=src python tools/colour_css.py

It replaces what lies between the stylesheet's ``colour scale`` markers with
:func:`brainscore.web.site.colour_css`; ``tests/web/test_inline_styles.py`` checks that the two agree.
"""
from __future__ import annotations

import sys
from pathlib import Path

from brainscore.web.site import HERE, colour_css

BEGIN = "/* colour scale: written by tools/colour_css.py, do not edit */\n"
END = "/* end of colour scale */\n"


def with_scale(stylesheet: str) -> str:
    """``stylesheet`` with the rules between :data:`BEGIN` and :data:`END` replaced (appended if absent).

    Raises
    ------
    ValueError
        If only one of the markers is there (a hand edit broke them: restore both, or delete both).
    """
    block = BEGIN + colour_css() + END
    if BEGIN not in stylesheet and END not in stylesheet:
        return stylesheet.rstrip("\n") + "\n" + block
    if stylesheet.count(BEGIN) != 1 or stylesheet.count(END) != 1:
        raise ValueError(f"the stylesheet needs exactly one {BEGIN.strip()!r} and one {END.strip()!r} line; "
                         "restore them or delete both (the block is appended again)")
    head, rest = stylesheet.split(BEGIN)
    return head + block + rest.split(END)[1]


def main() -> int:
    path: Path = HERE / "static" / "style.css"
    path.write_text(with_scale(path.read_text()))
    print(f"wrote the colour scale into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
