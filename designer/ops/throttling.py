"""Request rate limits: anonymous, authenticated, job submission, the result page's figure
requests, sign-in (per client address and per account) and page views.

DRF throttles (``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]``, ``api.views.jobs``,
``api.views.tokens``); the figure, sign-in and page ones also guard plain Django views
(:mod:`designer.pages.results`, :mod:`designer.accounts`, :class:`PageRateLimitMiddleware`),
hence here and not in ``api/``.

Rates come from ``settings.FABRICSCOPE_API_THROTTLE_RATES`` (read per request, so deployments and
tests can change them; ``FABRICSCOPE_API_RATE_<SCOPE>``) with the defaults below. Counts are
sliding windows in the default cache, which is Redis (:mod:`designer.ops.shared_cache`): every
web process counts against one limit, in one atomic step per request. While Redis is down each
process counts on its own (docs/RELIABILITY.md, "Shared rate limits").
"""
from __future__ import annotations

import hashlib
import math

from django.conf import settings
from django.http import HttpResponse
from rest_framework.throttling import (
    AnonRateThrottle, BaseThrottle, SimpleRateThrottle, UserRateThrottle)

from designer.ops.shared_cache import take_local

__all__ = ["DEFAULT_RATES", "AnonThrottle", "UserThrottle", "JobSubmitThrottle", "FigureThrottle",
           "SignInThrottle", "PageThrottle", "PageRateLimitMiddleware", "take_slot", "retry_seconds"]

DEFAULT_RATES = {
    "anon": "60/min",          # unauthenticated: enough for the docs pages and a login
    "user": "1200/min",        # a script polling a few jobs at 10 Hz stays well below
    "job_submit": "30/min",    # each job can occupy a worker for minutes
    "figures": "300/min",      # result-page clicks (POST /figures/<kind>/): 5 a second, per visitor
    "signin_ip": "60/min",     # sign-in attempts from one address (an office behind one NAT)
    "signin_account": "10/min",  # sign-in attempts naming one account, from anywhere
    "pages": "600/min",        # page views per visitor: 10 a second (a job page polls at 1 Hz)
}


def take_slot(cache, key: str, limit: int, window_s: float) -> float:
    """Count one request under ``key``: 0.0 when allowed, else seconds until one is."""
    take = getattr(cache, "take_slot", None)
    if take is not None:
        return take(key, limit, window_s)
    return take_local(cache, key, limit, window_s)  # a non-Redis cache (a test's override)


def retry_seconds(wait: float | None) -> int:
    return max(1, math.ceil(wait or 1))


class _SharedWindow:
    """Rate from settings; one atomic sliding-window count per request (:func:`take_slot`)."""

    def get_rate(self):
        rates = {**DEFAULT_RATES, **getattr(settings, "FABRICSCOPE_API_THROTTLE_RATES", {})}
        return rates.get(self.scope)

    def allow_request(self, request, view):
        self.waiting = 0.0
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.waiting = take_slot(self.cache, self.key, self.num_requests, self.duration)
        return self.waiting == 0.0

    def wait(self):
        return self.waiting or None


class _PerVisitor(_SharedWindow, SimpleRateThrottle):
    """One count per visitor: a signed-in user, else a client address. Works on a plain Django
    request (it reads ``user`` and ``META`` only)."""

    def get_cache_key(self, request, view):
        user = getattr(request, "user", None)
        ident = f"user-{user.pk}" if user is not None and user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


class AnonThrottle(_SharedWindow, AnonRateThrottle):
    scope = "anon"


class UserThrottle(_SharedWindow, UserRateThrottle):
    scope = "user"


class JobSubmitThrottle(_SharedWindow, UserRateThrottle):
    """Applied only to ``POST /jobs/`` (see ``JobViewSet.get_throttles``)."""

    scope = "job_submit"


class FigureThrottle(_PerVisitor):
    """``POST /figures/<kind>/`` (a page view, open to share-link visitors): each request builds a
    figure in Python, so one visitor gets the ``figures`` rate."""

    scope = "figures"


class PageThrottle(_PerVisitor):
    """Page views (:class:`PageRateLimitMiddleware`)."""

    scope = "pages"


class _SignInAddress(_SharedWindow, SimpleRateThrottle):
    scope = "signin_ip"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class _SignInAccount(_SharedWindow, SimpleRateThrottle):
    """Keyed by the account name tried (normalized as the lockout does, hashed: a cache key
    holds no user input); an authenticated API caller's own name when the body has none."""

    scope = "signin_account"

    def get_cache_key(self, request, view):
        name = _username(request)
        if not name:
            return None
        digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:32]
        return self.cache_format % {"scope": self.scope, "ident": digest}


def _username(request) -> str:
    data = getattr(request, "data", None)  # a DRF request; a Django one has POST
    data = request.POST if data is None else data
    name = data.get("username") if hasattr(data, "get") else None
    if not isinstance(name, str) or not name.strip():
        user = getattr(request, "user", None)
        name = user.get_username() if user is not None and user.is_authenticated else ""
    return name.strip().lower()[:150]


class SignInThrottle(BaseThrottle):
    """Sign-in attempts (``POST`` only): ``signin_ip`` per client address, then
    ``signin_account`` per account name. ``refused`` says which limit refused."""

    REASONS = {"signin_ip": "from your network address", "signin_account": "for this account"}

    def __init__(self):
        self.parts = [_SignInAddress(), _SignInAccount()]
        self.refused: str | None = None
        self.waiting = 0.0

    def allow_request(self, request, view):
        if request.method != "POST":
            return True
        for part in self.parts:  # an attempt refused by address does not count for the account
            if not part.allow_request(request, view):
                self.refused, self.waiting = part.scope, part.waiting
                return False
        return True

    def wait(self):
        return self.waiting or None

    def message(self) -> str:
        retry = retry_seconds(self.waiting)
        return (f"Too many sign-in attempts {self.REASONS.get(self.refused, '')}: try again in "
                f"{retry} second{'s' if retry != 1 else ''}. Nothing was checked or changed.")


class PageRateLimitMiddleware:
    """Every page request counts against its visitor's ``pages`` rate; past it a plain-text 429
    with Retry-After. The API and figure requests have their own throttles; probes, metrics and
    static files are never limited (an orchestrator's probe must not be refused)."""

    EXEMPT_PREFIXES = ("/api/", "/figures/", "/static/", "/healthz", "/readyz", "/metrics")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path.startswith(self.EXEMPT_PREFIXES):
            throttle = PageThrottle()
            if not throttle.allow_request(request, None):
                return _too_many_pages(throttle)
        return self.get_response(request)


def _too_many_pages(throttle: PageThrottle) -> HttpResponse:
    retry = retry_seconds(throttle.wait())
    response = HttpResponse(
        f"Too many requests: this site serves at most {throttle.rate} pages per visitor. "
        f"Try again in {retry} s.\n", status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry)
    return response
