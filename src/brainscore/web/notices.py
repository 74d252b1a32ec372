"""The texts of the website's mails and who gets them: address verification, password reset, and a
submission's result when it finishes or fails (sent by :class:`~brainscore.web.queue.Dispatcher`).

Each function builds the mail and hands it to a :class:`~brainscore.web.mail.Mailer`, which sends it or,
without a mail server, logs it; none raises for a mail that could not be sent. :class:`Throttle` (the
:mod:`limits` library's moving windows) bounds the account mails one address receives and the reset
requests one client makes, so the forms cannot be used to flood someone's mailbox.
"""
from __future__ import annotations

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore.results.schema import SubmissionTask, User
from brainscore.web import accounts
from brainscore.web.mail import Mailer, log

__all__ = ["Throttle", "send_verification", "send_reset", "send_result", "result_text"]

PER_RECIPIENT = "5/hour"
"""Account mails (verification and reset links) one address receives at most."""
PER_CLIENT = "20/hour"
"""Password reset requests one client address makes at most."""
REGISTRATIONS_PER_CLIENT = "20/hour"
"""Accounts one client address registers at most (issue 36: sign-ups were unbounded)."""
REGISTRATIONS = "200/hour"
"""Accounts the whole site registers at most, from every address together (a bot with many addresses)."""


class Throttle:
    """Moving-window rate limits (:mod:`limits`) on the account mails: :data:`PER_RECIPIENT` mails per address,
    :data:`PER_CLIENT` reset requests per client address; and on sign-ups: :data:`REGISTRATIONS_PER_CLIENT`
    accounts per client address and :data:`REGISTRATIONS` on the whole site, each per moving hour.

    The counts are kept in this process's memory (``limits``' ``MemoryStorage``): a server with N web
    processes lets N times as many through, still a bound; a lost count on restart only lets a few more mails out.
    """

    def __init__(self, per_recipient: str = PER_RECIPIENT, per_client: str = PER_CLIENT,
                 registrations_per_client: str = REGISTRATIONS_PER_CLIENT, registrations: str = REGISTRATIONS):
        self.limiter = MovingWindowRateLimiter(MemoryStorage())
        self.per_recipient, self.per_client = parse(per_recipient), parse(per_client)
        self.registrations_per_client, self.registrations = parse(registrations_per_client), parse(registrations)
        self.texts = {"recipient": per_recipient, "client": per_client,  # as given, for the pages
                      "registrations_per_client": registrations_per_client, "registrations": registrations}

    def registration_refused(self, address: str) -> str | None:
        """Why client ``address`` may not register an account now (None: it may). Nothing is counted here:
        :meth:`registered` counts an account once it is made, so a form with a typo costs nothing."""
        if not self.limiter.test(self.registrations_per_client, "register-from", address or "?"):
            return (f"too many accounts were registered from your address this hour (at most "
                    f"{self.texts['registrations_per_client']}); try again later")
        if not self.limiter.test(self.registrations, "register-all"):
            return (f"this site has registered its share of new accounts this hour (at most "
                    f"{self.texts['registrations']}); try again later")
        return None

    def registered(self, address: str) -> None:
        """Count one account registered from client ``address`` (and on the site)."""
        self.limiter.hit(self.registrations_per_client, "register-from", address or "?")
        self.limiter.hit(self.registrations, "register-all")

    def recipient(self, address: str) -> bool:
        """Count one account mail to ``address``; False (nothing counted) when it had its share this hour."""
        return self.limiter.hit(self.per_recipient, "mail-to", (address or "").lower())

    def client(self, address: str) -> bool:
        """Count one reset request from client ``address``; False when it made its share this hour."""
        return self.limiter.hit(self.per_client, "reset-from", address or "?")


