"""A website without its queue, for the browser tests of its pages: ``python page_server.py DB_URL PORT ROOT``.

It serves :func:`brainscore.web.create_app` with ``start_worker=False`` (no Dask cluster: pages, accounts and
the JSON API only) in a process of its own, so each test module sees a fresh server (no plot drawn yet).
"""
from __future__ import annotations

import sys

if __name__ == "__main__":
    import uvicorn

    from brainscore.web import create_app

    url, port, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    uvicorn.run(create_app(db_url=url, root=root, start_worker=False), host="127.0.0.1", port=port,
                log_level="warning", server_header=False)
