"""The website's mail: address verification, password reset and a submission's result, over SMTP.

Settings (:mod:`brainscore.config`: ``brainscore config set KEY VALUE`` or the environment):
``mail_host``, ``mail_port``, ``mail_security`` (``starttls``, ``ssl`` or ``none``), ``mail_from``,
``mail_user``, ``mail_password`` and ``site_url`` (the public address links are built from).

Mail is sent with the standard library's :mod:`smtplib` and :mod:`email.message` (synchronous, so the
queue's thread and the routes' background tasks call it alike; fastapi-mail wraps the same in
asyncio). Without ``mail_host`` nothing is sent: each mail (its link included) is written to the log
``brainscore.web.mail`` at WARNING, so a local administrator can pass the link on. Sending never
raises: a mail that cannot be sent is logged with the reason and :meth:`Mailer.send` returns False,
so a submission's score is kept whatever the mail server does.
"""
from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from email import policy as email_policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from brainscore import config
from brainscore.errors import ValidationError

__all__ = ["MailSettings", "Mailer", "log"]


HEADER_POLICY = email_policy.default.clone(max_line_length=998)
"""The mails' policy: the standard library's, with header lines up to RFC 5322's 998 characters (its default
folds a long subject at 78, which some clients show broken, and encodes a word longer than that)."""

log = logging.getLogger("brainscore.web.mail")

SECURITY = {"starttls": 587, "ssl": 465, "none": 25}
"""Connection security -> its default port."""
TIMEOUT_S = 20


@dataclass(frozen=True)
class MailSettings:
    """Where and how the website sends mail.

    Attributes
    ----------
    host : str or None
        The SMTP server; None: mail is not configured (mails are logged, not sent).
    port : int
    security : str
        ``"starttls"``, ``"ssl"`` or ``"none"``.
    sender : str
        The From address.
    user, password : str or None
        SMTP log-in, if the server asks for one.
    site_url : str or None
        The website's public address (no trailing slash), for links in mail.
    """

    host: str | None = None
    port: int = 587
    security: str = "starttls"
    sender: str = "brainscore@localhost"
    user: str | None = None
    password: str | None = None
    site_url: str | None = None

    def __post_init__(self):
        if self.security not in SECURITY:
            raise ValidationError(f"mail_security must be one of {', '.join(SECURITY)}, got {self.security!r}")
        if self.host and not self.site_url:
            raise ValidationError("mail_host is set but site_url is not: set site_url to the website's public address "
                                  "(`brainscore config set site_url https://...`); links in mail are built from it, "
                                  "never from a request's Host header")

    @classmethod
    def from_config(cls) -> "MailSettings":
        """The settings of :mod:`brainscore.config` (environment, then the config file).

        Raises
        ------
        ValidationError
            If ``mail_security`` is not one of :data:`SECURITY`, or ``mail_host`` is set without ``site_url``.
        """
        value = {key: config.get(key)[0] for key in ("mail_host", "mail_port", "mail_security", "mail_from",
                                                     "mail_user", "mail_password", "site_url")}
        security = (value["mail_security"] or "starttls").lower()
        host = value["mail_host"] or None
        return cls(host=host, port=value["mail_port"] or SECURITY.get(security, 587), security=security,
                   sender=value["mail_from"] or f"brainscore@{host or 'localhost'}", user=value["mail_user"] or None,
                   password=value["mail_password"] or None,
                   site_url=(value["site_url"] or "").rstrip("/") or None)


class Mailer:
    """Sends the website's mail with :class:`MailSettings` (default: :meth:`MailSettings.from_config`).

    ``sent`` counts the mails handed to the server, ``logged`` those only written to the log.
    """

    def __init__(self, settings: MailSettings | None = None):
        self.settings = settings if settings is not None else MailSettings.from_config()
        self.sent = 0
        self.logged = 0

    @property
    def configured(self) -> bool:
        """Whether mail goes to an SMTP server (else it is only logged)."""
        return bool(self.settings.host)

    def link(self, path: str, fallback_base: str | None = None) -> str:
        """An absolute link to ``path`` (``/verify?token=...``) on the site: ``site_url`` + path.

        ``fallback_base`` (a request's base URL) is used only where ``site_url`` is unset, which
        :class:`MailSettings` allows only when no mail is sent (the link then goes to the local log).
        """
        base = self.settings.site_url or (fallback_base or "").rstrip("/")
        return base + path

    def message(self, to: str, subject: str, body: str) -> EmailMessage:
        """The mail as :class:`email.message.EmailMessage` (plain text, UTF-8). Headers are not folded below
        RFC 5322's hard limit of 998 characters a line (:data:`HEADER_POLICY`): a subject is one line, as sent."""
        message = EmailMessage(policy=HEADER_POLICY)
        message["From"] = self.settings.sender
        message["To"] = to
        message["Subject"] = subject
        message["Date"] = formatdate(localtime=False)
        message["Message-ID"] = make_msgid(domain=(self.settings.sender.rpartition("@")[2] or "localhost"))
        message.set_content(body)
        return message

    def send(self, to: str, subject: str, body: str) -> bool:
        """Send one mail; True if the SMTP server took it.

        Never raises: without ``mail_host`` the mail is logged at WARNING (its link for a local
        administrator); a failure to send is logged at ERROR with its reason.
        """
        if not self.configured:
            self.logged += 1
            log.warning("mail is not configured (set mail_host and site_url); not sent to %s: %s\n%s", to, subject,
                        body)
            return False
        s = self.settings
        try:
            message = self.message(to, subject, body)
            if s.security == "ssl":
                smtp = smtplib.SMTP_SSL(s.host, s.port, timeout=TIMEOUT_S, context=ssl.create_default_context())
            else:
                smtp = smtplib.SMTP(s.host, s.port, timeout=TIMEOUT_S)
            with smtp:
                if s.security == "starttls":
                    smtp.starttls(context=ssl.create_default_context())
                if s.user:
                    smtp.login(s.user, s.password or "")
                smtp.send_message(message)
        except (OSError, smtplib.SMTPException, ValueError) as error:
            log.error("could not send mail to %s (%s) through %s:%s: %s: %s", to, subject, s.host, s.port,
                      type(error).__name__, error)
            return False
        self.sent += 1
        log.info("mail sent to %s: %s", to, subject)
        return True