def send_verification(mailer: Mailer, secret: str, user: User, base: str | None = None) -> bool:
    """Mail ``user`` the link that verifies their address (``base``: the request's base URL, used only where
    ``site_url`` is unset and the mail is logged). True if the mail server took it."""
    link = mailer.link(f"/verify?token={accounts.verification_token(secret, user)}", base)
    days = accounts.VERIFY_MAX_AGE.days
    return mailer.send(user.email, "brainscore: verify your e-mail address",
                       f"Hello {user.username},\n\nfollow this link to verify that {user.email} is your address "
                       f"on brainscore:\n\n{link}\n\nThe link works for {days} days. Until the address is verified "
                       f"you can log in but not submit models.\n\nIf you did not register, ignore this mail.\n")


def send_reset(mailer: Mailer, secret: str, user: User, base: str | None = None) -> bool:
    """Mail ``user`` a password reset link (valid :data:`~brainscore.web.accounts.RESET_MAX_AGE`, once)."""
    link = mailer.link(f"/reset?token={accounts.reset_token(secret, user)}", base)
    minutes = int(accounts.RESET_MAX_AGE.total_seconds() // 60)
    return mailer.send(user.email, "brainscore: reset your password",
                       f"Hello {user.username},\n\nsomeone (we hope you) asked to reset the password of your "
                       f"brainscore account. Choose a new one here:\n\n{link}\n\nThe link works once, for {minutes} "
                       f"minutes; setting a new password logs out every session of the account. If you did not "
                       f"ask, ignore this mail: your password stays as it is.\n")


def result_text(task: SubmissionTask, link: str) -> tuple[str, str]:
    """Subject and body of the mail that reports submission task ``task``'s result: each (model, benchmark)
    pair's score or failure reason (without the server's host name and folders, as its page shows them:
    :func:`~brainscore.web.redact.redact`), and the link to its page."""
    from brainscore.web.redact import redact_task

    shown = redact_task({"results": task.results or {}, "failure": task.failure, "log": None}, task.folder)
    results = shown["results"]  # failures as the submission's page shows them: without the server's names
    done = sum(1 for r in results.values() if r.get("status") == "done")
    failed = sum(1 for r in results.values() if r.get("status") == "failed")
    state = "failed" if task.status == "failed" else "finished"
    subject = f"brainscore: submission {task.key} {state} ({done} scored, {failed} failed)"
    lines = [f"Your submission {task.key} ({task.filename or task.package or ', '.join(task.models)}) {state}.", ""]
    for model, benchmark in task.pairs:
        result = results.get(f"{model}|{benchmark}")
        if result is None:
            lines.append(f"  {model} on {benchmark}: not run")
        elif result.get("status") == "done":
            score = result.get("score")
            lines.append(f"  {model} on {benchmark}: score {score:.4f}" if isinstance(score, (int, float))
                         else f"  {model} on {benchmark}: scored")
        else:
            lines.append(f"  {model} on {benchmark}: FAILED: {result.get('failure') or 'no reason recorded'}")
    if task.status == "failed" and task.failure and not failed:
        lines.append(f"\n{shown['failure']}")
    lines += ["", f"Scores, failures and the whole log: {link}", ""]
    return subject, "\n".join(lines)


def send_result(engine: Engine, mailer: Mailer, task_id: int) -> bool:
    """Mail the owner of submission task ``task_id`` its result, if their address is verified (mail goes only to
    verified addresses); True if the mail server took it. Never raises: a problem is logged."""
    try:
        with Session(engine, expire_on_commit=False) as session:
            task = session.get(SubmissionTask, task_id)
            user = session.scalar(select(User).where(User.username == task.owner)) if task is not None else None
        if task is None or user is None or not user.email or user.email_verified is None:
            return False
        subject, body = result_text(task, mailer.link(f"/submissions/{task.key}"))  # its random key, as the site names it
        return mailer.send(user.email, subject, body)
    except Exception as error:  # a notification never takes the queue down with it
        log.error("could not mail the result of submission %s: %s: %s", task_id, type(error).__name__, error)
        return False
