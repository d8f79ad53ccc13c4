"""Real Chromium for UI tests: Debian's /usr/bin/chromium driven by Playwright, and a real
`paper-catalog serve` on a free 127.0.0.1 port. Shared by the page tests and the XSS tests.

Never runs `playwright install`: the system browser is the one the CI image has.
"""

import os
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
# axe-core, from npm (tests/js/package.json; `make test` installs it)
AXE = ROOT / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"
# the viewport widths the pages are checked at
WIDTHS = {"desktop": 1280, "phone": 390}
# a test's widths: the desktop's in `make test`, the phone's too in `make test-slow`
DESKTOP_AND_PHONE_IN_SLOW = ["desktop", pytest.param("phone", marks=pytest.mark.slow)]
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


def stop(process):
    """Ask a process to stop (SIGTERM), and kill it if it has not within 10 seconds."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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
        stop(process)


# The switches Playwright's own launch gives Chromium (1.65) that shape how a page behaves:
# headless, no scrollbars taking width (the sideways-scroll checks measure scrollWidth), a mouse
# as the pointer, the sRGB colours of the screenshots, no back-forward cache, no throttling of
# pages or timers in the background, no popup blocking. The session's Chromium, started here
# and reached over the DevTools protocol, gets the same.
PLAYWRIGHT_SWITCHES = [
    "--headless",
    "--hide-scrollbars",
    "--mute-audio",
    (
        "--blink-settings=primaryHoverType=2,availableHoverTypes=2,"
        "primaryPointerType=4,availablePointerTypes=4"
    ),
    "--force-color-profile=srgb",
    "--disable-field-trial-config",
    "--disable-back-forward-cache",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-ipc-flooding-protection",
    "--disable-hang-monitor",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-breakpad",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-dev-shm-usage",
    "--disable-search-engine-choice-screen",
    (
        "--disable-features=AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,"
        "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,LensOverlay,MediaRouter,PaintHolding,"
        "ThirdPartyStoragePartitioning,AvoidCorsURLLoaderRestartOnRedirect,OptimizationHints,"
        "NetworkTimeServiceQuerying,PreconnectToSearch,AimEnabled,"
        # the Omnibox popup's page, which a headless Chromium renders for nothing: 5% of a core
        "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"
    ),
    "--enable-features=CDPScreenshotNewSurface",
    "--allow-pre-commit-input",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--no-service-autorun",
    "--no-default-browser-check",
]


@contextmanager
def chromium_process(folder):
    """Debian's Chromium, headless, started once (a launch costs about 2 CPU-s) with its own
    profile in `folder` and a DevTools port of its choosing; yields the URL Playwright connects
    to (connected()), and stops it at the end. It dies with the process that started it, even
    a killed one (loader/lifetime.py)."""
    from loader.lifetime import die_with_parent

    profile = Path(folder) / "profile"
    port_file = profile / "DevToolsActivePort"
    log_path = Path(folder) / "chromium.log"
    command = [str(CHROMIUM), *PLAYWRIGHT_SWITCHES, *CHROMIUM_ARGS, f"--user-data-dir={profile}"]
    command += ["--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            # no window of its own: each module opens its pages
            command + ["--no-startup-window"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - a prctl only, as test_serve.py starts its servers
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        # its first line is the port, written once Chromium listens on it
        while not (port_file.exists() and "\n" in port_file.read_text()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().splitlines()[0]}"
    finally:
        stop(process)


@contextmanager
def connected(endpoint):
    """Playwright (its sync API) connected to the running Chromium at `endpoint`; leaving
    closes the contexts opened through it and the connection, and leaves Chromium running."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(endpoint)
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


# `make screenshots` (SCREENSHOTS=1) saves what the browser tests see, whole pages, to look at;
# `make test` takes none (a screenshot costs Chromium 0.1-1 CPU-s and checks nothing)
SCREENSHOTS = os.environ.get("SCREENSHOTS") == "1"


def screenshot(page, name, full_page=True, start=None, height=1600):
    """Under SCREENSHOTS=1, save under test-artifacts/ and return the path: the whole page
    (full_page) or the first screen; with start (a locator), the part of the page from that
    element down, at most height pixels. Else nothing (None)."""
    if not SCREENSHOTS:
        return None
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
