"""Start the app like the README does and drive it in Debian's Chromium (Playwright).

Shared by the browser tests (tests/e2e) and the latency benchmark (benchmarks/ui_latency.py).
Chromium is the system one (``/usr/bin/chromium``, ``executable_path``); nothing is ever
downloaded (no ``playwright install``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("LABELER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str | None:
    """The system Chromium, or None when it is not installed."""
    for candidate in (CHROMIUM, shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def labeler_command(port: int, data: str | None = None) -> list[str]:
    """The README's ``labeler app [DATA] --port PORT --host 127.0.0.1`` command.

    Uses the installed console script; in a checkout that is not installed, the same entry
    point (``labeler.cli.main``) through ``python -c``.
    """
    exe = shutil.which("labeler")
    if exe:
        base = [exe]
    elif (REPO / "labeler" / "cli" / "__init__.py").exists():
        base = [sys.executable, "-c", "import sys; from labeler.cli import main; sys.exit(main())"]
    else:  # the CLI has not landed yet: the function it calls
        return [sys.executable, "-c",
                f"from labeler.serve import run_app; run_app(data={data!r}, port={port}, "
                "host='127.0.0.1')"]
    return [*base, "app", *([data] if data else []), "--port", str(port), "--host", "127.0.0.1"]


class AppServer:
    """The app running in a child process on a free port, with its own store.

    Parameters
    ----------
    store : path-like
        SQLite store file (passed as ``LABELER_STORE``).
    data_options : dict, optional
        Passed as ``LABELER_DATA_OPTIONS`` (e.g. ``{"n": 300}``).
    data : str, optional
        Data set to open (``labeler app DATA``).
    env : dict, optional
        More environment variables (e.g. ``LABELER_DATA_DIR``).
    """

    def __init__(self, store, data_options=None, data=None, timeout=120.0, env=None):
        import json

        extra_env = env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.store = Path(store)
        env = dict(os.environ)
        env["LABELER_STORE"] = str(self.store)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        env["STREAMLIT_SERVER_HEADLESS"] = "true"
        env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
        env.pop("LABELER_SESSION", None)
        if data_options:
            env["LABELER_DATA_OPTIONS"] = json.dumps(data_options)
        env.update(extra_env or {})
        self.log_path = Path(tempfile.mkstemp(prefix="labeler-server-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        self.command = labeler_command(self.port, data)
        self.proc = subprocess.Popen(self.command, cwd=str(REPO), env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_healthy(timeout)

    def _wait_healthy(self, timeout):
        deadline = time.monotonic() + timeout
        health = f"http://127.0.0.1:{self.port}/_stcore/health"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the app exited with code {self.proc.returncode}:\n{self.log()}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(health, timeout=2) as r:
                    if r.status == 200:
                        return
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the app did not answer on {health} within {timeout:.0f} s:\n{self.log()}")

    def log(self) -> str:
        if not self._log.closed:  # stop() closes it: a server that never answered is stopped first
            self._log.flush()
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the group we started (start_new_session)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


@contextlib.contextmanager
def browser_page(viewport=(1440, 1000), downloads=True):
    """A Playwright page in a fresh headless Chromium profile (deleted afterwards)."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("Chromium is not installed (apt-get install chromium).")
    profile = tempfile.mkdtemp(prefix="labeler-chromium-")
    try:
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                profile, executable_path=exe, args=CHROMIUM_ARGS, headless=True,
                viewport={"width": viewport[0], "height": viewport[1]},
                accept_downloads=downloads,
            )
            try:
                page = ctx.pages[0] if ctx.pages else ctx.new_page()
                page.set_default_timeout(60_000)
                yield page
            finally:
                ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


# ---- page helpers ---------------------------------------------------------------------------
POINT_TAG = ".point-tag"


