"""What every area of the website shares: the database, the queue, the templates, who is logged in,
CSRF tokens and who may see which model. One :class:`Site` per application, kept in ``app.state.site``;
the routers (:mod:`brainscore.web.routes`) reach it with :func:`site_of`.
"""
from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import math
import os
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from fastapi import HTTPException, Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore import config
from brainscore.leaderboard.aggregate import failure_line, leaderboard_records
from brainscore.leaderboard.cache import ResultsCache
from brainscore.results import Database
from brainscore.web import accounts
from brainscore.web.checks import ALLOWED_REQUIREMENTS
from brainscore.web.mail import Mailer
from brainscore.web.notices import Throttle
from brainscore.web.queue import Dispatcher, SubmissionTask, place_in_queue

HERE = Path(__file__).parent
_USER = "brainscore.user"
"""Key of the request's scope under which :meth:`Site.current_user` keeps the user it looked up."""


def home() -> Path:
    """:func:`brainscore.config.home` (``$BRAINSCORE_HOME``, else the settings file's ``home``, else
    ``~/.brainscore``: the one home the sandbox and the command line use too), created if missing."""
    folder = config.home()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def secret(folder: Path) -> str:
    """The session-signing key: ``$BRAINSCORE_WEB_SECRET``, else a random key kept in ``folder``."""
    if os.environ.get("BRAINSCORE_WEB_SECRET"):
        return os.environ["BRAINSCORE_WEB_SECRET"]
    path = folder / "web-secret"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()


def fmt(value, digits: int = 3) -> str:
    """A number with ``digits`` decimals; ``—`` for None or NaN (the templates' ``fmt`` filter)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def utc(when) -> str:
    """A time as every page shows it: ``YYYY-MM-DD HH:MM UTC`` (the templates' ``utc`` filter; issue 36: times
    were shown without a zone). ``when``: a datetime (naive ones hold UTC) or an ISO 8601 text; "" for None."""
    if not when:
        return ""
    if isinstance(when, str):
        try:
            when = dt.datetime.fromisoformat(when)
        except ValueError:
            return when
    if not isinstance(when, dt.datetime):  # a date
        return f"{when.isoformat()} UTC"
    when = when.astimezone(dt.timezone.utc) if when.tzinfo is not None else when
    return when.strftime("%Y-%m-%d %H:%M UTC")


def colour(value) -> str:
    """Background colour of a score: a red (0) to green (1) scale, grey when missing.

    ``value`` in [0, 1] (clamped) gives ``hsl(120 value, 65%, 88 - 30 value %)``; None gives ``#eeeeee``.
    The pages do not write it out: they name the class of :func:`colour_class`, whose rules in the static
    stylesheet hold this colour at each hundredth (:func:`colour_css`).
    """
    if value is None:
        return "#eeeeee"
    value = min(max(float(value), 0.0), 1.0)
    return f"hsl({int(120 * value)}, 65%, {88 - 30 * value:.0f}%)"


COLOUR_STEPS = 100
"""The colour scale's steps in the stylesheet: classes ``c0`` .. ``c100`` (a score rounded to 0.01)."""
_COLOUR_CLASSES = tuple(f"c{k}" for k in range(COLOUR_STEPS + 1))
MISSING_COLOUR_CLASS = "c-none"
"""The class of a missing score (None or NaN, shown as ``—``): grey."""


def colour_class(value) -> str:
    """The stylesheet class that colours a score (the Content-Security-Policy allows no inline style).

    ``c<k>`` with ``k = round(100 value)`` (halves up), ``value`` clamped to [0, 1]: the colour
    :func:`colour` gives ``k / 100``, so a score is shown in the colour of its value rounded to 0.01.
    :data:`MISSING_COLOUR_CLASS` for None or NaN. One comparison and a tuple lookup: it runs for every
    cell of the leaderboard (:func:`score_cells`).
    """
    if value is None or value != value:
        return MISSING_COLOUR_CLASS
    step = value * COLOUR_STEPS + 0.5
    return _COLOUR_CLASSES[0 if step < 1 else COLOUR_STEPS if step >= COLOUR_STEPS else int(step)]


