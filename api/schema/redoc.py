"""The Redoc page, served without any outside request."""
from __future__ import annotations

import re

from drf_spectacular.views import SpectacularRedocView

__all__ = ["OfflineRedocView"]


class OfflineRedocView(SpectacularRedocView):
    """Redoc from the sidecar files, without drf-spectacular's Google Fonts links: the docs
    must load air-gapped and make no outside request (Redoc falls back to system fonts)."""

    _FONT_LINK = re.compile(rb'\s*<link[^>]+fonts\.(?:googleapis|gstatic)\.com[^>]*>')

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code == 200:
            response.render()
            response.content = self._FONT_LINK.sub(b"", response.content)
        return response
