"""A passive scan of a live website, with the rules of a ZAP baseline scan (ZAP itself needs Java and a network).

A real uvicorn server on 127.0.0.1 (``page_server.py``: the site without its queue) over a database holding a
public and a private model, a submission and an API token. The scan crawls every page reachable by links
from ``/`` (and the account pages) as an anonymous visitor and as the private model's owner, and provokes
error pages with malformed addresses, then checks each answer:

- the security headers (ZAP 10020 X-Frame-Options, 10021 X-Content-Type-Options, 10038 CSP, 10063
  Permissions-Policy, Referrer-Policy) and no ``Server``/``X-Powered-By`` version (10036, 10037);
- cookie flags: HttpOnly (10010) and SameSite (10054);
- a CSRF token in every form that posts (10202);
- no stack trace, source path or SQL error in any answer, error pages included (10023, 90022);
- no private data (the private model's name, the submission's key, its log) in any answer to the anonymous
  visitor;
- ``Cache-Control: no-store`` on every answer to the logged-in user (10015);
- no inline script, event handler attribute, ``style`` attribute or ``<style>`` element (what the CSP blocks,
  10055), and no ``'unsafe-inline'`` in the CSP of any page.

The findings the scan raised, and what was done about each, are in docs/security.md.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.web import security
from brainscore.web.queue import SubmissionTask
from browser_helpers import page_server
from web_helpers import BENCHMARK, PASSWORD, add_scored_model, csrf

SECRET = "secret-scan-net"
LOG = "Traceback (most recent call last): private log line"
MAX_PAGES = 150
LEAKS = [re.compile(p) for p in (r"Traceback \(most recent call last\)", r'File "/', r"site-packages",
                                 r"sqlalchemy\.", r"sqlite3\.", r"psycopg", r"OperationalError", r"/root/",
                                 r"/home/", r"/work/", r"/tmp/")]
"""What an answer must never show: a stack trace, a source or server path, a database error."""


class _Page(HTMLParser):
    """The links, forms, scripts and inline styles of an HTML page."""

    def __init__(self):
        super().__init__()
        self.links, self.forms, self.scripts, self.handlers, self.styles = [], [], [], [], []
        self._form = None
        self._script = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.handlers += [name for name in attrs if name.lower().startswith("on")]
        self.styles += [f"<{tag} style={attrs['style']!r}>"] if "style" in attrs else []
        self.styles += ["<style> element"] if tag == "style" else []
        for name in ("href", "src"):
            if attrs.get(name) and tag in ("a", "img", "script", "link"):
                self.links.append(attrs[name])
        if tag == "form":
            self._form = {"method": (attrs.get("method") or "get").lower(), "action": attrs.get("action") or "",
                          "fields": {}}
            self.forms.append(self._form)
        elif tag == "input" and self._form is not None:
            self._form["fields"][attrs.get("name")] = attrs.get("value")
        elif tag == "script":
            self._script = {"src": attrs.get("src"), "body": ""}
            self.scripts.append(self._script)

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script["body"] += data


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The live server over a seeded database: ``{"url", "key"}`` (``key``: alice's private submission)."""
    folder = tmp_path_factory.mktemp("scan")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    store = Database(url)
    add_scored_model(store, "public-scan-net", 0.3)
    add_scored_model(store, SECRET, 0.6, public=False)
    with Session(store.engine, expire_on_commit=False) as session:
        task = SubmissionTask(owner="alice", package="secret_scan_net", models=[SECRET], benchmarks=[BENCHMARK],
                              status="failed", results={f"{SECRET}|{BENCHMARK}": {"status": "failed",
                                                                                   "failure": "boom"}},
                              log=LOG, folder="/nonexistent")
        session.add(task)
        session.commit()
    store.engine.dispose()
    with page_server(folder, url, inherit=False) as base:
        yield {"url": base, "key": task.key}


def _logged_in(base: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=30)
    response = client.post("/register", data={"username": "alice", "password": PASSWORD,
                                              "email": "alice@example.org", "csrf_token": csrf(client, "/register")})
    if response.status_code != 303 and "taken" in response.text:  # the second scan of the module logs in
        response = client.post("/login", data={"username": "alice", "password": PASSWORD,
                                               "csrf_token": csrf(client, "/login")})
    assert response.status_code == 303, response.text
    return client


def crawl(client: httpx.Client, starts: list[str]) -> dict[str, httpx.Response]:
    """Every same-site page reachable by links (and GET forms) from ``starts``, at most :data:`MAX_PAGES`,
    each address once without its query's repeats (one leaderboard sort per column is enough)."""
    seen: dict[str, httpx.Response] = {}
    shapes: set[tuple] = set()
    queue = list(starts)
    while queue and len(seen) < MAX_PAGES:
        address = queue.pop(0)
        parts = urlsplit(address)
        shape = (parts.path, tuple(sorted(k for k in re.findall(r"([^&=?]+)=", parts.query))))
        if address in seen or shape in shapes or parts.netloc not in ("", urlsplit(str(client.base_url)).netloc):
            continue
        shapes.add(shape)
        response = client.get(parts.path + (f"?{parts.query}" if parts.query else ""), headers={"accept": "text/html"})
        seen[address] = response
        if "text/html" in response.headers.get("content-type", ""):
            page = _Page()
            page.feed(response.text)
            for link in page.links:
                if not link.startswith(("mailto:", "#", "javascript:")):
                    queue.append(urljoin(parts.path, link))
            queue += [urljoin(parts.path, f["action"] or parts.path) for f in page.forms if f["method"] == "get"]
    return seen


