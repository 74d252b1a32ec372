"""Accounts of the website: users, API tokens and log-in attempts (SQLAlchemy 2 tables).

Passwords are hashed with argon2 through :mod:`pwdlib` (the recommended hasher of the argon2
RFC 9106 profile); API tokens are random 32-byte strings stored only as their sha256. Log-in
attempts are recorded so that repeated failures for one user name or one client address are
refused for a while (:func:`login_allowed`). The tables (:class:`~brainscore.results.schema.User`,
``ApiToken``, ``LoginAttempt``) live in the results database (``--db URL``) and are made by its
Alembic migrations (revision ``0002``), like every other table.
"""
from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta, timezone

from pwdlib import PasswordHash
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.results.schema import ApiToken, LoginAttempt, User

PASSWORD_HASH = PasswordHash.recommended()
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,40}$")
MIN_PASSWORD = 8
MAX_FAILURES = 5
"""Failed log-ins allowed per user name (from any address) within :data:`FAILURE_WINDOW`."""
MAX_ADDRESS_FAILURES = 50
"""Failed log-ins allowed per client address (over all user names) within :data:`FAILURE_WINDOW`: high enough
that one person mistyping a password does not lock out the others behind the same address (a lab's NAT), low
enough to stop one address guessing across many accounts."""
FAILURE_WINDOW = timedelta(minutes=15)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class AccountError(ValueError):
    """A registration or log-in that cannot proceed; the message says why."""


class RateLimited(AccountError):
    """Too many failed log-ins for this user name or address within :data:`FAILURE_WINDOW`."""


def engine_for(url: str) -> Engine:
    """The engine of the results database at ``url``, its schema (web tables included) upgraded to the newest
    migration (:class:`~brainscore.results.Database` raises ``DatabaseError`` if it cannot be opened)."""
    return Database(url).engine


def register(engine: Engine, username: str, password: str) -> User:
    """Create an account.

    Raises
    ------
    AccountError
        If the user name is malformed or taken, or the password shorter than :data:`MIN_PASSWORD`.
    """
    if not USERNAME.match(username or ""):
        raise AccountError("a user name has 3 to 40 characters: letters, digits, '.', '_' or '-'")
    if len(password or "") < MIN_PASSWORD:
        raise AccountError(f"the password must have at least {MIN_PASSWORD} characters")
    with Session(engine, expire_on_commit=False) as session:
        if session.scalar(select(User).where(User.username == username)) is not None:
            raise AccountError(f"the user name {username!r} is taken; choose another")
        user = User(username=username, password_hash=PASSWORD_HASH.hash(password))
        session.add(user)
        session.commit()
        return user


def login_allowed(engine: Engine, username: str, address: str) -> bool:
    """False when the user name had :data:`MAX_FAILURES` failures in the window, or the address
    :data:`MAX_ADDRESS_FAILURES` (over all names)."""
    since = _now() - FAILURE_WINDOW
    with Session(engine) as session:
        for column, value, limit in ((LoginAttempt.username, username, MAX_FAILURES),
                                     (LoginAttempt.address, address, MAX_ADDRESS_FAILURES)):
            failures = session.scalar(select(func.count()).select_from(LoginAttempt).where(
                column == value, LoginAttempt.success.is_(False), LoginAttempt.at >= since))
            if failures >= limit:
                return False
    return True


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


def create_token(engine: Engine, user: User) -> str:
    """A new API token for ``user``; shown once, stored as its sha256."""
    token = secrets.token_urlsafe(32)
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
