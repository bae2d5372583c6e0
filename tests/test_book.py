"""The book, as a reader sees it: built from the committed receipts, opened in Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, full_env

HTML = ROOT / "book" / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Requests Chromium makes on its own behalf (clock sync, component updates, account
# probe), whatever page is open. Anything else leaving the machine came from the book.
BROWSER_OWN = re.compile(r"^https?://(clients2\.google\.com/time/|update\.googleapis\.com/service/update2|"
                         r"accounts\.google\.com/ListAccounts)")


@pytest.fixture(scope="module")
def built_book() -> Path:
    proc = subprocess.run([str(ROOT / "reproduce.sh"), "--book-only"], cwd=ROOT, env=full_env({}, committed=True),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    index = Path(proc.stdout.strip().splitlines()[-1].rsplit(": ", 1)[-1])
    assert index == HTML / "index.html" and index.exists()
    return HTML


def _chromium(url: str, workdir: Path, *extra: str) -> tuple[str, list[str]]:
    netlog = workdir / "net.json"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", "--disable-quic", "--disable-sync",
           f"--user-data-dir={workdir / 'profile'}", "--virtual-time-budget=5000",
           f"--log-net-log={netlog}", *extra, url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    urls = re.findall(r'"url":"([^"]+)"', netlog.read_text()) if netlog.exists() else []
    return proc.stdout, urls


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                    reason="chromium is installed by .ci/run (apt-get install chromium)")
def test_book_renders_offline_with_headline_table(built_book: Path, tmp_path: Path) -> None:
    dom, urls = _chromium((built_book / "generated" / "headline.html").as_uri(), tmp_path, "--dump-dom")
    assert "Headline numbers" in dom
    assert re.search(r"<table[^>]*>.*tlc\.r0.*</table>", dom, re.S), "headline table missing"
    assert re.search(r"reproduced|differs|not run here", dom)
    fetched = sorted({u for u in urls if u.startswith(("http://", "https://")) and not BROWSER_OWN.match(u)})
    assert fetched == [], f"the book fetched from the network: {fetched}"


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                    reason="chromium is installed by .ci/run (apt-get install chromium)")
def test_math_renders_from_the_local_mathjax(built_book: Path, tmp_path: Path) -> None:
    dom, urls = _chromium((built_book / "contract.html").as_uri(), tmp_path, "--dump-dom")
    assert "mjx-container" in dom, "MathJax did not typeset the contract page"
    assert not [u for u in urls if u.startswith(("http://", "https://")) and not BROWSER_OWN.match(u)]
    shot = tmp_path / "contract.png"
    _chromium((built_book / "index.html").as_uri(), tmp_path / "shot", f"--screenshot={shot}", "--window-size=1280,900")
    assert shot.stat().st_size > 10_000


def test_receipts_are_linked_and_published_file_is_marked(built_book: Path) -> None:
    published = json.loads((ROOT / "data" / "published.json").read_text())
    assert "PUBLISHED" in published["_warning"]
    for page in ("matrix", "headline"):
        html = (built_book / "generated" / f"{page}.html").read_text()
        links = re.findall(r'href="(\.\./receipts/[^"]+)"', html)
        assert links, f"the {page} page links no receipt"
        for href in links:
            assert (built_book / "generated" / href).resolve().exists(), href