def colour_css() -> str:
    """The stylesheet's rules of the colour classes (:func:`colour_class`), one a line.

    ``static/style.css`` holds them between its ``colour scale`` markers; ``tools/colour_css.py``
    writes them there again after a change of :func:`colour`, and ``tests/web/test_inline_styles.py``
    checks that the two agree.
    """
    lines = [f".{name} {{ background: {colour(k / COLOUR_STEPS)}; }}" for k, name in enumerate(_COLOUR_CLASSES)]
    return "\n".join(lines + [f".{MISSING_COLOUR_CLASS} {{ background: {colour(None)}; }}"]) + "\n"


_CELLS: "OrderedDict[tuple, tuple]" = OrderedDict()
"""The cells :func:`score_cells` wrote, by row and columns, least recently used first."""
_CELLS_LOCK = threading.Lock()
_CELLS_KEPT = 8192
_NO_RULE: dict = {}


def public_failure(record) -> str:
    """The one-line reason a failed score shows on the public leaderboard: its first line
    (:func:`~brainscore.leaderboard.aggregate.failure_line`) without the server's host, addresses or folders
    (:func:`~brainscore.web.redact.redact`)."""
    from brainscore.web.redact import redact

    return redact(failure_line(record)) or "failed"


def score_cells(record: dict, cols: list[dict]):
    """The ``<td>`` cells of one leaderboard row, as Markup (the template's loop, written in Python).

    Written out here because a Jinja loop over 100 rows x 43 columns took 225 ms per page (10
    escapes and 4 filters per cell), and pages for logged-in visitors, filters and rare sort orders
    are rendered per request. The same markup as the loop made: every value escaped.

    The cells of a row are kept (the last 8,192 rows and column states written) under the very ``scores``,
    ``missing`` and ``rule`` dicts of the record (held, so compared by identity): the leaderboard
    (:class:`~brainscore.leaderboard.aggregate.Standings`) replaces the entry of a model with a new score
    and shares every other entry between versions, so a page built after a new score writes one row
    anew, not a hundred.
    """
    scores, missing, rule = record["scores"], record["missing"], record.get("rule") or _NO_RULE
    key = (record["model"], id(scores), id(missing), id(rule),
           tuple((c["node"], bool(c.get("hidden")), c.get("hidden_by")) for c in cols))
    kept = _CELLS.get(key)
    if kept is not None and kept[0] is scores and kept[1] is missing and kept[2] is rule:
        return kept[3]
    markup = _score_cells(record, cols)
    with _CELLS_LOCK:
        _CELLS[key] = (scores, missing, rule, markup)
        while len(_CELLS) > _CELLS_KEPT:
            _CELLS.popitem(last=False)
    return markup


def _score_cells(record: dict, cols: list[dict]):
    """:func:`score_cells`, written.

    Each cell carries only what is its own (issue 36: 907 kB of HTML per 100 rows, most of it repeated in
    every row): its node, score, state (``data-state`` done / failed / none on a benchmark) and a short
    ``title``: the value to 4 decimals and its status (missing children, rule-committed layers, the reason a
    run failed, never run). The model is the row's and the benchmark the column's header; a column's
    ancestors are on its ``<th>`` only (the page's script folds a column's cells by its index).
    """
    from markupsafe import Markup, escape

    scores, missing, rule = record["scores"], record["missing"], record.get("rule") or {}
    failed = record.get("failed") or {}
    out = []
    for c in cols:
        node = c["node"]
        value, n_missing, n_rule = scores.get(node), missing.get(node, 0), rule.get(node, 0)
        reason = failed.get(node) if c["leaf"] else None
        parts = [] if value is None else [fmt(value, 4)]
        if n_missing:
            parts.append(f"{n_missing} missing")
        if n_rule:
            parts.append("layer committed by the rule" if c["leaf"] else f"{n_rule} with a rule-committed layer")
        state = ""
        if c["leaf"]:  # done, failed (its latest run; a done score stays shown) or never run
            state = f' data-state="{"done" if value is not None else "failed" if reason else "none"}"'
            if reason:
                parts.append(f"{'a later run ' if value is not None else ''}failed: {escape(reason)}")
            elif value is None:
                parts.append("never run")
        title = "; ".join(parts) or "—"
        hidden_by = f' hidden data-hidden-by="{c.get("hidden_by")}"' if c.get("hidden") else ""
        shown = ('<span class="failed">failed</span>' if reason else '<span class="missing">—</span>') \
            if value is None else fmt(value, 3)
        mark = (f'<span class="rule-mark" data-rule="{n_rule}">†{"" if c["leaf"] else n_rule}</span>'
                if n_rule and value is not None else "")
        if reason and value is not None:
            mark += '<span class="later-failed">!</span>'
        note = f'<span class="nmissing">{n_missing} missing</span>' if n_missing and not c["leaf"] else ""
        out.append(f'<td class="score {colour_class(value)}{" leaf" if c["leaf"] else ""}" data-node="{escape(node)}" '
                   f'data-score="{"" if value is None else "%.6f" % value}"{state}{hidden_by} '
                   f'title="{title}">{shown}{mark}{note}</td>')
    return Markup("\n  ".join(out))


