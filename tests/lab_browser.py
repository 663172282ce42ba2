"""A real JupyterLab driven by headless Chromium with no network: the harness of the ``browser`` tests.

``JupyterLab`` starts ``python -m jupyterlab`` from this venv on 127.0.0.1 with a token, in a folder of its
own (its settings, workspaces and runtime files too, so nothing of the machine's own Jupyter leaks in).
``LabPage`` is a Playwright page in Debian's ``/usr/bin/chromium`` (never a downloaded browser) whose every
request is recorded: anything not addressed to the lab is aborted and listed in ``outside``, and the browser
itself goes through a recording proxy (``Recorder``) so that nothing it sends leaves the machine either.

Use it through the fixtures in tests/conftest.py::

    @pytest.mark.browser
    def test_x(jupyter_lab, lab_page):
        jupyter_lab.add("my.ipynb", notebook_path)       # copy a notebook into the lab's folder
        lab_page.open_notebook("my.ipynb")
        lab_page.run_all()                                # waits until every cell has run
        assert lab_page.errors() == [] and lab_page.outside == []
        lab_page.page                                     # the Playwright page, for anything else
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"  # Debian's package (apt-get install chromium); .ci/run installs it
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter",
)
# JupyterLab settings for a test: every cell in the DOM (no windowing), no news or update checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def chromium_path() -> str | None:
    """Debian's Chromium, if installed."""
    return CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")


class Recorder(BaseHTTPRequestHandler):
    """A proxy that answers nothing and records every request that tried to leave the machine."""

    seen: ClassVar[list[str]] = []

    def _record(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(503)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_CONNECT = do_PUT = do_DELETE = _record

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def recording_proxy() -> Iterator[tuple[int, list[str]]]:
    """A ``Recorder`` on 127.0.0.1: (its port, the requests it saw)."""
    seen: list[str] = []
    handler = type("Recording", (Recorder,), {"seen": seen})
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield proxy.server_address[1], seen
    finally:
        proxy.shutdown()
        proxy.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class JupyterLab:
    """A JupyterLab server from this venv on 127.0.0.1, serving ``root``; ``stop()`` ends it."""

    def __init__(self, home: Path, *, env: dict[str, str] | None = None, timeout: float = 90.0) -> None:
        self.root = home / "lab"
        self.root.mkdir(parents=True)
        self.token = secrets.token_hex(16)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        settings = home / "settings"
        for name, values in LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        run_env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_PREFER_ENV_PATH": "1",
            "JUPYTER_PLATFORM_DIRS": "1",
            **(env or {}),
        }
        self.log = (home / "jupyterlab.log").open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                "--LabApp.expose_app_in_browser=True",
                "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                f"--LabApp.user_settings_dir={settings}",
                f"--LabApp.workspaces_dir={home / 'workspaces'}",
                "--LabApp.extension_manager=readonly",  # the server asks no package index either
                *(["--allow-root"] if os.geteuid() == 0 else []),
            ],
            cwd=self.root,
            env=run_env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with {self.proc.returncode}: {self.log_text()[-2000:]}"
                )
            status = f"{self.url}/api/status?token={self.token}"
            with contextlib.suppress(OSError), urllib.request.urlopen(status, timeout=2) as r:
                if r.status == 200:
                    return
            time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not answer in {timeout} s: {self.log_text()[-2000:]}")

    def log_text(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")

    def add(self, name: str, source: Path) -> Path:
        """Copy ``source`` into the lab's folder as ``name``."""
        target = self.root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return target

    def shutdown_kernels(self) -> None:
        """End every session's kernel (a test's notebook keeps its kernel after the page closes)."""
        for session in self._api("GET", "/api/sessions"):
            self._api("DELETE", f"/api/sessions/{session['id']}")

    def _api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(f"{self.url}{path}?token={self.token}", method=method)
        with urllib.request.urlopen(request, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()


# JavaScript run in the page. ``panel(path)``: the open notebook of that path.
_PANEL = """(path) => Array.from(window.jupyterapp.shell.widgets('main'))
                         .find(w => w.context && w.context.path === path && w.content)"""
# Every code cell of the notebook has run (a number in its prompt) and its kernel is idle.
_ALL_RUN = f"""(path) => {{
  const panel = ({_PANEL})(path);
  const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  return panel.content.widgets.filter(c => c.model.type === 'code').every(
    c => typeof c.model.executionCount === 'number'
         && !c.node.querySelector('.jp-InputPrompt').textContent.includes('*'));
}}"""
_KERNEL_IDLE = f"""(path) => {{
  const panel = window.jupyterapp && ({_PANEL})(path);
  const kernel = panel && panel.context.isReady && panel.sessionContext.session
                 && panel.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle';
}}"""


class LabPage:
    """A Chromium page on a ``JupyterLab``: requests to anything but the lab are aborted and listed in
    ``outside``; ``requests`` lists every URL the page asked for."""

    def __init__(self, lab: JupyterLab, context: Any) -> None:
        self.lab = lab
        self.context = context
        self.page = context.new_page()
        self.path = ""
        self.requests: list[str] = []
        self.outside: list[str] = []
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        host = urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open_notebook(self, name: str, *, timeout: float = 120.0) -> None:
        """Open ``name`` (a path in the lab's folder) in a fresh layout and wait until its kernel is idle."""
        self.path = name
        self.page.goto(f"{self.lab.url}/lab/tree/{name}?reset&token={self.lab.token}")
        self.page.wait_for_function(_KERNEL_IDLE, arg=name, timeout=timeout * 1000, polling=250)

    def run_all(self, *, timeout: float = 180.0) -> None:
        """Clear the outputs, run every cell (Run > Run All Cells) and wait until each has run and the kernel
        is idle."""
        self.command("notebook:clear-all-cell-outputs")
        self.command("notebook:run-all-cells")  # resolves when the last cell has run
        self.page.wait_for_function(_ALL_RUN, arg=self.path, timeout=timeout * 1000, polling=250)

    def command(self, command: str, args: dict[str, Any] | None = None) -> Any:
        """Execute a JupyterLab command (as a menu item or a shortcut would)."""
        return self.page.evaluate(
            "([c, a]) => window.jupyterapp.commands.execute(c, a)", [command, args or {}]
        )

    def outputs_with(self, mime: str) -> int:
        """How many outputs of the open notebook (its model, whatever is drawn) carry ``mime``."""
        return int(
            self.page.evaluate(
                f"""([path, mime]) => {{
                  const panel = ({_PANEL})(path);
                  let n = 0;
                  for (const cell of panel.content.widgets) {{
                    if (cell.model.type !== 'code') continue;
                    const outs = cell.model.outputs;
                    for (let i = 0; i < outs.length; i++) if (mime in outs.get(i).data) n++;
                  }}
                  return n;
                }}""",
                [self.path, mime],
            )
        )

    def errors(self) -> list[str]:
        """The text of every error output (a traceback) in the open notebook."""
        return (
            self.page.locator(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
            ).all_inner_texts()
            + self.page.locator(
                ".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']"
            ).all_inner_texts()
        )

    def screenshot(self, path: Path) -> Path:
        self.page.screenshot(path=str(path), full_page=False)
        return path


@contextlib.contextmanager
def chromium_browser(executable: str, proxy_port: int) -> Iterator[Any]:
    """Playwright's Chromium API on Debian's Chromium, every request through the recording proxy."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable,
            args=list(CHROMIUM_ARGS),
            proxy={"server": f"http://127.0.0.1:{proxy_port}", "bypass": "127.0.0.1,localhost"},
        )
        try:
            yield browser
        finally:
            browser.close()
