"""The FastAPI application of ``brainscore serve``: leaderboard, model and benchmark pages, accounts,
model submission with live status and logs, and the same data as JSON under ``/api/...``.

Pages are rendered on the server with Jinja2 (a few lines of plain JavaScript poll a submission's
status and fold the leaderboard's tree). Scoring never runs here: submissions are queued in the
database as :class:`~brainscore.results.schema.SubmissionTask` rows and handed by
:class:`brainscore.web.queue.Dispatcher` to a Dask cluster, whose tasks run each (model, benchmark)
pair in a separate, limited process.

The routes live in one :class:`fastapi.APIRouter` per area (:mod:`brainscore.web.routes`); what they
share (database, queue, templates, who is logged in) is the :class:`~brainscore.web.site.Site` in
``app.state.site``.

Security (docs/security.md): the session is a signed (itsdangerous), HttpOnly, SameSite=Lax cookie (Secure
over https) whose random session id must name a live row of the sessions table, made anew at each log-in
and deleted at log-out; every state-changing request carries a CSRF token bound to the session or an API
token; every response has the security headers; request bodies are cut off at their limit while they
stream in (:mod:`brainscore.web.security`); log-ins are rate limited per account and per client address
(:mod:`brainscore.web.accounts`); private models and submissions answer 404 to everyone but their owner,
and submissions are addressed by random keys.
"""
from __future__ import annotations

import asyncio
import logging
import os
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException
from sqlalchemy.exc import DBAPIError
from starlette.middleware.sessions import SessionMiddleware

from brainscore.plugin_sources import private_bytecode
from brainscore.results import Database
from brainscore.web import accounts as account_store
from brainscore.web import checks, plots, storage
from brainscore.web.mail import Mailer
from brainscore.web.queue import Dispatcher, Quotas
from brainscore.web.routes import accounts, api, explore, models, pages, submissions
from brainscore.web.security import FORM_BYTES, LoginRequired, SecurityHeaders, require_csrf
from brainscore.web.site import HERE, Site, home, secret, templates
from brainscore.web.views import columns  # noqa: F401  (kept importable from here)

logger = logging.getLogger(__name__)


