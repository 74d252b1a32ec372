"""Fixtures of the website's browser tests (the helpers they share are in ``tests/browser_helpers.py``)."""
from __future__ import annotations

import pytest

from browser_helpers import chromium_page, screenshots


@pytest.fixture(scope="module")
def page(server):
    """A headless Chromium page with a 1440 x 900 pixel viewport, opened after the module's ``server`` fixture
    (the site it visits) has started; a module that wants another viewport defines its own ``page``."""
    with chromium_page(1440, 900) as page:
        yield page


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """The folder a browser test module's screenshots go to (:func:`browser_helpers.screenshots`)."""
    return screenshots(tmp_path_factory)
