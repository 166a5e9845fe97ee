"""Request rate limits: anonymous, authenticated, a stricter one for job submission, and one for
the result page's figure requests.

DRF throttles (``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]``, ``api.views.jobs``); the figure
one also guards a page view (:mod:`designer.pages.results`), hence here and not in ``api/``.

Rates come from ``settings.FABRICSCOPE_API_THROTTLE_RATES`` (read per request, so deployments and
tests can change them) with the defaults below; counters live in Django's default cache.
"""
from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

__all__ = ["DEFAULT_RATES", "AnonThrottle", "UserThrottle", "JobSubmitThrottle", "FigureThrottle"]

DEFAULT_RATES = {
    "anon": "60/min",          # unauthenticated: enough for the docs pages and a login
    "user": "1200/min",        # a script polling a few jobs at 10 Hz stays well below
    "job_submit": "30/min",    # each job can occupy a worker for minutes
    "figures": "300/min",      # result-page clicks (POST /figures/<kind>/): 5 a second, per visitor
}


class _ConfiguredRate:
    def get_rate(self):
        rates = {**DEFAULT_RATES, **getattr(settings, "FABRICSCOPE_API_THROTTLE_RATES", {})}
        return rates.get(self.scope)


class AnonThrottle(_ConfiguredRate, AnonRateThrottle):
    scope = "anon"


class UserThrottle(_ConfiguredRate, UserRateThrottle):
    scope = "user"


class JobSubmitThrottle(_ConfiguredRate, UserRateThrottle):
    """Applied only to ``POST /jobs/`` (see ``JobViewSet.get_throttles``)."""

    scope = "job_submit"


class FigureThrottle(_ConfiguredRate, SimpleRateThrottle):
    """``POST /figures/<kind>/`` (a page view, open to share-link visitors): each request builds a
    figure in Python, so one visitor — a signed-in user, else a client address — gets the
    ``figures`` rate. Works on a plain Django request (it reads ``user`` and ``META`` only)."""

    scope = "figures"

    def get_cache_key(self, request, view):
        user = getattr(request, "user", None)
        ident = f"user-{user.pk}" if user is not None and user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
