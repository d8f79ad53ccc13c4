"""Real Chromium for UI tests: Debian's /usr/bin/chromium driven by Playwright, and a real
`paper-catalog serve` on a free 127.0.0.1 port. Shared by the page tests and the XSS tests.

Never runs `playwright install`: the system browser is the one the CI image has.
"""

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STARTUP_SECONDS = 60

requires_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_command(db_path, port, metadata=ROOT / "metadata.yml"):
    """`paper-catalog serve` on one database file, as a user runs it (one worker: the tests
    share two cores)."""
    command = [str(Path(sys.executable).parent / "paper-catalog"), "serve", "--db", str(db_path)]
    command += ["--metadata", str(metadata), "--workers", "1"]
    return command + ["--host", "127.0.0.1", "--port", str(port)]


def wait_until_up(url, process, log_path):
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"datasette exited: {Path(log_path).read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/-/versions.json", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise RuntimeError(f"datasette did not start: {Path(log_path).read_text()[-2000:]}")


@contextmanager
def datasette_server(db_path, log_dir, metadata=ROOT / "metadata.yml"):
    """The served site on a free port; yields its base URL and stops it afterwards."""
    port = free_port()
    log_path = Path(log_dir) / f"datasette-{port}.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            serve_command(db_path, port, metadata),
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, log_path)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def chromium():
    """A headless Chromium browser (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, dialogs=None, errors=None):
    """A page that records every dialog (and dismisses it) and every page error."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    if dialogs is not None:

        def on_dialog(dialog):
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
    if errors is not None:
        page.on("pageerror", lambda error: errors.append(str(error)))
    return page


def blank_page(page, width=1280, height=900):
    """A page another test used, ready for the next: a blank document (the last one's scripts
    and timers gone with it), the viewport asked for, and its lists of dialogs and errors (if
    new_page kept them) emptied."""
    page.goto("about:blank")
    page.set_viewport_size({"width": width, "height": height})
    for recorded in (getattr(page, "dialogs", None), getattr(page, "errors", None)):
        if recorded is not None:
            recorded.clear()
    return page


def screenshot(page, name, full_page=True, start=None, height=1600):
    """Save under test-artifacts/ and return the path; with start (a locator), the part of the
    page from that element down, at most height pixels."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if start is None:
        page.screenshot(path=str(path), full_page=full_page)
    else:
        size = page.viewport_size
        page.set_viewport_size({"width": size["width"], "height": height})
        start.evaluate("element => element.scrollIntoView()")
        page.screenshot(path=str(path))
        page.set_viewport_size(size)
    return path
