"""Browser fixtures for journeys through the real app: headless Debian Chromium (Playwright)
against pytest-django's ``live_server``, with real Celery workers from ``tests/conftest.py``.

- ``chromium_browser`` (session): one Chromium process.
- ``app_page``: a fresh 1280×800 browser context + page (light colour scheme);
  ``dark_page`` the same in dark mode.
- ``sign_in(page, username, password)``: goes through the sign-in form.
- ``shot(page, name)``: full-page screenshot into ``$ARTIFACTS_DIR/screenshots/`` (default
  ``artifacts/screenshots/``); returns the path. Look at them.

- ``browser`` (session): the one Playwright Chromium every browser test module uses.
- ``wait_until_at_rest(page)``: wait on a condition, not a time: nothing on the page moves
  (no running CSS transition or animation, the editor's viewport not animating and unchanged
  over two animation frames). Use it before a screenshot or a click at computed coordinates.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
REPO = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1280, "height": 800}


# One poll per animation frame; the viewport must be the same on two consecutive polls. Why two:
# cytoscape's ``cy.animate`` only queues the animation and starts it on the next frame, and
# ``cy.animated()`` is false while it is queued -- one frame later it is true, or long over.
AT_REST = """() => {
    const finite = (a) => a.playState === 'running' && a.effect
        && a.effect.getComputedTiming().endTime !== Infinity;
    const cy = window.fabricscopeEditor && window.fabricscopeEditor.editor
        && window.fabricscopeEditor.editor.cy;
    const view = cy ? JSON.stringify([cy.zoom(), cy.pan()]) : '';
    const still = !document.getAnimations().some(finite) && !(cy && cy.animated())
        && window.__fsLastView === view;
    window.__fsLastView = view;
    return still;
}"""


def wait_until_at_rest(page, timeout: float = 15_000) -> None:
    """Wait until nothing on ``page`` moves (see ``AT_REST``); ``timeout`` in ms."""
    page.evaluate("window.__fsLastView = undefined")
    page.wait_for_function(AT_REST, polling="raf", timeout=timeout)


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
            _csp_safe_browser(launched)
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


# A JavaScript function's source (``() => …``, ``x => …``, ``function …``), not an expression.
_FUNCTION_SOURCE = re.compile(r"^\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>|[\w$]+\s*=>)")


def _csp_safe_waits(page) -> None:
    """The app's Content-Security-Policy has no ``'unsafe-eval'``, and Playwright evaluates an
    *expression* predicate with ``eval`` on every poll after the first, which the policy blocks
    (EvalError; microsoft/playwright#7395). A *function* predicate is evaluated once
    (microsoft/playwright#36986), so expressions are wrapped in one: the tests keep running
    against the real policy instead of bypassing it."""
    original = page.wait_for_function

    def wait_for_function(expression, *args, **kwargs):
        if isinstance(expression, str) and not _FUNCTION_SOURCE.match(expression):
            expression = f"() => ({expression})"
        return original(expression, *args, **kwargs)
    page.wait_for_function = wait_for_function


def _csp_safe_browser(browser) -> None:
    """Every page of every context of ``browser`` gets :func:`_csp_safe_waits`, however a test
    module opens it (``browser.new_context().new_page()`` or ``browser.new_page()``)."""
    def pages_of(opener):
        def open_page(*args, **kwargs):
            page = opener(*args, **kwargs)
            _csp_safe_waits(page)
            return page
        return open_page

    new_context = browser.new_context

    def open_context(*args, **kwargs):
        context = new_context(*args, **kwargs)
        context.new_page = pages_of(context.new_page)
        return context
    browser.new_context = open_context
    browser.new_page = pages_of(browser.new_page)


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


