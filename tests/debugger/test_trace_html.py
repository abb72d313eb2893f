"""The trace's interactive HTML view: its data, and the page in a real headless browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from minitriton.emulator import trace
from minitriton.emulator.debug.trace_html import html_view, trace_data
from minitriton.emulator.debug.tracer import Trace
from tests.kernels.vector_add import add_kernel

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def traced_add(n: int = 10, block: int = 4) -> Trace:
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    grid = (-(-n // block),)
    return trace(lambda: add_kernel[grid](x, x, out, n, BLOCK_SIZE=block, backend="emulator"))


def test_hover_data_names_program_lane_and_line() -> None:
    data = trace_data(traced_add())
    out = next(b for b in data["buffers"] if b["name"] == "output_ptr")
    (store,) = out["panels"]
    assert store["kind"] == "store"
    assert store["owner"] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert store["lane"] == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    site = data["sites"][store["site"][9]]
    assert site["where"] == "vector_add.py:26:5"
    assert site["source"] == "tl.store(output_ptr + offsets, output, mask=mask)"
    # Program 2's accesses, in order, for stepping: two loads and a store of 2 lanes each.
    steps = [a for a in data["accesses"] if a["p"] == 2]
    assert [(a["k"], a["b"], a["r"], a["m"]) for a in steps] == [
        ("load", "x_ptr", [8, 2], 2),
        ("load", "y_ptr", [8, 2], 2),
        ("store", "output_ptr", [8, 2], 2),
    ]


def test_the_page_is_self_contained() -> None:
    page = html_view(traced_add())
    assert not re.search(r"(src|href)=|https?://", page)  # nothing fetched: no server needed
    embedded = re.search(
        r'<script id="trace-data" type="application/json">(.*?)</script>', page, re.S
    )
    assert embedded is not None
    assert json.loads(embedded.group(1))["kernel"] == "add_kernel"


def _browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless browser: install Debian's 'chromium' package to run this test")


def _run_browser(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1100,900", "--virtual-time-budget=5000"]  # fmt: skip
    return subprocess.run([browser, *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_view_renders_in_a_headless_browser(tmp_path: Path) -> None:
    """The page's script runs (it writes its status line) and draws coloured cells."""
    import matplotlib.image

    browser = _browser()
    page = traced_add(200, 32).save_html(tmp_path / "trace.html")
    dom = _run_browser(browser, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    assert '<div id="status">ready: 3 panels, 21 accesses, programs 0–6</div>' in dom.stdout
    assert dom.stdout.count('class="cells"') == 3
    assert "access 1 of 3: load x_ptr, 32 lanes enabled" in dom.stdout
    shot = tmp_path / "shot.png"
    result = _run_browser(browser, f"--screenshot={shot}", page.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr
    pixels = matplotlib.image.imread(shot)[..., :3].reshape(-1, 3)
    colours = np.unique((pixels * 255).astype(np.uint8), axis=0)
    assert len(colours) > 20, "the page is blank or one colour"
    saturated = np.ptp(pixels, axis=1) > 0.25  # cells in colour, not only text and grey
    assert saturated.mean() > 0.02
