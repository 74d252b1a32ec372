"""Accounts of the website: users, API tokens and log-in attempts (SQLAlchemy 2 tables).

Passwords are hashed with argon2 through :mod:`pwdlib` (the recommended hasher of the argon2
RFC 9106 profile); API tokens are random 32-byte strings stored only as their sha256. A logged-in
browser session is a random id whose sha256 is a :class:`~brainscore.results.schema.WebSession` row
(:func:`start_session`, :func:`end_session`). Log-in attempts are recorded so that repeated failures
are refused for a while, per account and per address (:func:`login_allowed`). The counts live in the
database, not in one process's memory, because ``brainscore serve --web-workers N`` answers from N
processes. The tables live in the results database (``--db URL``) and are made by its Alembic
migrations (revisions ``0002``, ``0005`` and ``0007``), like every other table.

E-mail (revision ``0005``): an account has an address, checked and normalised by
:mod:`email_validator`; verifying it and resetting the password go through links whose tokens are
signed and dated by :mod:`itsdangerous` (``URLSafeTimedSerializer`` with the site's secret key, one
salt per purpose). A reset token carries a fingerprint of the password hash it was issued for, so it
works once: the new password changes the hash. Sessions carry the same fingerprint
(:func:`session_stamp`), so a password reset ends every session of the account.
"""
from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta, timezone

from email_validator import EmailNotValidError, validate_email
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from pwdlib import PasswordHash
from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.results.schema import ApiToken, LoginAttempt, User, WebSession