def ranking_rows(ranking: list[dict], start: int = 1):
    """The ``<tr>`` rows of a benchmark page's ranking (``{"model", "score", "ci95", "raw", "error"}`` each, best
    first; the first ranked ``start``: a later page of the ranking keeps each model's rank), as Markup: the
    template's loop written in Python, as :func:`score_cells`, because a Jinja loop
    over 704 models took 12 ms of every rebuild of the page. The same markup the loop made, every model
    identifier escaped.
    """
    from markupsafe import Markup, escape

    out = []
    for index, r in enumerate(ranking, start=start):
        model = escape(r["model"])
        ci95 = r.get("ci95")
        interval = f"[{fmt(ci95[0], 3)}, {fmt(ci95[1], 3)}]" if ci95 else "—"
        out.append(f'<tr data-model="{model}"><td>{index}</td><td><a href="/models/{model}">{model}</a></td>\n'
                   f'<td class="{colour_class(r["score"])}">{fmt(r["score"], 4)}</td>\n'
                   f'<td>{interval}</td>\n'
                   f'<td>{fmt(r["raw"], 4)}</td><td>{fmt(r["error"], 4)}</td></tr>\n')
    return Markup("".join(out))


_BREAKS = None


def breakable(identifier: str):
    """``identifier`` escaped, with a line-break opportunity (``<wbr>``) after each ``.``, ``_`` and ``-`` and
    between a year and the words after it (``Hermann2020<wbr>cueconflict-<wbr>shape_<wbr>bias``), as Markup: a
    leaderboard header wraps into lines no wider than its column (issue 29: headers ran into each other)."""
    import re

    from markupsafe import Markup, escape

    global _BREAKS
    if _BREAKS is None:
        _BREAKS = re.compile(r"([._-])|(?<=\d)(?=[A-Za-z])")
    return Markup(_BREAKS.sub(lambda m: (m.group(1) or "") + "<wbr>", str(escape(identifier))))


def person(username: str | None, display_name: str | None = None) -> str | None:
    """How the site names an account, the same on every page (issue 36: some pages showed the display name,
    others the user name): ``"Ada Lovelace (@ada)"``, or ``"@ada"`` without a display name; None and
    ``"built-in"`` (the built-in models' owner) as they are. Plain text: the template escapes it. The user name
    is always shown, so a display name cannot pass for another account."""
    if not username or username == "built-in":
        return username
    display_name = " ".join((display_name or "").split())
    return f"{display_name} (@{username})" if display_name else f"@{username}"


def templates() -> Jinja2Templates:
    """The Jinja2 templates of the site with its filters."""
    built = Jinja2Templates(directory=str(HERE / "templates"))
    built.env.filters["fmt"] = fmt
    built.env.filters["colour_class"] = colour_class
    built.env.filters["breakable"] = breakable
    built.env.filters["utc"] = utc
    built.env.filters["person"] = person
    built.env.globals["score_cells"] = score_cells
    built.env.globals["ranking_rows"] = ranking_rows
    return built


def json_bytes(value) -> bytes:
    """``value`` as FastAPI sends it (the same JSON and separators), as bytes.

    Plain values (dicts, lists, strings, numbers, None: the leaderboard's records) go straight to
    :func:`json.dumps`; only what it cannot write (dates, dataclasses, ...) passes through FastAPI's
    ``jsonable_encoder``. Encoding the 704-model leaderboard that way took 190 ms, most of it
    ``jsonable_encoder`` walking 90,000 plain values. NaN and infinities raise ``ValueError``
    (never sent as invalid JSON).
    """
    import json

    from fastapi.encoders import jsonable_encoder

    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                      default=jsonable_encoder).encode()