def create_app(db_url: str | None = None, root: Path | None = None, weights_dirs: tuple = (),
               start_worker: bool = True, memory_limit: int | None = None, wall_limit: int | None = None,
               disk_limit: int | None = None,
               workers: int | None = None, scheduler: str | None = None, dask_client=None,
               mailer: Mailer | None = None, https: bool | None = None, page_max_age: float = 0.0,
               warm_pages: bool = False, allowed_requirements=None,
               quotas: dict | None = None) -> FastAPI:
    """The web application.

    Parameters
    ----------
    db_url : str, optional
        SQLAlchemy URL of the results database (default ``$BRAINSCORE_DB_URL`` or
        ``sqlite:///$BRAINSCORE_HOME/results.sqlite``); the web's account and queue tables live there too.
    root : Path, optional
        Folder of uploaded submissions (default ``$BRAINSCORE_HOME/submissions``).
    weights_dirs : tuple of Path
        Server folders that submitted plugin code may reference by absolute path.
    start_worker : bool
        Start the submission dispatcher (and its Dask cluster) on start-up (tests of pages alone may skip it).
    memory_limit, wall_limit, disk_limit : int, optional
        Per-child limits in bytes, seconds and bytes written (default :data:`~brainscore.web.queue.MEMORY_LIMIT_BYTES`,
        :data:`~brainscore.web.queue.WALL_LIMIT_S`, :data:`~brainscore.web.queue.DISK_LIMIT_BYTES`).
    workers : int, optional
        Worker processes of the Dask LocalCluster started for the submissions (default: one per core,
        at most one per 4 GiB of memory).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:8786``) to use instead; its workers must see
        the database and the submissions folder.
    dask_client : distributed.Client, optional
        A client to use as is (tests).
    mailer : Mailer, optional
        How the site sends mail (default: the ``mail_*`` settings, :class:`~brainscore.web.mail.MailSettings`).
    https : bool, optional
        The site is served over https (directly or behind a proxy that terminates TLS): the session cookie
        is sent with ``Secure`` and responses with ``Strict-Transport-Security``. Default:
        ``$BRAINSCORE_WEB_HTTPS`` is ``1``/``true``/``yes``.

    page_max_age : float
        Seconds a shared page may lag behind new scores (:attr:`~brainscore.web.site.Site.page_max_age`;
        default 0: none).
    warm_pages : bool
        Before the first visitor, build the pages every visitor shares (the leaderboard's first two pages
        and JSON, every benchmark's page and JSON) as an anonymous reader, so a new web worker does not
        build them all at once under its first requests (``brainscore serve`` does; tests leave it off).
    allowed_requirements : iterable of str, optional
        Packages a submission's requirements.txt may name (default
        :data:`~brainscore.web.checks.ALLOWED_REQUIREMENTS`); one the server lacks is installed by the queue
        before scoring (:mod:`brainscore.web.environments`).
    quotas : dict, optional
        Fields of :class:`~brainscore.web.tasks.Quotas` (what one user may hold in the queue; default its defaults).

    Raises
    ------
    ValidationError
        If the mail settings are inconsistent (``mail_host`` without ``site_url``, an unknown ``mail_security``).
    """
    folder = home()
    private_bytecode()  # approved plugin folders are imported here: never a __pycache__ planted beside their source
    store = Database(db_url)
    url = str(getattr(store, "url", None) or db_url)
    root = Path(root or folder / "submissions")
    root.mkdir(parents=True, exist_ok=True)
    limits = {k: v for k, v in (("memory_limit", memory_limit), ("wall_limit", wall_limit), ("disk_limit", disk_limit))
              if v}
    mailer = mailer if mailer is not None else Mailer()
    dispatcher = Dispatcher(store.engine, store, url, root, workers=workers, scheduler=scheduler, client=dask_client,
                            mailer=mailer, readable=tuple(str(d) for d in weights_dirs), quotas=Quotas(**(quotas or {})),
                            **limits)
    key = secret(folder)
    site = Site(store=store, engine=store.engine, dispatcher=dispatcher, root=root,
                weights_dirs=tuple(Path(d) for d in weights_dirs), pages=templates(), secret_key=key, mailer=mailer,
                page_max_age=float(page_max_age),
                allowed_requirements=frozenset(checks.ALLOWED_REQUIREMENTS if allowed_requirements is None
                                               else allowed_requirements))
    from brainscore.web.approval import list_on_site

    list_on_site(root)  # the approved plugin folders, listed from their sources: never run in this process

    @asynccontextmanager
    async def lifespan(app):
        threading.Thread(target=plots.warm, name="brainscore-plots-warm", daemon=True).start()
        await asyncio.to_thread(site.warm)  # the leaderboard computed before the first visitor, not by it
        if warm_pages:
            await _warm_pages(app)
        if start_worker:
            dispatcher.start()
        yield
        dispatcher.stop()

    if https is None:
        https = os.environ.get("BRAINSCORE_WEB_HTTPS", "").strip().lower() in ("1", "true", "yes")
    # no /docs or /redoc: their pages run inline scripts from a CDN, which the Content-Security-Policy refuses
    app = FastAPI(title="brainscore", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)  # for clients that accept it
    app.add_middleware(SessionMiddleware, secret_key=key, session_cookie="brainscore_session",
                       same_site="lax", https_only=https,
                       max_age=int(account_store.SESSION_LIFETIME.total_seconds()))
    # the security headers outside everything, even the 500 page of an unexpected error; they see whom the
    # response was for (the session middleware fills the same scope)
    inner_stack = app.build_middleware_stack
    app.build_middleware_stack = lambda: HeadAsGet(SecurityHeaders(EmptyQueryAsAbsent(inner_stack()), hsts=https,
                                                                   error_page=_error_page_bytes))
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.state.site = site
    app.state.store, app.state.engine, app.state.worker = store, store.engine, dispatcher
    app.state.results = site.results  # the leaderboard and anonymous pages, once per change of the scores
    for area in (pages, explore, accounts, submissions, models, api):
        # CSRF on every POST of every area; every body cut off at FORM_BYTES while it streams in (413), the two
        # upload routes' at upload_limit() (their own max_body_size)
        app.include_router(area.router, dependencies=[Depends(require_csrf)], max_body_size=FORM_BYTES)
    app.add_exception_handler(StarletteHTTPException, _http_error)  # FastAPI's HTTPException is one
    app.add_exception_handler(LoginRequired, _to_login)  # a page of one's own, logged out (security.require_user)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(OSError, _storage_error)  # a full disk: 507 in words, never a bare 500
    app.add_exception_handler(DBAPIError, _storage_error)  # a read-only or locked database: 503, never its SQL
    return app


KEEP_EMPTY = frozenset({"fold"})
"""Query parameters whose empty value means something (``?fold=``: no column folded, where absent folds the columns
without scores); every other empty one (``?q=&sort=&page=``) is as if absent."""


class EmptyQueryAsAbsent:
    """ASGI middleware: query parameters with an empty value (a form submitted with its fields blank, a link
    built with ``?sort=``) are dropped before routing, except :data:`KEEP_EMPTY`: they mean "the default", not a
    value to parse (``?page=`` answered 422)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("query_string"):
            pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
            kept = [(k, v) for k, v in pairs if v != "" or k in KEEP_EMPTY]
            if len(kept) != len(pairs):
                scope = {**scope, "query_string": urlencode(kept).encode("latin-1")}
        await self.app(scope, receive, send)


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request is answered as the ``GET`` of the same address, without its body
    (RFC 9110, section 9.3.2: same status and headers, ``Content-Length`` included). FastAPI's routes answer the
    methods they declare only, so every page answered ``HEAD`` with 405 (link checkers, monitors and ``curl -I``
    use it). The page is built as for ``GET`` (its body is computed, then dropped).
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "HEAD":
            return await self.app(scope, receive, send)

        async def send_without_body(message):
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_without_body)


async def _warm_pages(app: FastAPI) -> None:
    """Build the shared pages (see ``warm_pages`` of :func:`create_app`) by asking the application itself, in
    process; a page that fails is logged and left to its first visitor."""
    import logging

    import httpx

    from brainscore.leaderboard import tree

    benchmarks = sorted(tree.benchmark_parents(include_selection=True))
    paths = ["/", "/?page=2", "/api/leaderboard", *(f"/benchmarks/{b}" for b in benchmarks),
             *(f"/api/benchmarks/{b}" for b in benchmarks)]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        for path in paths:
            try:
                answer = await client.get(path, headers={"Accept-Encoding": "gzip", "Accept": "text/html"})
                if answer.status_code != 200:
                    logging.getLogger(__name__).warning("warming %s: HTTP %s", path, answer.status_code)
            except Exception as error:  # noqa: BLE001 - warming is an optimisation; the visitor gets the error
                logging.getLogger(__name__).warning("warming %s: %s", path, error)


MACHINE_PATHS = ("/api/", "/plots/")
"""Where errors are JSON (``{"detail": ...}``): the API and the plots; also the exports (``.csv``, ``.json``,
``.bib``). Everywhere else an error is the site's HTML page (issue 29: an unknown URL answered raw JSON)."""


def _wants_json(request: Request) -> bool:
    path = request.url.path
    return path.startswith(MACHINE_PATHS) or path.endswith((".csv", ".json", ".bib"))


def _error_page_bytes(scope, status: int, detail: str) -> bytes | None:
    """The site's HTML error page for a request that the middleware answers itself (a 413 cut off while its
    body streamed in): None where the answer is JSON (:func:`_wants_json`) or no page can be rendered."""
    request = Request(scope)
    app = scope.get("app")
    if _wants_json(request) or app is None or not hasattr(app.state, "site"):
        return None
    return app.state.site.render(request, "error.html", status_code=status, code=status, detail=detail).body


async def _to_login(request: Request, error: LoginRequired):
    """A page of one's own asked for while logged out (:func:`~brainscore.web.security.require_user`): to the log-in."""
    return RedirectResponse("/login", status_code=303)


async def _http_error(request: Request, error: StarletteHTTPException):
    """JSON for the API, the plots and the exports; else the site's error page, with the site's header, what went
    wrong and where to go (an unknown URL included: Starlette's own 404)."""
    if _wants_json(request):
        return JSONResponse({"detail": error.detail}, status_code=error.status_code, headers=error.headers)
    site: Site = request.app.state.site
    detail = str(error.detail)
    if error.status_code == 404 and detail == "Not Found":
        detail = f"there is no page at {request.url.path}"
    return site.render(request, "error.html", status_code=error.status_code, code=error.status_code, detail=detail)


async def _storage_error(request: Request, error: Exception):
    """507 (a full disk) or 503 (a database that cannot take changes) in the visitor's words, the detail in the
    server's log (:func:`brainscore.web.storage.answer`); any other error is re-raised (a 500)."""
    answered = storage.answer(error)
    if answered is None:
        raise error
    code, message = answered
    logger.error("%s %s answered %d: %s", request.method, request.url.path, code, error, exc_info=error)
    if _wants_json(request):
        return JSONResponse({"detail": message}, status_code=code, headers={"Retry-After": "300"})
    return request.app.state.site.render(request, "error.html", status_code=code, code=code, detail=message)


async def _invalid_request(request: Request, error: RequestValidationError):
    """422 with what was wrong: JSON for the API (FastAPI's form), else the site's error page in words."""
    if _wants_json(request):
        return JSONResponse({"detail": jsonable_encoder(error.errors())}, status_code=422)
    words = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: {e.get('msg')}" for e in error.errors())
    return request.app.state.site.render(request, "error.html", status_code=422, code=422,
                                         detail=f"the address is not valid ({words})")

