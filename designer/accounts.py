"""Sign-in lockout: after LOCKOUT_FAILURES failed sign-ins for one username from one address
within LOCKOUT_WINDOW, that pair is locked for LOCKOUT_DURATION after the last failure.

Failures are rows (``designer.models.SignInFailure``), not cache entries, so every web process
sees the same count (the default cache is per process). The key is username + REMOTE_ADDR: a
guesser is stopped without letting anyone lock a colleague out from elsewhere. Behind a proxy
REMOTE_ADDR is the proxy's address (X-Forwarded-For is not trusted: it is client-controlled),
which makes the lock per username - stricter, never looser.

Two entry points enforce it: :class:`SignInForm` (the sign-in page, with a clear message) and
:class:`LockoutModelBackend` (every ``authenticate()`` call, so the admin login is covered too).
Failures are recorded by the ``user_login_failed`` signal; a success clears the pair.

Before any of that, :class:`SignInView` rate-limits attempts (``SignInThrottle``: per client
address and per account name, counted in the shared cache across web processes): past either
rate the page answers 429 with Retry-After and checks no password. The admin's sign-in
(``/admin/login/``) is behind the same rates (:func:`sign_in_throttled`, wired in ``designer/urls.py``). The lockout stops a guesser
of one account from one address; the rates also stop one address trying many accounts and many
addresses trying one.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver
from django.forms.utils import ErrorDict
from django.utils import timezone

from designer.ops.throttling import SignInThrottle, retry_seconds

__all__ = ["Lock", "lock_status", "record_failure", "clear_failures", "SignInForm",
           "SignInView", "LockoutModelBackend", "sign_in_throttled"]


def _setting(name: str, default):
    return getattr(settings, name, default)


def _policy() -> tuple[int, timedelta, timedelta]:
    return (int(_setting("FABRICSCOPE_LOCKOUT_FAILURES", 5)),
            timedelta(seconds=float(_setting("FABRICSCOPE_LOCKOUT_WINDOW_S", 900))),
            timedelta(seconds=float(_setting("FABRICSCOPE_LOCKOUT_DURATION_S", 900))))


@dataclass(frozen=True)
class Lock:
    until: datetime

    @property
    def minutes(self) -> int:
        return max(1, -int(-(self.until - timezone.now()).total_seconds() // 60))


def client_ip(request) -> str:
    return (request.META.get("REMOTE_ADDR") or "unknown")[:64] if request is not None else "unknown"


def _key(username: str | None) -> str:
    return (username or "").strip().lower()[:150]


def lock_status(username: str | None, ip: str, *, now=None) -> Lock | None:
    """The lock on (username, ip), or None: locked when the last N failures all fall within the
    window and the latest is less than the lock duration ago."""
    from designer.models import SignInFailure

    limit, window, duration = _policy()
    now = now or timezone.now()
    times = list(SignInFailure.objects.filter(username=_key(username), ip=ip,
                                              created_at__gte=now - window - duration)
                 .order_by("-created_at").values_list("created_at", flat=True)[:limit])
    if len(times) < limit or times[0] - times[-1] > window or now >= times[0] + duration:
        return None
    return Lock(until=times[0] + duration)


def record_failure(username: str | None, ip: str) -> None:
    from designer.models import SignInFailure

    _, window, duration = _policy()
    now = timezone.now()
    SignInFailure.objects.create(username=_key(username), ip=ip, created_at=now)
    # Keep the table small: rows older than window + duration can no longer lock anything.
    SignInFailure.objects.filter(created_at__lt=now - window - duration).delete()


def clear_failures(username: str | None, ip: str) -> None:
    from designer.models import SignInFailure

    SignInFailure.objects.filter(username=_key(username), ip=ip).delete()


def locked_message(lock: Lock) -> str:
    return (f"Too many failed sign-in attempts. For your security this account is locked on "
            f"this network for {lock.minutes} more minute{'s' if lock.minutes != 1 else ''}; "
            "try again later or ask an administrator.")


class SignInForm(AuthenticationForm):
    """Django's sign-in form, refusing (before checking the password) while locked."""

    locked: Lock | None = None

    def clean(self):
        username = self.cleaned_data.get("username")
        self.locked = lock_status(username, client_ip(self.request)) if username else None
        if self.locked is not None:
            raise ValidationError(locked_message(self.locked), code="locked")
        return super().clean()

    def refuse(self, message: str) -> None:
        """Show ``message`` as the form's only error without validating (no password check)."""
        self.locked = True  # the template prints a locked form's own message
        self._errors = ErrorDict({"__all__": self.error_class([message])})


class SignInView(LoginView):
    """Django's sign-in page behind the sign-in rate limits (429 + Retry-After past them)."""

    authentication_form = SignInForm

    def post(self, request, *args, **kwargs):
        throttle = SignInThrottle()
        if throttle.allow_request(request, self):
            return super().post(request, *args, **kwargs)
        form = self.get_form()
        form.refuse(throttle.message())
        response = self.render_to_response(self.get_context_data(form=form), status=429)
        response["Retry-After"] = str(retry_seconds(throttle.wait()))
        return response


def sign_in_throttled(view):
    """``view`` (a sign-in page such as the admin's) behind :class:`SignInThrottle`: past a rate
    a POST answers a plain-text 429 with Retry-After, and no password is checked."""
    from functools import wraps

    from django.http import HttpResponse

    @wraps(view)
    def throttled(request, *args, **kwargs):
        throttle = SignInThrottle()
        if throttle.allow_request(request, None):
            return view(request, *args, **kwargs)
        response = HttpResponse(throttle.message(), status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(retry_seconds(throttle.wait()))
        return response
    return throttled


class LockoutModelBackend(ModelBackend):
    """``ModelBackend`` that refuses a locked (username, address) pair outright.

    Raising PermissionDenied stops ``authenticate()`` from trying further backends; Django
    then sends ``user_login_failed`` (which does not count again: see ``_on_failure``).
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(self._username_field())
        if request is not None and lock_status(username, client_ip(request)) is not None:
            request._fabricscope_locked = True
            raise PermissionDenied("sign-in locked")
        return super().authenticate(request, username=username, password=password, **kwargs)

    @staticmethod
    def _username_field() -> str:
        from django.contrib.auth import get_user_model

        return get_user_model().USERNAME_FIELD


@receiver(user_login_failed, dispatch_uid="fabricscope-lockout-failure")
def _on_failure(sender, credentials, request=None, **kwargs):
    if request is None or getattr(request, "_fabricscope_locked", False):
        return  # attempts refused by the lock do not extend it
    record_failure(credentials.get("username"), client_ip(request))


@receiver(user_logged_in, dispatch_uid="fabricscope-lockout-success")
def _on_success(sender, request, user, **kwargs):
    if request is not None:
        clear_failures(user.get_username(), client_ip(request))