def open_app(page, url):
    """Load the app and wait until its first page is complete: the point panel, the map and, on
    a large pool, the panels drawn by the rerun that follows the map's drawing (their
    placeholder gone), so that a test's first mouse move meets the page's final layout."""
    from labeler.ui.first_paint import PENDING

    page.goto(url)
    page.wait_for_selector(POINT_TAG, timeout=180_000)
    page.wait_for_selector(".js-plotly-plot", timeout=180_000)
    page.wait_for_function("(text) => !document.body.innerText.includes(text)", arg=PENDING, timeout=180_000)
    focus_page(page)


def focus_page(page):
    """Give the keyboard to the page itself (not an input), where shortcuts are heard."""
    page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); }")


def shown(page) -> tuple[int | None, int | None]:
    """(shown point, current query) from the point panel."""
    tag = page.locator(POINT_TAG).first
    point, query = tag.get_attribute("data-point"), tag.get_attribute("data-query")
    return (int(point) if point else None, int(query) if query else None)


def labeled_count(page) -> int:
    return int(page.locator(".labeled-count").first.get_attribute("data-labeled"))


def wait_labeled(page, count: int, timeout=60_000):
    """Wait until the page says ``count`` points are labelled (the error shows the page state)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_selector(f'.labeled-count[data-labeled="{count}"]', timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(
            f"the page did not reach {count} labels within {timeout / 1000:.0f} s: it shows "
            f"{labeled_count(page)} labels, point/query {shown(page)}; page text starts "
            f"{page.inner_text('body')[:600]!r}") from None


def wait_idle(page, timeout=120_000):
    """Wait until the app's rerun is over: no stale (greyed) element and no running indicator."""
    page.wait_for_function(
        """() => !document.querySelector('[data-stale="true"]')
                 && !document.querySelector('[data-testid="stStatusWidget"]')""", timeout=timeout)


def wait_buttons_current(page, timeout=60_000):
    """Wait until the class buttons on the page are those of the point shown (their keys name
    it): a key press before that belongs to the previous point and is ignored by design."""
    page.wait_for_function(
        """() => { const t = document.querySelector('.point-tag');
                   if (!t || t.dataset.point === '') return false;
                   const b = document.querySelector('.st-key-class_0_' + t.dataset.point);
                   const u = document.querySelector('.st-key-step_buttons [class*="st-key-undo_"]');
                   return !!b && !b.closest('[data-stale="true"]')
                          && !!u && !u.closest('[data-stale="true"]'); }""",
        timeout=timeout)


def press(page, key: str):
    """Press ``key`` as a user who has seen the current point and its buttons."""
    wait_buttons_current(page)
    focus_page(page)
    page.keyboard.press(key)


def wait_query_changed(page, old_query: int, timeout=60_000):
    page.wait_for_function(
        """(old) => { const t = document.querySelector('.point-tag');
                      return t && t.dataset.query !== '' && t.dataset.query !== String(old); }""",
        arg=old_query, timeout=timeout)


