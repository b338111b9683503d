"""A real headless Chromium, driven over the DevTools protocol, for the HTML report's test.

Chromium comes from the machine (Debian's `chromium` package: `.ci/run` installs it where apt can); nothing is
downloaded. `page_facts` opens a file, waits for its load event and returns what the page shows: the title, the
section headings with the text rendered under each, the elements before the first one, every image with its
decoded size (0 x 0 when it failed to load), and the tables. `screenshot` saves a picture of a whole page.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

FACTS_JS = """(() => {
  const section = h => {  // the text the page shows between a heading and the next h2
    const parts = [];
    for (let e = h.nextElementSibling; e && e.tagName !== 'H2'; e = e.nextElementSibling) parts.push(e.innerText);
    return parts.join('\\n');
  };
  const lead = [];  // the elements before the first h2 (the header: title and bullet list)
  for (let e = document.body.firstElementChild; e && e.tagName !== 'H2'; e = e.nextElementSibling) lead.push(e.tagName);
  return JSON.stringify({
    title: document.title,
    h2: Array.from(document.querySelectorAll('h2')).map(h => ({id: h.id, text: h.textContent, body: section(h)})),
    lead: lead,
    images: Array.from(document.images).map(i => ({complete: i.complete, width: i.naturalWidth,
                                                   height: i.naturalHeight, alt: i.alt,
                                                   inline: i.src.startsWith('data:image/png;base64,')})),
    tables: document.querySelectorAll('table').length,
    external: Array.from(document.querySelectorAll('[src],[href]')).map(e => e.getAttribute('src') || e.getAttribute('href'))
                   .filter(u => !u.startsWith('data:') && !u.startsWith('#')),
    text: document.body.innerText.length
  });
})()"""


def chromium() -> str | None:
    return next((p for p in map(shutil.which, CANDIDATES) if p), None)


def page_facts(html: Path, timeout: float = 60.0) -> dict[str, Any]:
    with _devtools(timeout) as (ws, deadline):
        call = _caller(ws)
        _open(ws, call, html.resolve().as_uri(), deadline)
        res = call("Runtime.evaluate", expression=FACTS_JS, returnByValue=True)
        return json.loads(res["result"]["value"])


def screenshot(html: Path, png: Path, width: int = 1000, timeout: float = 60.0) -> tuple[int, int]:
    """A PNG of the whole page (`width` CSS pixels wide, as tall as the page), as the browser renders it; returns
    (width, height). For pictures in docs (docs/img/model-card.png)."""
    import base64

    with _devtools(timeout) as (ws, deadline):
        call = _caller(ws)
        call("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False)
        _open(ws, call, html.resolve().as_uri(), deadline)
        height = int(call("Runtime.evaluate", expression="document.documentElement.scrollHeight",
                          returnByValue=True)["result"]["value"])
        call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        shot = call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                    clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        png.write_bytes(base64.b64decode(shot["data"]))
        return width, height


@contextlib.contextmanager
def _devtools(timeout: float) -> Iterator[tuple[Any, float]]:
    """A headless Chromium with a fresh profile, and a DevTools websocket to its page; killed on exit."""
    import websocket  # websocket-client (the dev extra)

    exe = chromium()
    if exe is None:
        raise FileNotFoundError(f"no Chromium on PATH (tried {', '.join(CANDIDATES)})")
    # Chromium's helper processes (renderer, crashpad) may still write into the profile for a moment after the
    # browser is gone: the whole process group is killed, and a profile file left behind is not an error.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen([exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                 "--disable-extensions", f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                 "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + timeout
            while not port_file.is_file() or not port_file.read_text().strip():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{exe} did not start its DevTools endpoint (exit {proc.poll()})")
                time.sleep(0.1)
            port = int(port_file.read_text().split()[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=timeout) as r:
                target = next(t for t in json.load(r) if t.get("type") == "page")
            ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=timeout,
                                             suppress_origin=True)
            try:
                yield ws, deadline
            finally:
                ws.close()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _caller(ws: Any) -> Any:
    ids = iter(range(1, 1_000_000))

    def call(method: str, **params: Any) -> dict[str, Any]:
        n = next(ids)
        ws.send(json.dumps({"id": n, "method": method, "params": params}))
        while True:
            msg = json.loads(ws.recv())
            if msg.get("id") == n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    return call


def _open(ws: Any, call: Any, url: str, deadline: float) -> None:
    """Navigate to `url` and wait for its load event (every image decoded or failed)."""
    call("Page.enable")
    call("Page.navigate", url=url)
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not finish loading")
        msg = json.loads(ws.recv())
        if msg.get("method") == "Page.loadEventFired":
            break
