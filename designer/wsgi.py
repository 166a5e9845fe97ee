"""WSGI entry point (gunicorn ``designer.wsgi:application``; ``manage.py up`` runs it too).

With DEBUG off it refuses to load without a real ``SECRET_KEY`` from the environment: settings
refuse already when this process was not started by a non-serving management command, and the
check below catches the development key in every other case (say, imported from a shell).
"""
import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")

application = get_wsgi_application()

if not settings.DEBUG and getattr(settings, "SECRET_KEY_IS_DEVELOPMENT", False):
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to serve with DEBUG off: export a random SECRET_KEY "
        "(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'), or DEBUG=1 locally.")
