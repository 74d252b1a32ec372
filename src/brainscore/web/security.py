"""The website's defences that hold for every route at once, so that a new route cannot forget them.

- :class:`SecurityHeaders`: the browser-side rules on every response (Content-Security-Policy without
  inline scripts, no framing, no MIME sniffing, the referrer kept to this site) and ``Cache-Control:
  no-store`` on everything answered to a logged-in session or an API token.
- Body limits (FastAPI's ``max_body_size``, Starlette's ``RequestBodyLimitMiddleware``): a request body is
  cut off while it streams in, once it passes its limit (:func:`upload_limit` for the two upload routes,
  :data:`FORM_BYTES` for every other), and answered 413 without reading the rest into memory or onto
  disk; a declared ``Content-Length`` over the limit is answered before any of the body is read.
- :func:`require_user`: the pages of one's own (``Depends(require_user)``) send a visitor who is not
  logged in to ``/login``.
- :func:`require_csrf`: every POST, PUT, PATCH and DELETE carries the session's CSRF token (form field
  ``csrf_token`` or header ``X-CSRF-Token``) unless it is authenticated by an API token, which a
  browser never sends on its own.

The CSRF token is the session-bound synchronizer token of :func:`brainscore.web.site.csrf_token` (OWASP's
first recommendation for server-rendered forms). starlette-csrf checks a double-submit cookie against a
header only, which plain HTML forms cannot send; fastapi-csrf-protect needs the same explicit call per
route that this module's one dependency replaces; see docs/security.md.
"""
from __future__ import annotations

import json

from fastapi import HTTPException, Request

from brainscore.web import checks

CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
                           "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""Scripts and styles only from this site's files: no inline script, no ``eval``, no inline style (score
