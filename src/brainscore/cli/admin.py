"""``brainscore admin``: the website's administrators (add, list, remove) and withdrawing an approved plugin.

Administrators are made here, on the server, and stored in the results database
(:mod:`brainscore.web.administrators`): ``add NAME`` creates the account with a password typed here (or read from
standard input with ``--password-stdin``, for scripts), or names an existing account whose e-mail address is
verified. Nothing on the website makes one.
"""
from __future__ import annotations

import sys

from brainscore.errors import BrainScoreError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("admin", help="the website's administrators; withdraw an approved plugin",
                                   description="Make, list and remove the administrators of the website "
                                               "(`brainscore serve`), stored in its results database; withdraw a "
                                               "submission's approved plugins from the site.")
    commands = parser.add_subparsers(dest="admin_command", required=True, metavar="ACTION")
    add = commands.add_parser("add", help="make NAME an administrator (creating the account if there is none)",
                              description="Make NAME an administrator. Without an account NAME, it is created with "
                                          "a password typed twice here (or one line of standard input with "
                                          "--password-stdin); an existing account must have verified its e-mail "
                                          "address.")
    add.add_argument("name", metavar="NAME", help="the account's user name")
    add.add_argument("--email", default=None, help="the new account's e-mail address (counts as verified)")
    add.add_argument("--password-stdin", action="store_true",
                     help="read the new account's password from the first line of standard input (scripts)")
    listing = commands.add_parser("list", help="the administrators", description="One line per administrator: "
                                               "name, e-mail address, since when, made by.")
    remove = commands.add_parser("remove", help="NAME is no longer an administrator (the account stays)",
                                 description="NAME is no longer an administrator; the account and its models stay.")
    remove.add_argument("name", metavar="NAME", help="the administrator's user name")
    withdraw = commands.add_parser("withdraw", help="withdraw an approved submission's plugins from the site",
                                   description="Take an approved submission's plugin folder off the server's plugin "
                                               "folders: its benchmarks leave the listings at the next start of the "
                                               "site and are never scored again; recorded scores stay.")
    withdraw.add_argument("key", metavar="KEY", help="the submission's key (the last part of its page's address)")
    withdraw.add_argument("--submissions-dir", default=None, metavar="DIR",
                          help="the site's submissions folder (default BRAINSCORE_HOME/submissions)")
    for command in (add, listing, remove, withdraw):
        command.add_argument("--db", default=None, metavar="URL",
                             help="results database (default $BRAINSCORE_DB_URL, else "
                                  "sqlite:///$BRAINSCORE_HOME/results.sqlite)")
    parser.set_defaults(func=run)


def _password(args) -> str | None:
    """The new account's password: a line of standard input, else typed twice (None: the account exists)."""
    import getpass

    if args.password_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise BrainScoreError("--password-stdin: standard input held no password")
        return line
    if not sys.stdin.isatty():
        raise BrainScoreError("no terminal to type the new account's password on: pass it on standard input with "
                              "--password-stdin")
    first = getpass.getpass(f"password for the new administrator {args.name}: ")
    if first != getpass.getpass("again: "):
        raise BrainScoreError("the two passwords differ; nothing was changed")
    return first


def run(args) -> int:
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from brainscore.results import Database
    from brainscore.results.schema import User
    from brainscore.web import accounts, administrators

    with Database(args.db) as db:
        try:
            if args.admin_command == "add":
                with Session(db.engine) as session:
                    exists = session.scalar(select(User.id).where(User.username == args.name)) is not None
                password = _password(args) if not exists or args.password_stdin else None
                user, created = administrators.add(db.engine, args.name, password, args.email)
                print(f"{user.username} is an administrator" + (" (a new account)" if created else
                                                                 f" (the account of {user.email})"))
            elif args.admin_command == "list":
                rows = administrators.listed(db.engine)
                for row in rows:
                    print(f"{row['username']}\t{row['email'] or '-'}\tsince {row['added']:%Y-%m-%d %H:%M}\t"
                          f"by {row['added_by']}")
                if not rows:
                    print("no administrators: `brainscore admin add NAME` makes one")
            elif args.admin_command == "remove":
                administrators.remove(db.engine, args.name)
                print(f"{args.name} is no longer an administrator")
            else:
                return _withdraw(db, args)
        except accounts.AccountError as error:  # AdminError is one
            raise BrainScoreError(str(error)) from None
    return 0


def _withdraw(db, args) -> int:
    from pathlib import Path

    from brainscore.config import home
    from brainscore.web import approval

    root = Path(args.submissions_dir) if args.submissions_dir else home() / "submissions"
    try:
        folder = approval.withdraw_plugins(db.engine, root, args.key, "command line")
    except approval.ApprovalError as error:
        raise BrainScoreError(str(error)) from None
    print(f"withdrew {folder}: restart the website (brainscore serve) for its benchmarks to leave the listings")
    return 0