@dataclass
class Site:
    """The shared state of one website.

    Attributes
    ----------
    store : Database
        The results database (the web's account and queue tables are in it too).
    engine : Engine
        ``store.engine``.
    dispatcher : Dispatcher
        The submission queue's thread.
    root : Path
        Folder of uploaded submissions (``root/<task id>/site``).
    weights_dirs : tuple of Path
        Server folders submitted plugin code may reference by absolute path.
    results : ResultsCache
        The leaderboard and the anonymous pages, computed once per change of the recorded scores
        (default: one over ``store``).
    secret_key : str
        The key sessions are signed with; also signs the links of verification and reset mails.
    mailer : Mailer
        The site's mail (default: :class:`~brainscore.web.mail.Mailer` with the configured settings).
    throttle : Throttle
        Rate limits on the account mails (:class:`~brainscore.web.notices.Throttle`).
    allowed_requirements : frozenset of str
        Packages a submission's requirements.txt may name (default
        :data:`~brainscore.web.checks.ALLOWED_REQUIREMENTS`; ``brainscore serve --allow-package`` adds to it).
    page_max_age : float
        Seconds a shared page (:meth:`shared`) may lag behind new scores: it is built again at most this
        often while scores arrive (in the background, while the previous one is still sent), and a new
        score shows within twice this time (default 0: at the next request; ``brainscore serve`` uses
        1 s). Anything else shows at the next request.
    """

    store: Database
    engine: Engine
    dispatcher: Dispatcher
    root: Path
    weights_dirs: tuple
    pages: Jinja2Templates
    results: ResultsCache | None = None
    secret_key: str = ""
    mailer: Mailer | None = None
    throttle: Throttle | None = None
    page_max_age: float = 0.0
    allowed_requirements: frozenset = ALLOWED_REQUIREMENTS

    def __post_init__(self):
        if self.throttle is None:
            self.throttle = Throttle()
        if self.results is None:
            self.results = ResultsCache(self.store, max_values=4096, describe_failure=public_failure)
        if self.mailer is None:
            self.mailer = Mailer()

    def warm(self) -> None:
        """Compute what every page is built from (the scores, the leaderboard, the models and who may see
        them, the scores by model and by benchmark) before the first visitor asks: at the reference's
        scale reading every score takes about 2 s, which the first requests of a new web worker would
        otherwise wait for. A database that cannot be read is left to the first request (it answers
        with the reason); the site starts anyway.
        """
        try:
            version = self.results.version()
            self.results.records(version)
            self.results.aggregates_of("", version)
            self.results.scores_of(model="", version=version)
            self.results.scores_of(benchmark="", version=version)
            self.hidden_from(None, version)
            self.model_row("")
        except Exception as error:  # noqa: BLE001 - warming is an optimisation; the pages report the problem
            import logging

            logging.getLogger(__name__).warning("the leaderboard could not be computed at start-up: %s", error)

    # ------------------------------------------------------------------ who is asking
    def current_user(self, request: Request):
        """The logged-in user of the session, or None (looked up once per request).

        The signed session cookie carries a random session id (``sid``); it authenticates only while its
        :class:`~brainscore.results.schema.WebSession` row exists (:func:`~brainscore.web.accounts.session_user`)
        and the password has not changed since the log-in (:func:`~brainscore.web.accounts.session_stamp`).
        """
        if _USER not in request.scope:
            user = accounts.session_user(self.engine, request.session.get("sid"))
            if user is not None and request.session.get("stamp") != accounts.session_stamp(user):
                user = None  # the password changed since the session began
            request.scope[_USER] = user
        return request.scope[_USER]

    def log_in(self, request: Request, user) -> None:
        """Start a new log-in session of ``user``: everything of the old session (its id, its CSRF token) is
        dropped first, so a session fixed by someone else before the log-in is worth nothing after it."""
        accounts.end_session(self.engine, request.session.get("sid"))
        request.session.clear()
        request.session["sid"] = accounts.start_session(self.engine, user)
        request.session["stamp"] = accounts.session_stamp(user)
        request.scope[_USER] = user

    def log_out(self, request: Request) -> None:
        """End the session's log-in on the server (a copy of its cookie stops working too) and drop the session."""
        accounts.end_session(self.engine, request.session.get("sid"))
        request.session.clear()
        request.scope[_USER] = None

    def submit_problem(self, user) -> str | None:
        """Why ``user`` may not submit yet (None if they may): where the site sends mail, an account submits
        once its e-mail address is verified; a site without mail (a local install) cannot deliver the link to
        anyone but its administrator's log, so there an unverified account may submit."""
        if not self.mailer.configured or user.email_verified is not None:
            return None
        if not user.email:
            return "add your e-mail address on your account page and follow the link we send to it before submitting"
        return (f"verify your e-mail address first: follow the link we sent to {user.email} (your account page "
                f"sends a new one)")

    def token_user(self, request: Request):
        """The user of an ``Authorization: Bearer TOKEN`` header, or None."""
        header = request.headers.get("authorization", "")
        return accounts.user_by_token(self.engine, header[7:].strip()) if header.lower().startswith("bearer ") else None

    def reader(self, request: Request):
        """Whoever reads a page or JSON: the session's user, else the token's, else None (anonymous)."""
        return self.current_user(request) or self.token_user(request)

    def api_user(self, request: Request, csrf_needed: bool):
        """The user of an API call: by bearer token, or by session (then with its CSRF header if ``csrf_needed``).

        Raises
        ------
        HTTPException
            401 without a valid token or session, 403 without the session's CSRF token.
        """
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            user = accounts.user_by_token(self.engine, header[7:].strip())
            if user is None:
                raise HTTPException(401, "the API token is not valid; create one on your account page")
            return user
        user = self.current_user(request)
        if user is None:
            raise HTTPException(401, "log in, or send an API token as 'Authorization: Bearer TOKEN'")
        if csrf_needed and not csrf_ok(request, request.headers.get("x-csrf-token")):
            raise HTTPException(403, "CSRF token missing or wrong: send the X-CSRF-Token header")
        return user

    def is_admin(self, user) -> bool:
        """Whether ``user`` (None: nobody) administers the site: a row made by ``brainscore admin add`` on the server
        (:mod:`brainscore.web.administrators`), never a user name alone. Administrators approve and withdraw
        submissions that hold benchmark, data or metric plugins and see every submission's page."""
        from brainscore.web import administrators

        return administrators.is_admin(self.engine, user)

    def logged_in(self, request: Request):
        """The session's user; raises HTTPException 401 when nobody is logged in."""
        user = self.current_user(request)
        if user is None:
            raise HTTPException(401, "log in first")
        return user

    def render(self, request: Request, name: str, status_code: int = 200, **context):
        """Template ``name`` with ``context``, the user and the CSRF token."""
        context.update(user=self.current_user(request), csrf_token=_LazyToken(request))
        return self.pages.TemplateResponse(request, name, context, status_code=status_code)

    # ------------------------------------------------------------------ models and who sees them
    def model_row(self, identifier: str):
        """The results database's row of model ``identifier`` (a :class:`~brainscore.results.StoredModel`), or None.

        Every row is read once per results version (a model updated, deleted or added as private
        changes it); a model added as public since (a new submission, which leaves the version) is
        not among them and is read on its own.
        """
        rows = self.results.get("model rows", lambda: {m.identifier: m for m in self.store.models()})
        return rows[identifier] if identifier in rows else self.store.model(identifier)

    def owner_of(self, identifier: str):
        """The user who submitted model ``identifier`` (None for built-ins and unknown models)."""
        model = self.model_row(identifier)
        return getattr(model, "owner", None) if model is not None else None

    def visible(self, identifier: str, user) -> bool:
        """Public models and built-ins to everyone; private ones to their owner only."""
        model = self.model_row(identifier)
        if model is None or getattr(model, "public", True):
            return True
        return user is not None and getattr(model, "owner", None) == user.username

    def hidden_from(self, user, version: int | None = None) -> frozenset[str]:
        """The private models ``user`` may not see (None: an anonymous visitor).

        The private models are read once per results version (making a model private, or adding a
        private one, changes the version), so a request costs no query beyond the version's.
        """
        version = self.results.version() if version is None else version
        private = self.results.get("private models", self.store.private_models, version)
        if user is None:
            return self.results.get("hidden from anonymous", lambda: frozenset(private), version)
        return frozenset(m for m, owner in private.items() if owner != user.username)

    def board(self, user, at: str | None = None) -> list[dict]:
        """The leaderboard's records (:func:`~brainscore.leaderboard.aggregate.leaderboard_records`) ``user``
        may see; ``at`` (``YYYY-MM-DD``): as it was at the end of that day (UTC).

        The current leaderboard is computed once per change of the results
        (:class:`~brainscore.leaderboard.cache.ResultsCache`); each record is a copy (views add to theirs).

        Raises
        ------
        HTTPException
            400 if ``at`` is not a date.
        """
        hidden = self.hidden_from(user)
        if not at:
            return [dict(r) for r in self.results.records() if r["model"] not in hidden]
        try:
            when = dt.datetime.combine(dt.date.fromisoformat(at), dt.time.max, tzinfo=dt.timezone.utc)
        except ValueError as error:
            raise HTTPException(400, f"at={at!r} is not a date; give YYYY-MM-DD, e.g. at=2026-11-01") from error
        return [r for r in leaderboard_records(self.store, at=when, scores=self.results.scores(),
                                               describe_failure=public_failure)
                if r["model"] not in hidden]

    def shared(self, request: Request, build, media_type: str, viewer=None, name=None, depends=None) -> Response:
        """A response every reader who may see what ``viewer`` sees gets: built, gzipped and tagged once per
        change of the results; a client that already holds it gets ``304 Not Modified``.

        Parameters
        ----------
        request : Request
        build : callable
            ``build(version)`` returns the body (bytes); called once per results version and key.
        media_type : str
        viewer : User, optional
            Whose view it is (None: anonymous). The key holds the models hidden from ``viewer``, so
            nobody gets a body built for a reader who may see more.
        name : hashable, optional
            What the body is; default :func:`page_key` (the path and every query parameter), so
            whatever a route reads from the URL (filters, weights, sort) is part of the key.
        depends : callable, optional
            ``depends(version)`` returns a hashable token of everything the body is built from besides
            the models hidden from ``viewer`` (e.g. :meth:`benchmark_token`): the body is built again
            when the token changes, not at every new results version (a benchmark's page does not
            change with a score of another benchmark). A token that leaves out an input serves a
            stale body: give one only for a body whose inputs are few and known.

        Notes
        -----
        With :attr:`page_max_age`, a body built less than that many seconds ago is sent while only new
        scores were recorded since (:meth:`~brainscore.leaderboard.cache.ResultsCache.recent`), and so is
        the last one built while another request builds the new one: nobody waits for a rebuild.
        Responses carry a weak ``ETag`` (a hash of the body), ``Cache-Control: no-cache`` (a browser
        keeps the page and asks again each time: a new score shows at once) and ``Vary``. Clients that
        accept gzip get the stored bytes as they are (the GZip middleware leaves a response with a
        Content-Encoding alone); others get them decompressed.
        """
        state = self.results.state()
        version = state[0]
        hidden = self.hidden_from(viewer, version)
        key = ("shared", page_key(request) if name is None else name, hidden)

        def compute():
            with self.results.pinned(version):  # what build reads from the cache is of this one version
                body = build(version)
                # level 3 for large bodies (the 2.7 MB leaderboard JSON: 10 ms instead of 25, 10% larger)
                return _tagged(gzip.compress(body, 6 if len(body) < 256 * 1024 else 3, mtime=0))

        if depends is not None:
            body, etag = self.results.get(key, compute, ("depends", depends(version)), size=lambda entry: len(entry[0]))
        else:
            body, etag = self.results.recent(key, compute, state, self.page_max_age, size=lambda entry: len(entry[0]))
        headers = {"ETag": etag, "Vary": "Accept-Encoding, Cookie, Authorization",
                   "Cache-Control": ("private" if viewer is not None else "public") + ", no-cache"}
        if _matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        if "gzip" in request.headers.get("accept-encoding", "").lower():
            return Response(body, media_type=media_type, headers={**headers, "Content-Encoding": "gzip"})
        return Response(gzip.decompress(body), media_type=media_type, headers=headers)

    def benchmark_token(self, benchmark: str, version: int) -> tuple:
        """What an anonymous reader's page of ``benchmark`` (:func:`brainscore.web.views.benchmark_json`) is
        built from besides the models hidden from everyone: its own records (the ``rewrites`` counter and
        its newest row id: :meth:`~brainscore.leaderboard.cache.ResultsCache.last_change`) and the state of
        the tasks that re-score it for every public model (:func:`brainscore.web.new_benchmarks.progress`;
        usually none)."""
        from brainscore.web.new_benchmarks import tasks_of

        with Session(self.engine) as session:
            tasks = tuple((t.id, t.status, t.current, t.finished, json.dumps(t.results, sort_keys=True, default=str))
                          for _, t in tasks_of(session, benchmark))
        return self.results.last_change(benchmark, version), tasks

    # ------------------------------------------------------------------ submission tasks
    def view(self, task: SubmissionTask) -> dict:
        """A submission task as JSON: its state, its place in the queue, and why the cluster cannot be reached;
        its log and failures without the server's host name and folders (:func:`~brainscore.web.redact.redact`).

        ``id`` is the task's random key; ``rerun_of`` the key of the task it re-runs (None if none).
        """
        from brainscore.web.redact import redact_task

        view = redact_task({**task.as_dict(place_in_queue(self.engine, task)), "cluster_problem": self.dispatcher.problem},
                           task.folder)
        if task.rerun_of is not None:
            with Session(self.engine) as session:
                view["rerun_of"] = session.scalar(select(SubmissionTask.key).where(SubmissionTask.id == task.rerun_of))
        return view

    def task_for(self, key: str, user) -> SubmissionTask:
        """Submission task ``key`` (its random public key) of ``user``.

        Raises
        ------
        HTTPException
            404, with the same words whether the task is missing or someone else's (nothing to learn by trying).
        """
        task = None
        if user is not None and isinstance(key, str) and 0 < len(key) <= 64:
            with Session(self.engine, expire_on_commit=False) as session:
                task = session.scalar(select(SubmissionTask).where(SubmissionTask.key == key))
        if task is None or (task.owner != user.username and not self.is_admin(user)):
            raise HTTPException(404, "no such submission of yours")
        return task

    def latest_task_of(self, model: str) -> SubmissionTask | None:
        """The newest submission task that holds ``model``, or None (the tasks' models read, then that one task)."""
        with Session(self.engine, expire_on_commit=False) as session:
            for task_id, models in session.execute(select(SubmissionTask.id, SubmissionTask.models)
                                                   .order_by(SubmissionTask.id.desc())):
                if model in (models or []):
                    return session.get(SubmissionTask, task_id)
        return None


