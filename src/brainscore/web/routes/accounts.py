"""Accounts: register, log in and out, verify the e-mail address, reset a forgotten password, the account
page and its API tokens.

Mails go out after the response (FastAPI's background tasks): a page never waits for the mail server,
and the password reset form answers alike, as fast, whether or not the address is an account's. The
site's :class:`~brainscore.web.notices.Throttle` bounds the mails per address and the reset requests per
client.
"""
from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from brainscore.web import accounts, notices, storage
from brainscore.web.security import require_user
from brainscore.web.site import check_csrf, site_of

router = APIRouter()


@router.get("/register", response_class=HTMLResponse)
def register_form(request: Request):
    """The registration form."""
    return site_of(request).render(request, "register.html")


@router.post("/register")
def register(request: Request, background: BackgroundTasks, username: str = Form(""), password: str = Form(""),
             email: str = Form(""), csrf_token: str | None = Form(None)):
    """Create an account, log it in and mail the link that verifies its address (400 with the reason when the
    name, password or address will not do; 429 when the client's address, or the whole site, registered its share
    of accounts this hour: :class:`~brainscore.web.notices.Throttle`)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    address = request.client.host if request.client else "?"
    refused = site.throttle.registration_refused(address)  # sign-ups per client address and per site, per hour
    if refused:
        return site.render(request, "register.html", status_code=429, error=refused, username=username, email=email)
    try:
        user = accounts.register(site.engine, username, password, email.strip())
    except accounts.AccountError as error:
        return site.render(request, "register.html", status_code=400, error=str(error), problems=error.problems,
                           username=username, email=email)
    site.throttle.registered(address)
    site.log_in(request, user)  # a new session for the new user (no fixation)
    if site.throttle.recipient(user.email):
        background.add_task(notices.send_verification, site.mailer, site.secret_key, user, str(request.base_url))
    return RedirectResponse("/submit", status_code=303)


@router.get("/verify", response_class=HTMLResponse)
def verify(request: Request, token: str = ""):
    """Follow a verification link: the address is verified (400 with the reason when the link is not good)."""
    site = site_of(request)
    try:
        user = accounts.verify_email(site.engine, site.secret_key, token)
    except accounts.AccountError as error:
        return site.render(request, "message.html", status_code=400, title="Address not verified", error=str(error))
    return site.render(request, "message.html", title="Address verified",
                       message=f"{user.email} is verified: {user.username} can submit models.")


@router.post("/account/email")
def change_email(request: Request, background: BackgroundTasks, email: str = Form(""),
                 csrf_token: str | None = Form(None)):
    """Set (or change) the account's address and mail its verification link; with the address unchanged, send
    the link again."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.logged_in(request)
    try:
        user = accounts.set_email(site.engine, user, email or user.email or "")
    except accounts.AccountError as error:
        return _account(site, request, status_code=400, error=str(error))
    if user.email_verified is not None:
        return _account(site, request, message=f"{user.email} is verified already.")
    if not site.throttle.recipient(user.email):
        return _account(site, request, status_code=429, error=f"we sent {user.email} its share of mails this hour "
                                                              f"({site.throttle.texts['recipient']}); use the newest link, or try "
                                                              f"later")
    background.add_task(notices.send_verification, site.mailer, site.secret_key, user, str(request.base_url))
    return _account(site, request, message=f"We sent a verification link to {user.email}.")


@router.get("/forgot", response_class=HTMLResponse)
def forgot_form(request: Request):
    """The form that asks for a password reset link."""
    return site_of(request).render(request, "forgot.html")


@router.post("/forgot", response_class=HTMLResponse)
def forgot(request: Request, background: BackgroundTasks, email: str = Form(""), csrf_token: str | None = Form(None)):
    """Mail a password reset link to ``email`` if it is an account's; the answer is the same either way (it does
    not tell whether an address has an account)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    if not site.throttle.client(request.client.host if request.client else "?"):
        return site.render(request, "message.html", status_code=429, title="Too many requests",
                           error=f"this address asked for password resets too often "
                                 f"({site.throttle.texts['client']}); "
                                 f"try again later")
    user = accounts.user_by_email(site.engine, email)
    if user is not None and site.throttle.recipient(user.email):  # over its share: no mail, the same answer
        background.add_task(notices.send_reset, site.mailer, site.secret_key, user, str(request.base_url))
    return site.render(request, "message.html", title="Check your mail",
                       message="If an account has this address, we sent it a link to choose a new password. "
                               f"The link works once, for {int(accounts.RESET_MAX_AGE.total_seconds() // 60)} minutes.")


@router.get("/reset", response_class=HTMLResponse)
def reset_form(request: Request, token: str = ""):
    """The form that sets a new password (400 when the link is expired, used or forged)."""
    site = site_of(request)
    try:
        user = accounts.user_for_reset(site.engine, site.secret_key, token)
    except accounts.AccountError as error:
        return site.render(request, "message.html", status_code=400, title="Password not reset", error=str(error))
    return site.render(request, "reset.html", token=token, username=user.username)


@router.post("/reset", response_class=HTMLResponse)
def reset(request: Request, token: str = Form(""), password: str = Form(""), csrf_token: str | None = Form(None)):
    """Set the new password: every session of the account ends (this one starts logged out)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    try:
        user = accounts.reset_password(site.engine, site.secret_key, token, password)
    except accounts.AccountError as error:
        return site.render(request, "reset.html", status_code=400, token=token, error=str(error))
    site.log_out(request)
    accounts.end_sessions(site.engine, user)  # (the changed password's stamp ends them too)
    return site.render(request, "message.html", title="Password changed",
                       message=f"The password of {user.username} is changed and every session of the account has "
                               f"ended. Log in with the new password.", login=True)


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
    try:  # a database lock or read-only moment is tried again (storage.retrying); a lasting one is a 503
        user = storage.retrying(lambda: accounts.authenticate(site.engine, username, password, address))
    except accounts.AccountError as error:
        code = 429 if isinstance(error, accounts.RateLimited) else 400
        return site.render(request, "login.html", status_code=code, error=str(error), username=username)
    # a new session id and CSRF token: a session fixed before the log-in is worthless
    storage.retrying(lambda: site.log_in(request, user))
    return RedirectResponse("/submissions", status_code=303)


@router.post("/logout")
def logout(request: Request, csrf_token: str | None = Form(None)):
    """End the session."""
    check_csrf(request, csrf_token)
    site_of(request).log_out(request)  # ended on the server too: a copy of the cookie no longer logs in
    return RedirectResponse("/", status_code=303)


@router.get("/account", response_class=HTMLResponse, dependencies=[Depends(require_user)])
def account_page(request: Request):
    """The account page: its API tokens."""
    return _account(site_of(request), request)


def _account(site, request: Request, status_code: int = 200, **context):
    user = site.current_user(request)
    return site.render(request, "account.html", status_code=status_code, tokens=accounts.tokens_of(site.engine, user),
                       submit_problem=site.submit_problem(user), mail_configured=site.mailer.configured, **context)


@router.post("/account/name")
def change_display_name(request: Request, display_name: str = Form(""), csrf_token: str | None = Form(None)):
    """Set the name the site shows for the account's models (empty: the user name); 400 with the reason."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.logged_in(request)
    try:
        accounts.set_display_name(site.engine, user, display_name)
    except accounts.AccountError as error:
        return _account(site, request, status_code=400, error=str(error))
    return RedirectResponse("/account", status_code=303)


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
