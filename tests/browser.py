"""A real Chromium, driven over the DevTools protocol (no mocks, no downloaded browser).

Debian's ``chromium`` runs headless with remote debugging on a free port; we talk to it
with ``websocket-client`` (already in the lock). One ``Browser`` serves many pages: open
a URL, evaluate JavaScript in it (what a reader's browser computes: layout widths, page
heights, rendered text), take a full-page screenshot.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-quic", "--disable-sync",
         "--hide-scrollbars", "--mute-audio"]


class Browser:
    """A headless Chromium with one tab, closed by ``close()`` (or ``with``)."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        import websocket  # websocket-client

        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        self._profile = Path(tempfile.mkdtemp(prefix="rc-chromium-"))
        self.width, self.height = width, height
        self._proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-port=0",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + 180  # a loaded 2-core machine can be slow to start it
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self._proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=30).read())
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=180, suppress_origin=True)
        self._id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _send(self, method: str, params: dict[str, Any]) -> int:
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        return self._id

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        sent = self._send(method, params)
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def open(self, url: str, settle: float = 0.3) -> None:
        """Navigate and wait for the new document's load event (then let MathJax and layout settle).

        The event, not a poll of ``document.readyState``: a poll can run between the two
        documents ("Inspected target navigated or closed", seen in CI on a loaded machine)
        or read the previous page's "complete".
        """
        navigate = self._send("Page.navigate", {"url": url})
        replied = loaded = False
        while not (replied and loaded):  # the reply and the event may come in either order
            message = json.loads(self._ws.recv())
            if message.get("id") == navigate:
                failed = message.get("error") or message.get("result", {}).get("errorText")
                if failed:
                    raise RuntimeError(f"Page.navigate {url}: {failed}")
                replied = True
            elif message.get("method") == "Page.loadEventFired":
                loaded = True
        time.sleep(settle)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"javascript failed: {result['exceptionDetails'].get('text')}: {expression[:200]}")
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = True, max_height: int = 16000) -> int:
        """Save a PNG of the page (whole length up to ``max_height``); returns the page height."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        shot = min(height, max_height) if full_page else self.height
        # a viewport as tall as the page (not captureBeyondViewport, which shifts pages
        # whose tables scroll sideways), then back to the reader's window
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=shot, deviceScaleFactor=1,
                  mobile=False)
        time.sleep(0.2)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height, deviceScaleFactor=1,
                  mobile=False)
        Path(path).write_bytes(base64.b64decode(data))
        return height

    def close(self) -> None:
        try:
            if getattr(self, "_ws", None) is not None:
                self._ws.close()
        finally:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
