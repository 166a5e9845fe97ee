"""A staticfiles finder serving the installed plotly package's ``plotly.min.js`` as
``vendor/plotly.min.js`` (so ``{% static 'vendor/plotly.min.js' %}`` works air-gapped, with the
same Plotly version that ``designer/figures/`` targets, without copying 4 MB into static/).

Register it in ``STATICFILES_FINDERS`` (after Django's two defaults): then ``runserver``, the test
live server, ``collectstatic`` + WhiteNoise and the manifest storage all see the file.

No page loads this full bundle any more: the figure pages load the vendored cartesian bundle
``static/vendor/plotly-cartesian.min.js`` (1.5 MB, same plotly.js version; see
``static/vendor/VERSIONS.md``). The finder stays until ``settings.STATICFILES_FINDERS`` drops it.
"""
from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

__all__ = ["PlotlyFinder", "PLOTLY_STATIC_PATH"]

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"


def _package_data() -> Path:
    import plotly

    return Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(_package_data()))
        self.storage.prefix = "vendor"  # collectstatic copies plotly.min.js to vendor/

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        match = str(_package_data() / "plotly.min.js") if path == PLOTLY_STATIC_PATH else None
        if find_all or kwargs.get("all"):
            return [match] if match else []
        return match or []

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage
