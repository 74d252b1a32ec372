"""The website of ``brainscore serve``: leaderboard, model and benchmark pages, accounts and model
submission (FastAPI, Jinja2 templates, matplotlib plots). Build it with :func:`create_app`.

Scoring never runs in the web process: :mod:`brainscore.web.queue` hands each submission's pairs to a
Dask cluster, whose tasks score each pair across the boundary (:mod:`brainscore.web.pairs`, :mod:`brainscore.boundary`).
"""
from __future__ import annotations


def create_app(*args, **kwargs):
    """The FastAPI application; see :func:`brainscore.web.app.create_app`."""
    from brainscore.web.app import create_app as build

    return build(*args, **kwargs)