ERRORS = ["/no/such/page", "/models/%00", "/models/..%2F..%2Fetc%2Fpasswd", "/submissions/%27%20OR%201=1--",
          "/api/submissions/' OR 1=1--", "/scores/abc", "/scores/99999999999999999999999", "/?page=-1",
          "/?page=abc", "/?at=not-a-date", "/api/leaderboard?at=2026-13-45", "/compare?models=a",
          "/plots/benchmarks/%2e%2e.svg", "/static/../app.py", "/api/models/" + "x" * 5000]
"""Addresses that provoke error answers: each must be an error without a trace of the server's insides."""


def findings(responses: dict[str, httpx.Response], logged_in: bool, private: tuple[str, ...],
             own: tuple[str, ...] = ()) -> list[str]:
    """What the passive rules find in ``responses`` (empty: nothing); ``own``: texts the asker may see (the log
    of their own submission, with the traceback their code printed), left out of the leak rules."""
    found = []
    for address, response in responses.items():
        headers = response.headers
        svg = headers.get("content-type", "").startswith("image/svg+xml")  # a plot: its own policy
        for name, value in security.HEADERS.items():
            value = security.SVG_POLICY if svg and name == "content-security-policy" else value
            if headers.get(name) != value:
                found.append(f"{address}: header {name} is {headers.get(name)!r}")
        for name in ("server", "x-powered-by"):
            if name in headers:
                found.append(f"{address}: {name}: {headers[name]}")
        for cookie in headers.get_list("set-cookie"):
            flags = cookie.lower()
            if "httponly" not in flags or "samesite=lax" not in flags:
                found.append(f"{address}: cookie without HttpOnly/SameSite: {cookie[:60]}")
        if response.status_code >= 500:
            found.append(f"{address}: {response.status_code}")
        text = response.text
        for mine in own:
            text = text.replace(mine, "")
        for leak in LEAKS:
            if leak.search(text):
                found.append(f"{address}: shows {leak.pattern!r}")
        cache = headers.get("cache-control", "")
        if logged_in and "no-store" not in cache and cache != "private, no-cache":  # (docs/security.md #19)
            found.append(f"{address}: a logged-in answer that a cache may keep ({cache!r})")
        if "set-cookie" in headers and "public" in cache:
            found.append(f"{address}: a cookie in an answer that shared caches may keep")
        if not logged_in:
            found += [f"{address}: shows {p!r} to an anonymous visitor" for p in private
                      if p in response.text and p not in address]  # (a 404 may echo the name asked for)
        if "text/html" in headers.get("content-type", ""):
            if "charset=utf-8" not in headers["content-type"]:
                found.append(f"{address}: HTML without a charset")
            page = _Page()
            page.feed(response.text)
            found += [f"{address}: inline script {s['body'][:40]!r}" for s in page.scripts if not s["src"]]
            found += [f"{address}: event handler attribute {h}" for h in page.handlers]
            found += [f"{address}: inline style {s[:60]}" for s in page.styles]
            if "unsafe-inline" in headers.get("content-security-policy", ""):
                found.append(f"{address}: a page whose CSP allows inline code or style")
            for form in page.forms:
                if form["method"] == "post" and not form["fields"].get("csrf_token"):
                    found.append(f"{address}: a form posting to {form['action']} without a CSRF token")
    return found


def test_an_anonymous_visitor_finds_nothing(site):
    with httpx.Client(base_url=site["url"], timeout=30) as anonymous:
        pages = crawl(anonymous, ["/", "/login", "/register", "/forgot", f"/models/{SECRET}",
                                  f"/submissions/{site['key']}", f"/api/submissions/{site['key']}"])
        assert len(pages) >= 20, sorted(pages)  # the crawl reached the site: leaderboard, models, benchmarks
        errors = {address: anonymous.get(address, headers={"accept": "text/html"}) for address in ERRORS}
    assert all(r.status_code < 500 for r in errors.values()), {a: r.status_code for a, r in errors.items()}
    assert findings({**pages, **errors}, logged_in=False, private=(SECRET, site["key"], LOG)) == []


def test_the_owner_finds_nothing(site):
    alice = _logged_in(site["url"])
    try:
        pages = crawl(alice, ["/", "/account", "/submissions", "/submit", f"/models/{SECRET}",
                              f"/submissions/{site['key']}"])
        assert f"/submissions/{site['key']}" in pages and pages[f"/models/{SECRET}"].status_code == 200
        assert len(pages) >= 20, sorted(pages)
        errors = {address: alice.get(address, headers={"accept": "text/html"}) for address in ERRORS}
    finally:
        alice.close()
    assert all(r.status_code < 500 for r in errors.values()), {a: r.status_code for a, r in errors.items()}
    assert findings({**pages, **errors}, logged_in=True, private=(), own=(LOG,)) == []
