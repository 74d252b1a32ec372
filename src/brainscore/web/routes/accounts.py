"""Accounts: register, log in and out, the account page and its API tokens."""
from __future__ import annotations

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from brainscore.web import accounts
from brainscore.web.site import check_csrf, site_of

router = APIRouter()


@router.get("/register", response_class=HTMLResponse)
def register_form(request: Request):
    """The registration form."""
    return site_of(request).render(request, "register.html")


@router.post("/register")
def register(request: Request, username: str = Form(""), password: str = Form(""),
             csrf_token: str | None = Form(None)):
    """Create an account and log it in (400 with the reason when the name or password will not do)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    try:
        user = accounts.register(site.engine, username, password)
    except accounts.AccountError as error:
        return site.render(request, "register.html", status_code=400, error=str(error), username=username)
    site.log_in(request, user)  # a new session for the new user (no fixation)
    return RedirectResponse("/submit", status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request):
    """The log-in form."""
    return site_of(request).render(request, "login.html")


@router.post("/login")
def login(request: Request, username: str = Form(""), password: str = Form(""),
          csrf_token: str | None = Form(None)):
    """Log in (400 for a wrong name or password, 429 when rate limited)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    address = request.client.host if request.client else "?"
    try:
        user = accounts.authenticate(site.engine, username, password, address)
    except accounts.AccountError as error:
        code = 429 if isinstance(error, accounts.RateLimited) else 400
        return site.render(request, "login.html", status_code=code, error=str(error), username=username)
    site.log_in(request, user)  # a new session id and CSRF token: a session fixed before the log-in is worthless
    return RedirectResponse("/submissions", status_code=303)


@router.post("/logout")
def logout(request: Request, csrf_token: str | None = Form(None)):
    """End the session."""
    check_csrf(request, csrf_token)
    site_of(request).log_out(request)  # ended on the server too: a copy of the cookie no longer logs in
    return RedirectResponse("/", status_code=303)


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request):
    """The account page: its API tokens."""
    site = site_of(request)
    if site.current_user(request) is None:
        return RedirectResponse("/login", status_code=303)
    return _account(site, request)


def _account(site, request: Request, status_code: int = 200, **context):
    user = site.current_user(request)
    return site.render(request, "account.html", status_code=status_code, tokens=accounts.tokens_of(site.engine, user),
                       **context)


@router.post("/account/tokens", response_class=HTMLResponse)
def new_token(request: Request, csrf_token: str | None = Form(None)):
    """Create an API token, shown once."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.logged_in(request)
    return _account(site, request, token=accounts.create_token(site.engine, user))


@router.post("/account/tokens/{token_id}/revoke")
def revoke_token(request: Request, token_id: int, csrf_token: str | None = Form(None)):
    """Revoke one of the user's API tokens and show the account page again (404 if it is not theirs)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.logged_in(request)
    try:
        accounts.revoke_token(site.engine, user, token_id)
    except accounts.AccountError as error:
        raise HTTPException(404, str(error)) from error
    return RedirectResponse("/account", status_code=303)
