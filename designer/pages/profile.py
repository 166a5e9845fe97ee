"""The profile page and its API token actions: list, create (key shown once), revoke."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from designer import selectors, services
from designer.pages.forms.errors import attach_errors
from designer.params import MAX_ID
from designer.pages.forms.tokens import ApiTokenForm

__all__ = ["profile", "token_create", "token_revoke"]


@login_required
def profile(request):
    return _page(request, ApiTokenForm())


@login_required
@require_POST
def token_create(request):
    form = ApiTokenForm(request.POST)
    if form.is_valid():
        try:
            token = services.api_token_create(user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            attach_errors(exc, form)
        else:
            # The key goes into this answer only, never into the session or any other store: a
            # reload re-posts the form (the browser asks), which replaces the token by name.
            messages.success(request, "New API token created. Copy it now: it will not be "
                                      "shown again.")
            return _page(request, ApiTokenForm(), new_token=token, status=201)
    return _page(request, form, status=400)


@login_required
@require_POST
def token_revoke(request):
    """Revoke the token named by ``token_id``, or all the user's tokens without it."""
    raw = request.POST.get("token_id", "")
    try:
        pk = int(raw) if raw else None
        if pk is not None and not 0 < pk <= MAX_ID:
            raise Http404("no such token")
        count = services.api_token_revoke(user=request.user, pk=pk)
    except (ValueError, Http404):
        messages.error(request, "No such API token of yours (already revoked?).")
        return redirect("profile")
    messages.info(request, f"{count} API token{'s' if count != 1 else ''} revoked."
                  if count else "You had no API token.")
    return redirect("profile")


def _page(request, form, *, new_token=None, status: int = 200):
    return render(request, "designer/profile.html", {
        "tokens": selectors.api_tokens_list(user=request.user), "form": form,
        "new_token": new_token}, status=status)