def page_key(request: Request) -> tuple:
    """What a shared response depends on besides the results and the viewer: the path and every query
    parameter, in a fixed order (the leaderboard reads some, such as its filters ``m.<field>`` and weights
    ``w.<node>``, by prefix, so none is left out)."""
    return request.url.path, tuple(sorted(request.query_params.multi_items()))


def _tagged(body: bytes) -> tuple[bytes, str]:
    """``(body, weak ETag)``: the tag a hash of the (gzipped) body."""
    return body, 'W/"%s"' % hashlib.blake2b(body, digest_size=12).hexdigest()


def _matches(header: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weak comparison, RFC 9110 13.1.2) or is ``*``."""
    if not header:
        return False
    bare = etag.removeprefix("W/")
    return any(tag.strip() == "*" or tag.strip().removeprefix("W/") == bare for tag in header.split(","))


def site_of(request: Request) -> Site:
    """The :class:`Site` of the application serving ``request``."""
    return request.app.state.site


def csrf_token(request: Request) -> str:
    """The session's CSRF token (made on first use)."""
    if "csrf" not in request.session:
        request.session["csrf"] = secrets.token_urlsafe(32)
    return request.session["csrf"]


class _LazyToken:
    """The session's CSRF token, made when a template first writes it: a page without a form (the leaderboard
    to an anonymous visitor) starts no session and sets no cookie, so caches may share it."""

    def __init__(self, request: Request):
        self.request = request

    def __str__(self) -> str:
        return csrf_token(self.request)

    def __html__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return True


def csrf_ok(request: Request, token: str | None) -> bool:
    """Whether ``token`` is the session's CSRF token (compared in constant time)."""
    expected = request.session.get("csrf")
    return bool(token and expected and secrets.compare_digest(token, expected))


def check_csrf(request: Request, token: str | None) -> None:
    """Raises HTTPException 403 unless ``token`` is the session's CSRF token."""
    if not csrf_ok(request, token):
        raise HTTPException(403, "CSRF token missing or wrong: reload the page and submit the form again")

