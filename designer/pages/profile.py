"""The profile page and its API token actions (create, revoke)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from designer import selectors, services

__all__ = ["profile", "token_create", "token_revoke"]


@login_required
def profile(request):
    return render(request, "designer/profile.html", {
        "token": selectors.api_token_get(user=request.user),
        "new_key": request.session.pop("new_api_token", None)})


@login_required
@require_POST
def token_create(request):
    # Shown once: kept in the session only until the next profile page render pops it.
    request.session["new_api_token"] = services.api_token_rotate(user=request.user).key
    messages.success(request, "New API token created. Copy it now: it will not be shown again.")
    return redirect("profile")


@login_required
@require_POST
def token_revoke(request):
    revoked = services.api_token_revoke(user=request.user)
    messages.info(request, "API token revoked." if revoked else "You had no API token.")
    return redirect("profile")
