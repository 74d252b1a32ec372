"""The website's routes, one :class:`fastapi.APIRouter` per area: :mod:`.pages` (leaderboard, model and
benchmark pages, plots), :mod:`.accounts` (register, log in, tokens), :mod:`.submissions` (upload, status,
re-run) and :mod:`.api` (the same data as JSON under ``/api``). :func:`brainscore.web.app.create_app`
includes them all.
"""
