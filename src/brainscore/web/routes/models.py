"""What a model's owner does to it after submitting: make it public or private, and delete it.

Only the owner gets an answer: anyone else (logged in or not) gets 404, as for a model that does not
exist, so the routes do not tell a private model's name to others. Forms carry the session's CSRF
token; the API routes take the owner's bearer token (or the session with its ``X-CSRF-Token`` header).
Deleting asks first: the form must repeat the model's identifier.
"""
from __future__ import annotations

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from brainscore.web.queue import PREPARING_S, SubmissionTask
from brainscore.web.tasks import now
from brainscore.web.site import Site, check_csrf, site_of

router = APIRouter()


def owned(site: Site, identifier: str, user) -> None:
    """Raises HTTPException 404 unless ``user`` submitted model ``identifier``."""
    if user is None or site.owner_of(identifier) != user.username:
        raise HTTPException(404, f"no model {identifier!r} of yours")


def set_visibility(site: Site, identifier: str, user, visibility: str) -> bool:
    """Make ``user``'s model public (``visibility="public"``) or private (``"private"``); returns whether public.

    Raises
    ------
    HTTPException
        404 unless it is ``user``'s model; 400 for any other ``visibility``.
    """
    owned(site, identifier, user)
    if visibility not in ("public", "private"):
        raise HTTPException(400, f"visibility must be 'public' or 'private', got {visibility!r}")
    site.store.set_public(identifier, visibility == "public")
    return visibility == "public"


def delete(site: Site, identifier: str, user, confirm: str) -> int:
    """Delete ``user``'s model and its scores (they leave the leaderboard); ``confirm`` must repeat the identifier.
    Returns how many score rows went.

    Raises
    ------
    HTTPException
        404 unless it is ``user``'s model; 400 if ``confirm`` is not its identifier; 409 while a submission of it
        is queued or running (its scores would bring the model back).
    """
    owned(site, identifier, user)
    if confirm != identifier:
        raise HTTPException(400, f"to delete {identifier}, type its identifier exactly in the confirmation field")
    busy = active_task(site, identifier, user)
    if busy is not None:
        key, status = busy
        raise HTTPException(409, f"your submission {key} of {identifier} is still {status}; delete the model when it "
                                 f"has ended (its page: /submissions/{key})")
    return site.store.delete_model(identifier)


def active_task(site: Site, identifier: str, user) -> tuple[str, str] | None:
    """``(key, status)`` of a submission task of ``user`` that holds ``identifier`` and is preparing, queued or
    running (its key: what its page's address and the user's submissions list show). A task ``preparing`` for
    longer than :data:`~brainscore.web.queue.PREPARING_S` (its server died while unpacking it; it never runs) does
    not count."""
    current = now()
    with Session(site.engine) as session:
        for key, status, created, models in session.execute(
                select(SubmissionTask.key, SubmissionTask.status, SubmissionTask.created, SubmissionTask.models).where(
                SubmissionTask.owner == user.username,
                SubmissionTask.status.in_(("preparing", "queued", "running")))):
            if status == "preparing" and created is not None and (current - created).total_seconds() >= PREPARING_S:
                continue
            if identifier in (models or []):
                return key, status
    return None


@router.post("/models/{identifier}/visibility")
def visibility_form(request: Request, identifier: str, visibility: str = Form(...), csrf_token: str | None = Form(None)):
    """Make the model public or private and show its page again."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    set_visibility(site, identifier, site.current_user(request), visibility)
    return RedirectResponse(f"/models/{identifier}", status_code=303)


@router.get("/models/{identifier}/delete", response_class=HTMLResponse)
def delete_page(request: Request, identifier: str):
    """The confirmation page of deleting a model (its owner only)."""
    site = site_of(request)
    user = site.current_user(request)
    owned(site, identifier, user)
    scores = len(site.store.scores(identifier, include_failed=True))
    return site.render(request, "delete_model.html", model=identifier, scores=scores)


@router.post("/models/{identifier}/delete", response_class=HTMLResponse)
def delete_form(request: Request, identifier: str, confirm: str = Form(""), csrf_token: str | None = Form(None)):
    """Delete the model after the confirmation (the page again, 400, if the identifier was not repeated)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.current_user(request)
    owned(site, identifier, user)
    if confirm != identifier:
        return site.render(request, "delete_model.html", status_code=400, model=identifier,
                           scores=len(site.store.scores(identifier, include_failed=True)),
                           error=f"type {identifier} exactly to delete it")
    try:
        gone = delete(site, identifier, user, confirm)
    except HTTPException as busy:
        if busy.status_code != 409:
            raise
        return site.render(request, "delete_model.html", status_code=409, model=identifier,
                           scores=len(site.store.scores(identifier, include_failed=True)), error=busy.detail)
    return site.render(request, "message.html", title="Model deleted",
                       message=f"{identifier} and its {gone} score record(s) are deleted; it is no longer on the "
                               f"leaderboard.")


@router.post("/api/models/{identifier}/visibility")
def api_visibility(request: Request, identifier: str, visibility: str = Form(...)):
    """``{"model": ..., "public": bool}`` after making the model public or private."""
    site = site_of(request)
    public = set_visibility(site, identifier, site.api_user(request, csrf_needed=True), visibility)
    return {"model": identifier, "public": public}


@router.delete("/api/models/{identifier}")
def api_delete(request: Request, identifier: str, confirm: str = ""):
    """Delete the model (``?confirm=IDENTIFIER``); ``{"model": ..., "deleted_scores": n}``."""
    site = site_of(request)
    gone = delete(site, identifier, site.api_user(request, csrf_needed=True), confirm)
    return {"model": identifier, "deleted_scores": gone}
