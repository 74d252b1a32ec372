"""The website's administrators: accounts named on the server's command line, stored in the results database.

An administrator approves (and withdraws) submissions that hold benchmark, data or metric plugins
(:mod:`brainscore.web.approval`) and sees every submission's page. Administrators are rows of
:class:`~brainscore.results.schema.Administrator` (migration ``0010``), made only by ``brainscore admin add NAME`` on
the server: it either creates the account there, with a password given on that command line (never through the
website's ``/register``), or names an existing account whose e-mail address is verified. A user name alone never
makes an administrator: before (issue 36), ``brainscore serve --admin admin`` trusted whichever account was called
``admin``, and any visitor could register that name first.

Every check reads the table (one indexed query), so ``brainscore admin add`` and ``remove`` take effect on a running
site at its next request, in every web worker.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore.results.schema import Administrator, User
from brainscore.web import accounts

__all__ = ["AdminError", "is_admin", "add", "remove", "listed"]


class AdminError(accounts.AccountError):
    """An administrator cannot be added or removed as asked (the message says why and what to do)."""


def is_admin(engine: Engine, user) -> bool:
    """Whether ``user`` (a :class:`~brainscore.results.schema.User`, or None) is an administrator of the site."""
    if user is None or getattr(user, "id", None) is None:
        return False
    with Session(engine) as session:
        return session.scalar(select(Administrator.id).where(Administrator.user_id == user.id)) is not None


def add(engine: Engine, username: str, password: str | None = None, email: str | None = None,
        by: str = "command line") -> tuple[User, bool]:
    """Make ``username`` an administrator; returns the account and whether it was created here.

    Without an account of that name, one is created with ``password`` (and ``email``, if given; it counts as
    verified, since the server's operator gave it). An existing account is made an administrator only when its
    e-mail address is verified and no ``password`` is given: the operator names an account whose owner they know,
    never one that merely holds the name.

    Raises
    ------
    AdminError
        If the account exists but its address is not verified, or a password is given for an existing account; if
        there is no such account and no password (or a malformed name, short password or address); if it is an
        administrator already.
    """
    with Session(engine, expire_on_commit=False) as session:
        user = session.scalar(select(User).where(User.username == username))
    created = user is None
    if created:
        if password is None:
            raise AdminError(f"there is no account {username!r}: give it a password to create it here "
                             f"(brainscore admin add {username} prompts for one; --password-stdin reads it)")
        user = accounts.register(engine, username, password, email)
        if user.email is not None:
            with Session(engine, expire_on_commit=False) as session:
                user = session.get(User, user.id)
                user.email_verified = accounts._now()
                session.commit()
    elif password is not None:
        raise AdminError(f"the account {username!r} exists already: name it without a password (its e-mail address "
                         f"must be verified), or choose another name to create a new account")
    elif user.email_verified is None:
        raise AdminError(f"the account {username!r} ({user.email or 'no e-mail address'}) has not verified its e-mail "
                         f"address, so nothing shows it is yours: anyone can register a name through the website. "
                         f"Verify it, or create a new administrator account here with another name")
    with Session(engine, expire_on_commit=False) as session:
        if session.scalar(select(Administrator.id).where(Administrator.user_id == user.id)) is not None:
            raise AdminError(f"{username!r} is an administrator already")
        session.add(Administrator(user_id=user.id, added_by=by[:200]))
        session.commit()
    return user, created


def remove(engine: Engine, username: str) -> None:
    """``username`` is no longer an administrator (the account itself stays).

    Raises
    ------
    AdminError
        If ``username`` is not an administrator.
    """
    with Session(engine) as session:
        row = session.scalar(select(Administrator).join(User, User.id == Administrator.user_id)
                             .where(User.username == username))
        if row is None:
            raise AdminError(f"{username!r} is not an administrator (brainscore admin list shows them)")
        session.delete(row)
        session.commit()


def listed(engine: Engine) -> list[dict]:
    """The administrators, oldest first: ``{"username", "email", "added", "added_by"}`` each."""
    with Session(engine) as session:
        rows = session.execute(select(User.username, User.email, Administrator.added, Administrator.added_by)
                               .join(User, User.id == Administrator.user_id).order_by(Administrator.id)).all()
    return [{"username": u, "email": e, "added": a, "added_by": b} for u, e, a, b in rows]