PASSWORD_HASH = PasswordHash.recommended()
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,40}$")
MIN_PASSWORD = 8
MAX_FAILURES = 5
"""Failed log-ins allowed per account within :data:`FAILURE_WINDOW`: from one address, and from all the
addresses that never logged in to it (an attacker spraying one account from many addresses is stopped
after this many in all)."""
MAX_ADDRESS_FAILURES = 50
"""Failed log-ins allowed per client address (over all user names) within :data:`FAILURE_WINDOW`: high enough
that one person mistyping a password does not lock out the others behind the same address (a lab's NAT), low
enough to stop one address guessing across many accounts."""
KNOWN_ADDRESS_DAYS = 90
"""An address an account logged in from within this many days is *known* to it: that account's own user is
not locked out there by failures from elsewhere or by other accounts' failures from the same address (only
by :data:`MAX_FAILURES` failures of this very account from this very address)."""
SESSION_LIFETIME = timedelta(days=14)
"""How long a log-in lasts (the session cookie's ``max_age`` is the same)."""
FAILURE_WINDOW = timedelta(minutes=15)
VERIFY_MAX_AGE = timedelta(days=3)
"""How long an address verification link works."""
RESET_MAX_AGE = timedelta(hours=1)
"""How long a password reset link works (once)."""


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class AccountError(ValueError):
    """A registration or log-in that cannot proceed; the message says why. ``problems``: each reason on its own
    (a registration names every problem of the form at once; the message joins them with "; ")."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = list(problems) if problems else [message]


class RateLimited(AccountError):
    """Too many failed log-ins for this user name or address within :data:`FAILURE_WINDOW`."""


def engine_for(url: str) -> Engine:
    """The engine of the results database at ``url``, its schema (web tables included) upgraded to the newest
    migration (:class:`~brainscore.results.Database` raises ``DatabaseError`` if it cannot be opened)."""
    return Database(url).engine


def normalise_email(address: str) -> str:
    """``address`` checked (syntax and domain form; no DNS look-up) and normalised (lower case), as stored.

    Raises
    ------
    AccountError
        If it is not an e-mail address; the message says what is wrong with it.
    """
    try:
        return validate_email((address or "").strip(), check_deliverability=False).normalized.lower()
    except EmailNotValidError as error:
        raise AccountError(f"{address!r} is not an e-mail address: {error}") from None


def register(engine: Engine, username: str, password: str, email: str | None = None) -> User:
    """Create an account (``email``: its address, not yet verified; the website's form requires one).

    Raises
    ------
    AccountError
        If the user name is malformed or taken, the password shorter than :data:`MIN_PASSWORD`, or the
        address malformed or already an account's.
    """
    problems = []  # every problem of the form at once, not one per try
    if not USERNAME.match(username or ""):
        problems.append("a user name has 3 to 40 characters: letters, digits, '.', '_' or '-'")
    if len(password or "") < MIN_PASSWORD:
        problems.append(f"the password must have at least {MIN_PASSWORD} characters")
    address = None
    if email is not None and not email.strip():
        problems.append("give your e-mail address: it is verified by a link we send, and it is where password "
                        "resets and your submissions' results go")
    elif email is not None:
        try:
            address = normalise_email(email)
        except AccountError as error:
            problems.append(str(error))
    with Session(engine, expire_on_commit=False) as session:
        if USERNAME.match(username or ""):
            if session.scalar(select(User).where(User.username == username)) is not None:
                problems.insert(0, f"the user name {username!r} is taken; choose another")
        if address is not None and session.scalar(select(User).where(User.email == address)) is not None:
            problems.append(f"an account with the address {address} exists; log in, or reset its password")
        if problems:
            raise AccountError("; ".join(problems), problems)
        user = User(username=username, password_hash=PASSWORD_HASH.hash(password), email=address)
        session.add(user)
        session.commit()
        return user


def user_by_email(engine: Engine, address: str) -> User | None:
    """The account with this address (compared normalised), or None (also for a malformed address)."""
    try:
        address = normalise_email(address)
    except AccountError:
        return None
    with Session(engine, expire_on_commit=False) as session:
        return session.scalar(select(User).where(User.email == address))


def set_email(engine: Engine, user: User, address: str) -> User:
    """Change ``user``'s address; the new one is not verified until its link is followed.

    Raises
    ------
    AccountError
        If the address is malformed or another account's.
    """
    address = normalise_email(address)
    with Session(engine, expire_on_commit=False) as session:
        other = session.scalar(select(User).where(User.email == address))
        if other is not None and other.id != user.id:
            raise AccountError(f"an account with the address {address} exists")
        row = session.get(User, user.id)
        if row.email != address:
            row.email, row.email_verified = address, None
        session.commit()
        return row


DISPLAY_NAME_LENGTH = 80
"""The longest display name, in characters."""


def set_display_name(engine: Engine, user: User, name: str | None) -> User:
    """Set the name the website shows for ``user``'s account (its models, submissions); empty: its user name.

    Raises
    ------
    AccountError
        If ``name`` is longer than :data:`DISPLAY_NAME_LENGTH` characters or holds a control character.
    """
    name = " ".join((name or "").split())
    if len(name) > DISPLAY_NAME_LENGTH:
        raise AccountError(f"a display name has at most {DISPLAY_NAME_LENGTH} characters; this one has {len(name)}")
    if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in name):
        raise AccountError("a display name cannot hold control characters")
    with Session(engine, expire_on_commit=False) as session:
        row = session.get(User, user.id)
        row.display_name = name or None
        session.commit()
        return row


def display_names(engine: Engine) -> dict[str, str]:
    """User name -> display name of every account that set one (one query)."""
    with Session(engine) as session:
        return dict(session.execute(select(User.username, User.display_name).where(User.display_name.is_not(None))).all())


def session_stamp(user: User) -> str:
    """A fingerprint of ``user``'s password hash (16 hex digits of its sha256), kept in the session at log-in:
    a session whose stamp no longer matches (the password was reset) is no longer logged in."""
    return hashlib.sha256(user.password_hash.encode()).hexdigest()[:16]


def _serializer(secret: str, purpose: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret, salt=f"brainscore-{purpose}")


def verification_token(secret: str, user: User) -> str:
    """The signed, dated token of the link that verifies ``user``'s current address (valid :data:`VERIFY_MAX_AGE`).

    Raises
    ------
    AccountError
        If ``user`` has no address.
    """
    if not user.email:
        raise AccountError("the account has no e-mail address; add one on the account page")
    return _serializer(secret, "verify-email").dumps({"user": user.id, "email": user.email})


def verify_email(engine: Engine, secret: str, token: str) -> User:
    """Mark the address in ``token`` verified, if it is still its account's address; returns the user.

    Raises
    ------
    AccountError
        If the token is forged or malformed, older than :data:`VERIFY_MAX_AGE` (ask for a new link on the
        account page), or for an address the account no longer has.
    """
    try:
        data = _serializer(secret, "verify-email").loads(token or "", max_age=int(VERIFY_MAX_AGE.total_seconds()))
    except SignatureExpired:
        raise AccountError("this verification link has expired; send a new one from your account page") from None
    except BadSignature:
        raise AccountError("this verification link is not valid; use the newest link we sent, or send a new one "
                           "from your account page") from None
    with Session(engine, expire_on_commit=False) as session:
        user = session.get(User, data.get("user")) if isinstance(data, dict) else None
        if user is None or user.email != data.get("email"):
            raise AccountError("this verification link is for an address the account no longer has; send a new "
                               "one from your account page")
        if user.email_verified is None:
            user.email_verified = _now()
            session.commit()
        return user


def reset_token(secret: str, user: User) -> str:
    """The signed, dated token of a password reset link for ``user`` (valid :data:`RESET_MAX_AGE`, once)."""
    return _serializer(secret, "reset-password").dumps({"user": user.id, "stamp": session_stamp(user)})


def reset_password(engine: Engine, secret: str, token: str, password: str) -> User:
    """Set a new password with a reset token; the token and every session of the account stop working.

    Raises
    ------
    AccountError
        If the password is shorter than :data:`MIN_PASSWORD`, or the token is forged, expired or used.
    """
    if len(password or "") < MIN_PASSWORD:
        raise AccountError(f"the password must have at least {MIN_PASSWORD} characters")
    user = user_for_reset(engine, secret, token)
    with Session(engine, expire_on_commit=False) as session:
        row = session.get(User, user.id)
        row.password_hash = PASSWORD_HASH.hash(password)
        session.commit()
        return row


def user_for_reset(engine: Engine, secret: str, token: str) -> User:
    """The account a password reset token is for, if the token is still good.

    Raises
    ------
    AccountError
        If the token is forged or malformed, older than :data:`RESET_MAX_AGE`, or used already.
    """
    try:
        data = _serializer(secret, "reset-password").loads(token or "", max_age=int(RESET_MAX_AGE.total_seconds()))
    except SignatureExpired:
        raise AccountError("this password reset link has expired; ask for a new one") from None
    except BadSignature:
        raise AccountError("this password reset link is not valid; ask for a new one") from None
    user = user_by_id(engine, data.get("user") if isinstance(data, dict) else None)
    if user is None or not secrets.compare_digest(session_stamp(user), str(data.get("stamp", ""))):
        raise AccountError("this password reset link was used already; ask for a new one")
    return user


def login_allowed(engine: Engine, username: str, address: str) -> bool:
    """Whether ``username`` may try to log in from ``address`` now.

    Refused when, within :data:`FAILURE_WINDOW`:

    - this account failed :data:`MAX_FAILURES` times from this address, or
    - ``address`` is not known to the account (no successful log-in from it in :data:`KNOWN_ADDRESS_DAYS`)
      and either the account failed :data:`MAX_FAILURES` times from anywhere (one account sprayed from many
      addresses) or the address failed :data:`MAX_ADDRESS_FAILURES` times over all names (one address
      guessing across many accounts).

    So the right password still works for a user at an address they use, while an attacker elsewhere, or
    at the same address guessing other accounts, is refused; only failures of this very account from this
    very address lock its user out there.
    """
    now = _now()
    since = now - FAILURE_WINDOW
    failed = (LoginAttempt.success.is_(False), LoginAttempt.at >= since)
    with Session(engine) as session:
        def count(*where) -> int:
            return session.scalar(select(func.count()).select_from(LoginAttempt).where(*where))

        if count(LoginAttempt.username == username, LoginAttempt.address == address, *failed) >= MAX_FAILURES:
            return False
        known = count(LoginAttempt.username == username, LoginAttempt.address == address,
                      LoginAttempt.success.is_(True), LoginAttempt.at >= now - timedelta(days=KNOWN_ADDRESS_DAYS)) > 0
        if known:
            return True
        return (count(LoginAttempt.username == username, *failed) < MAX_FAILURES
                and count(LoginAttempt.address == address, *failed) < MAX_ADDRESS_FAILURES)


def authenticate(engine: Engine, username: str, password: str, address: str) -> User:
    """The user whose password this is; records the attempt.

    Raises
    ------
    AccountError
        If the name or password is wrong.
    RateLimited
        If too many attempts failed recently.
    """
    if not login_allowed(engine, username, address):
        raise RateLimited(f"too many failed log-ins; try again in {int(FAILURE_WINDOW.total_seconds() // 60)} minutes")
    with Session(engine, expire_on_commit=False) as session:
        user = session.scalar(select(User).where(User.username == username))
        ok = user is not None and PASSWORD_HASH.verify(password or "", user.password_hash)
        if user is None:
            PASSWORD_HASH.hash(password or "")  # same work as a wrong password: no timing oracle
        session.add(LoginAttempt(username=username[:200], address=address[:100], success=ok))
        session.commit()
        if not ok:
            raise AccountError("wrong user name or password")
        return user


def user_by_id(engine: Engine, user_id: int | None) -> User | None:
    """The user with this id, or None."""
    if user_id is None:
        return None
    with Session(engine, expire_on_commit=False) as session:
        return session.get(User, user_id)


def start_session(engine: Engine, user: User) -> str:
    """A new log-in session of ``user`` for :data:`SESSION_LIFETIME`: its random id (kept in the signed session
    cookie; only its sha256 is stored)."""
    sid = secrets.token_urlsafe(32)
    with Session(engine) as session:
        session.execute(delete(WebSession).where(WebSession.expires <= _now()))  # the table keeps live sessions only
        session.add(WebSession(user_id=user.id, sid_sha256=hashlib.sha256(sid.encode()).hexdigest(),
                               expires=_now() + SESSION_LIFETIME))
        session.commit()
    return sid


def session_user(engine: Engine, sid: str | None) -> User | None:
    """The user of log-in session ``sid`` while it lasts, else None (ended, expired or never made)."""
    if not sid or not isinstance(sid, str):
        return None
    digest = hashlib.sha256(sid.encode()).hexdigest()
    with Session(engine, expire_on_commit=False) as session:  # one query per request of a logged-in user
        return session.scalar(select(User).join(WebSession, WebSession.user_id == User.id)
                              .where(WebSession.sid_sha256 == digest, WebSession.expires > _now()))


def end_session(engine: Engine, sid: str | None) -> None:
    """End log-in session ``sid`` (nothing if it is unknown): its cookie no longer authenticates, even a copy."""
    if not sid or not isinstance(sid, str):
        return
    digest = hashlib.sha256(sid.encode()).hexdigest()
    with Session(engine) as session:
        session.execute(delete(WebSession).where(WebSession.sid_sha256 == digest))
        session.commit()


def end_sessions(engine: Engine, user: User) -> int:
    """End every log-in session of ``user`` (after a password change or reset, or deleting the account);
    returns how many there were."""
    with Session(engine) as session:
        ended = session.execute(delete(WebSession).where(WebSession.user_id == user.id)).rowcount
        session.commit()
    return ended


TOKEN_PREFIX = "bst_"
"""Every API token starts with it: a token never begins with ``-`` (``secrets.token_urlsafe`` gives one
in 64 that does, which ``brainscore submit --token TOKEN`` then read as an option and refused), and a
leaked token is recognisable in logs and by secret scanners."""


def create_token(engine: Engine, user: User) -> str:
    """A new API token for ``user``: ``bst_`` and 43 URL-safe characters (256 random bits); shown once,
    stored as its sha256. Tokens made before the prefix keep working."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with Session(engine) as session:
        session.add(ApiToken(user_id=user.id, token_sha256=hashlib.sha256(token.encode()).hexdigest()))
        session.commit()
    return token


def user_by_token(engine: Engine, token: str) -> User | None:
    """The owner of an API token, or None."""
    digest = hashlib.sha256((token or "").encode()).hexdigest()
    with Session(engine, expire_on_commit=False) as session:
        row = session.scalar(select(ApiToken).where(ApiToken.token_sha256 == digest))
        return session.get(User, row.user_id) if row is not None else None


def tokens_of(engine: Engine, user: User) -> list[ApiToken]:
    """The API tokens of ``user``, oldest first (their sha256 and creation time; the tokens themselves are not kept)."""
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id)))


def revoke_token(engine: Engine, user: User, token_id: int) -> None:
    """Delete API token ``token_id`` of ``user``; it no longer authenticates.

    Raises
    ------
    AccountError
        If ``user`` has no token with this id.
    """
    with Session(engine) as session:
        row = session.get(ApiToken, token_id)
        if row is None or row.user_id != user.id:
            raise AccountError(f"you have no API token {token_id}")
        session.delete(row)
        session.commit()
