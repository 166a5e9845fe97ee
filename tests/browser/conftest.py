"""Browser fixtures for journeys through the real app: headless Debian Chromium (Playwright)
against pytest-django's ``live_server``, with real Celery workers from ``tests/conftest.py``.

- ``chromium_browser`` (session): one Chromium process.
- ``app_page``: a fresh 1280×800 browser context + page (light colour scheme);
  ``dark_page`` the same in dark mode.
- ``sign_in(page, username, password)``: goes through the sign-in form.
- ``shot(page, name)``: full-page screenshot into ``$ARTIFACTS_DIR/screenshots/`` (default
  ``artifacts/screenshots/``); returns the path. Look at them.

- ``browser`` (session): the one Playwright Chromium every browser test module uses.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
REPO = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1280, "height": 800}


def screenshot_dir() -> Path:
    base = Path(os.environ["ARTIFACTS_DIR"]) if os.environ.get("ARTIFACTS_DIR") else REPO / "artifacts"
    path = base / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser():
    """The one Chromium of the test session (Playwright's sync API allows a single instance per
    thread, so every browser test module shares this one)."""
    playwright_sync = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    # Playwright's sync API keeps an asyncio loop on this thread; Django then refuses ORM calls
    # from test bodies and fixtures ("async context"). The test thread never runs async code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with playwright_sync.sync_playwright() as p:
            launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield launched
            launched.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="session")
def chromium_browser(django_db_setup, django_db_blocker, browser):
    return browser


def _page(browser, scheme: str):
    context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    return context, page


@pytest.fixture
def app_page(chromium_browser):
    context, page = _page(chromium_browser, "light")
    yield page
    context.close()


@pytest.fixture
def dark_page(chromium_browser):
    context, page = _page(chromium_browser, "dark")
    yield page
    context.close()


@pytest.fixture
def sign_in(live_server):
    def go(page, username: str, password: str):
        page.goto(live_server.url + "/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_load_state()
        return page
    return go


@pytest.fixture
def shot():
    def take(page, name: str, full_page: bool = True) -> Path:
        path = screenshot_dir() / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path
    return take


@pytest.fixture(autouse=True)
def plotly_static(settings):
    """Serve plotly.min.js as static/vendor/plotly.min.js (designer.staticfinders), also before
    settings.py lists the finder."""
    finder = "designer.staticfinders.PlotlyFinder"
    finders = list(getattr(settings, "STATICFILES_FINDERS", [
        "django.contrib.staticfiles.finders.FileSystemFinder",
        "django.contrib.staticfiles.finders.AppDirectoriesFinder"]))
    if finder not in finders:
        settings.STATICFILES_FINDERS = [*finders, finder]