cells are coloured by the stylesheet's classes, :func:`brainscore.web.site.colour_class`). No framing by
anyone (``frame-ancestors 'none'``: clickjacking), forms post only here."""

SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
"""The policy of the plots (``image/svg+xml``), in place of :data:`CONTENT_SECURITY_POLICY`. Matplotlib's
SVG colours its shapes by inline ``style``; a page shows it in an ``<img>`` (where no policy of the SVG
applies), but opened on its own it is a document of its own policy. It may load nothing and run nothing
(``default-src 'none'``, no script), so its inline styles have nothing to reach."""

HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
"""Headers set on every response (a route's own value of one of them is kept)."""

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""Methods that need the session's CSRF token (or an API token)."""

ENVELOPE_BYTES = 1024 * 1024
"""Room for the multipart boundaries and the form's other fields around a zip of the largest allowed size."""

FORM_BYTES = 256 * 1024
"""Largest body of every other route (log-in, registration, re-run and token forms are a few hundred bytes)."""


def _authenticated(scope) -> bool:
    """Whether the request was answered to someone: a logged-in session or an ``Authorization`` header."""
    session = scope.get("session") or {}
    if session.get("sid"):
        return True
    return any(name == b"authorization" for name, _ in scope.get("headers", ()))


class SecurityHeaders:
    """ASGI middleware: :data:`HEADERS` on every HTTP response (:data:`SVG_POLICY` on an SVG); ``Cache-Control: no-store, private`` (and ``Vary:
    Cookie``) on every response to a logged-in session or an API token, or that sets a cookie, so no cache keeps
    one user's page for another. A route that chose ``private`` itself keeps its choice (the leaderboard's
    ``private, no-cache`` with an ETag: revalidated each time, kept by no shared cache); ``public`` never
    reaches a logged-in reader.

    It wraps the whole application (the 500 page of an unexpected error too) and sees the session that the
    response was rendered for (the session middleware fills the same scope). ``hsts``: also send
    ``Strict-Transport-Security`` (when served over https).

    A 413 (a body cut off at its limit) is answered with a message naming the limit and ``Connection: close``,
    so the server closes the connection instead of reading the rest of the body: the site's HTML error page
    where ``error_page`` (``(scope, status, detail) -> HTML bytes or None``) gives one (a browser's form
    post), else JSON (the API).

    ``Vary`` leaves as one header with each value once (the GZip and session middlewares and the routes each
    add theirs).
    """

    def __init__(self, app, hsts: bool = False, error_page=None):
        self.app, self.hsts, self.error_page = app, hsts, error_page

    def headers(self, scope, headers: list) -> list:
        """``headers`` (ASGI pairs) with the security headers added."""
        headers = list(headers)
        present = {name.lower() for name, _ in headers}
        svg = any(n.lower() == b"content-type" and v.startswith(b"image/svg+xml") for n, v in headers)
        for name, value in HEADERS.items():
            if name.encode() not in present:
                value = SVG_POLICY if svg and name == "content-security-policy" else value
                headers.append((name.encode(), value.encode()))
        if self.hsts and b"strict-transport-security" not in present:
            headers.append((b"strict-transport-security", b"max-age=31536000; includeSubDomains"))
        cache = b", ".join(v for n, v in headers if n.lower() == b"cache-control").lower()
        personal = _authenticated(scope) or b"set-cookie" in present
        if personal and b"private" not in cache:  # never public, never stored, unless the route chose private
            headers = [(n, v) for n, v in headers if n.lower() not in (b"cache-control", b"expires")]
            headers.append((b"cache-control", b"no-store, private"))
        vary = [v.strip() for n, value in headers if n.lower() == b"vary" for v in value.split(b",") if v.strip()]
        if personal:
            vary += [b"Cookie", b"Authorization"]
        if vary:  # each value once, in the order first given (case-insensitive, as HTTP compares them)
            once = list({v.lower(): v for v in reversed(vary)}.values())[::-1]
            headers = [(n, v) for n, v in headers if n.lower() != b"vary"] + [(b"vary", b", ".join(once))]
        return headers

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        refused = False

        async def send_with_headers(message):
            nonlocal refused
            if refused:  # the application's own body of a 413: the message below replaced it
                return
            if message["type"] == "http.response.start" and message["status"] == 413:
                refused = True
                page = self.error_page(scope, 413, too_large_message(scope)) if self.error_page else None
                body = page if page is not None else json.dumps({"detail": too_large_message(scope)}).encode()
                kind = b"text/html; charset=utf-8" if page is not None else b"application/json"
                await send({"type": "http.response.start", "status": 413, "headers": self.headers(scope, [
                    (b"content-type", kind), (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")])})
                return await send({"type": "http.response.body", "body": body})
            if message["type"] == "http.response.start":
                message = {**message, "headers": self.headers(scope, message.get("headers", []))}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def too_large_message(scope) -> str:
    """What a 413 says: the limit of the route that refused the body, and that none of it was kept."""
    limit = scope.get("starlette.max_body_size") or FORM_BYTES
    return (f"the request body is larger than {scope.get('path', 'this address')} takes ({limit / 2**20:.2f} MB; "
            f"a plugin zip may have {checks.MAX_ZIP_BYTES // 2**20} MB); it was cut off and nothing of it was kept")


def upload_limit() -> int:
    """Largest request body of the upload routes: :data:`brainscore.web.checks.MAX_ZIP_BYTES` and the multipart
    envelope around it (:data:`ENVELOPE_BYTES`)."""
    return checks.MAX_ZIP_BYTES + ENVELOPE_BYTES


async def require_csrf(request: Request) -> None:
    """Dependency of every router: a state-changing request (:data:`STATE_CHANGING`) must carry the session's
    CSRF token, in the form field ``csrf_token`` or the ``X-CSRF-Token`` header, unless it sends an
    ``Authorization`` header (an API token: browsers never add one to a cross-site request by themselves,
    and the route then authenticates by that token alone).

    Runs after FastAPI has read the form (the parsed form is cached on the request), before the route.

    Raises
    ------
    HTTPException
        401 for an API call (``/api/``) without any credentials (no logged-in session, no token); 403 without the
        token, or with a wrong one.
    """
    from brainscore.web.site import csrf_ok

    if request.method not in STATE_CHANGING or request.headers.get("authorization"):
        return
    token = request.headers.get("x-csrf-token")
    if not token and request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")):
        value = (await request.form()).get("csrf_token")
        token = value if isinstance(value, str) else None
    if not csrf_ok(request, token):
        if request.url.path.startswith("/api/") and not token and not (request.scope.get("session") or {}).get("sid"):
            # no credentials at all (no session, no token): what is missing is a log-in, not a CSRF token
            raise HTTPException(401, "log in, or send an API token as 'Authorization: Bearer TOKEN' (create one "
                                     "on /account)", headers={"WWW-Authenticate": "Bearer"})
        raise HTTPException(403, "CSRF token missing or wrong: reload the page and submit the form again "
                                 "(API calls: send the X-CSRF-Token header, or an API token)")


class LoginRequired(Exception):
    """A page of one's own asked for by a visitor who is not logged in: the app answers ``303 See Other`` to
    ``/login`` (:func:`brainscore.web.app.create_app` registers the handler). Raised by :func:`require_user`."""


def require_user(request: Request):
    """FastAPI dependency of the pages of one's own (``user=Depends(require_user)``): the session's logged-in user.

    Raises
    ------
    LoginRequired
        When nobody is logged in (the visitor is sent to ``/login``, 303). An API route answers 401 instead:
        :meth:`Site.api_user`; a form post after its CSRF check: :meth:`Site.logged_in`.
    """
    from brainscore.web.site import site_of

    user = site_of(request).current_user(request)
    if user is None:
        raise LoginRequired()
    return user
