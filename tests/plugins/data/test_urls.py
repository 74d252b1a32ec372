"""Every URL a data plugin declares names a file its upstream repository has, at the pinned commit.

Tests have no internet, so the upstream repositories' files are recorded in
``upstream_listing.json`` (next to this file). A URL whose folder is misspelled (Cowley 2026's
``responses_repeataveraged`` for ``responses_repeat_averaged``, issue 15 item 10) 404s for every
user without a mirror; here it fails.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.data.store import declared

LISTING = {url: {f"{folder}/{name}".lstrip("/") for folder, names in tree.items() for name in names}
           for url, tree in json.loads((Path(__file__).with_name("upstream_listing.json")).read_text()).items()
           if url != "_about"}


def _declared_urls() -> list[tuple[str, str]]:
    registry.import_plugins("data")
    return [(source.path, source.url) for sources in declared().values() for source in sources if source.url]


def test_every_declared_url_names_an_upstream_file():
    urls = _declared_urls()
    assert len(urls) >= 1678  # Cowley 9, Geirhos 1,665 (26 of them the instructed experiments' CSVs), Kriegeskorte 4
    wrong = []
    for path, url in urls:
        repository = next((r for r in LISTING if url.startswith(r + "/")), None)
        if repository is None:
            wrong.append(f"{url}: no recorded repository (add its listing to upstream_listing.json)")
        elif url[len(repository) + 1:] not in LISTING[repository]:
            wrong.append(f"{url} (for {path}): no such file upstream")
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("session", ["190923", "201025", "210224", "210325"])
def test_cowley_repeat_averaged_url(session):
    urls = dict(_declared_urls())
    assert urls[f"cowley2026_v4/responses_repeat_averaged/responses_{session}.npy"] == (
        "https://raw.githubusercontent.com/cowleygroup/V4_compact_models/f4552ad9d34a466ebc66658f72a08a8e5038f1cf/"
        f"data_V4_responses/responses_repeat_averaged/responses_{session}.npy")
