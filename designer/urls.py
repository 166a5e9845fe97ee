"""Root URL configuration.

The page views (designer/views.py) and the REST API (api/urls.py) are other tasks: they are
included here as soon as their modules exist, so this file need not change when they land.
"""
from importlib.util import find_spec

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("designer.ops.urls")),  # /healthz, /readyz, /metrics
    path("", include("designer.page_urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]

if find_spec("api") is not None and find_spec("api.urls") is not None:
    urlpatterns.append(path("api/v1/", include("api.urls")))

# JSON errors under /api/, Django's normal error pages elsewhere.
handler404 = "api.exception_handlers.handler404"
handler500 = "api.exception_handlers.handler500"
