"""Sign-in lockout: 5 failures for one username from one address within 15 minutes lock that
pair for 15 minutes after the last failure, with a clear message; the admin login is covered."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from designer.models import SignInFailure

pytestmark = pytest.mark.django_db


def _sign_in(client, password, username="alice", ip="10.0.0.1", url=None):
    return client.post(url or reverse("login"), {"username": username, "password": password},
                       REMOTE_ADDR=ip)


def test_five_failures_lock_then_the_lock_expires(client, user):
    for _ in range(5):
        response = _sign_in(client, "wrong")
        assert response.status_code == 200 and "did not match" in response.content.decode()
    response = _sign_in(client, "alice-password-1")  # right password, but locked
    body = response.content.decode()
    assert response.status_code == 200
    assert "Too many failed sign-in attempts" in body and "15 more minutes" in body
    assert "_auth_user_id" not in client.session
    assert SignInFailure.objects.count() == 5  # refused attempts do not extend the lock
    # another address is not locked (a guesser cannot lock a colleague out from elsewhere)
    assert _sign_in(client, "alice-password-1", ip="10.0.0.2").status_code == 302
    client.logout()
    # 15 minutes after the last failure the pair is free again
    SignInFailure.objects.update(created_at=timezone.now() - timedelta(minutes=15, seconds=1))
    assert _sign_in(client, "alice-password-1").status_code == 302


def test_failures_spread_over_more_than_the_window_do_not_lock(client, user):
    for _ in range(4):
        _sign_in(client, "wrong")
    SignInFailure.objects.update(created_at=timezone.now() - timedelta(minutes=16))
    _sign_in(client, "wrong")
    assert _sign_in(client, "alice-password-1").status_code == 302


def test_success_clears_the_count(client, user):
    for _ in range(4):
        _sign_in(client, "wrong")
    assert _sign_in(client, "alice-password-1").status_code == 302
    assert SignInFailure.objects.count() == 0


def test_username_case_does_not_dodge_the_lock(client, user):
    for name in ("alice", "ALICE", "Alice", "aLice", "alicE"):
        _sign_in(client, "wrong", username=name)
    assert "Too many failed" in _sign_in(client, "alice-password-1").content.decode()


def test_admin_login_is_locked_too(client, django_user_model):
    django_user_model.objects.create_superuser("root", password="root-password-1")
    for _ in range(5):
        _sign_in(client, "wrong", username="root", url="/admin/login/")
    response = _sign_in(client, "root-password-1", username="root", url="/admin/login/")
    assert response.status_code == 200  # the form again, not a redirect into the admin
    assert "_auth_user_id" not in client.session