def class_keys(page, timeout_s: float = 60.0) -> dict[str, str]:
    """{class name: shortcut key} read from the class buttons (their ``<kbd>`` hints), once
    every class button on the page is drawn (on a slow first page a button's container can come
    before the button)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = page.evaluate(
            """() => {
                const out = {};
                let complete = true;
                for (const el of document.querySelectorAll('.st-key-class_buttons [class*="st-key-class_"]')) {
                    const button = el.querySelector('button');
                    const name = button && button.querySelector('p'), kbd = button && button.querySelector('kbd');
                    if (name && kbd) { out[name.innerText.trim()] = kbd.innerText.trim().toLowerCase(); }
                    else { complete = false; }
                }
                return {keys: out, complete: complete};
            }""")
        if (found["complete"] and found["keys"]) or time.monotonic() > deadline:
            return found["keys"]
        page.wait_for_timeout(200)


def plot_point_position(page, index: int) -> tuple[float, float]:
    """Page coordinates of pool point ``index`` in the scatter (plotly's own axis maps)."""
    pos = page.evaluate(
        """(i) => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')]
                       .find(g => g.data && g.data[0] && g.data[0].name === 'pool');
            const fl = gd._fullLayout, xa = fl.xaxis, ya = fl.yaxis;
            const cd = gd._fullData[0];
            const x = cd.x[i], y = cd.y[i];
            const box = gd.querySelector('.nsewdrag') || gd;
            const r = box.getBoundingClientRect();
            return [r.left + xa.l2p(x), r.top + ya.l2p(y)];
        }""",
        index,
    )
    return float(pos[0]), float(pos[1])


def click_point(page, index: int, tries: int = 3, timeout=20_000):
    """Click pool point ``index`` on the map until the point panel shows it.

    Each click waits for the rerun to end (the map drawn for the current state). A click that
    still lands while plotly redraws the map is lost (seen once in CI on a busy machine), and a
    user then clicks again: so does this, after checking that the last click did not arrive
    late (a second click on a selected point would deselect it).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    shows = ("(i) => { const t = document.querySelector('.point-tag');"
             " return t && t.dataset.point === String(i); }")
    for attempt in range(tries):
        wait_idle(page)
        if page.evaluate(shows, index):
            return
        x, y = plot_point_position(page, index)
        page.mouse.click(x, y)
        try:
            page.wait_for_function(shows, arg=index, timeout=timeout)
            return
        except PlaywrightTimeoutError:
            if attempt == tries - 1:
                raise


def download_export_csv(page, path, timeout=60_000):
    """Open the Export tab, download the labelled set as CSV (the browser's own download) to
    ``path`` and return ``path``. The button is pressed once the page is idle: a rerun under
    way (the tab's own, a background job's) replaces the button's file and cancels a download
    begun before it ends."""
    page.get_by_role("tab", name="Export").click()
    button = page.locator(".st-key-download_csv button").first
    button.wait_for(timeout=timeout)
    wait_idle(page, timeout=timeout)
    with page.expect_download(timeout=timeout) as download:
        button.click()
    download.value.save_as(path)
    return path


# ---- drawing on the map ---------------------------------------------------------------------
_POOL_MAP = """[...document.querySelectorAll('.js-plotly-plot')]
               .find(g => g.data && g.data[0] && g.data[0].name === 'pool')"""


def map_to_page(page, points) -> list[tuple[float, float]]:
    """Page coordinates of layout coordinates ``points`` [(x, y), ...] on the pool map (plotly's
    own axis maps): where a user would move the mouse to draw around them."""
    return [tuple(p) for p in page.evaluate(
        f"""(pts) => {{ const gd = {_POOL_MAP};
                      const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
                      const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
                      return pts.map(([x, y]) => [r.left + xa.l2p(x), r.top + ya.l2p(y)]); }}""",
        [[float(x), float(y)] for x, y in points])]


def map_tool(page, title: str):
    """Press a button of the map's plotly toolbar ("Lasso Select", "Box Select", "Zoom"...)."""
    box = page.evaluate(f"""() => {{ const r = ({_POOL_MAP}).querySelector('.nsewdrag')
                                                 .getBoundingClientRect();
                                    return [r.left, r.top, r.width, r.height]; }}""")
    page.mouse.move(box[0] + box[2] / 2, box[1] + box[3] / 2)
    button = page.locator(f'.modebar-btn[data-title="{title}"]').first
    button.wait_for(state="attached")
    button.click(force=True)


def drag_through(page, points, steps: int = 4):
    """Press the mouse at the first page point, move through the others, release."""
    page.mouse.move(*points[0])
    page.mouse.down()
    for p in points[1:]:
        page.mouse.move(*p, steps=steps)
    page.mouse.up()


def session_of_page(page) -> str:
    """The id of the session the page shows (its ``session`` query parameter)."""
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(page.url).query)["session"][0]
