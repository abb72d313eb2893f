"""A plain launch that runs long says so, on a terminal only."""

from __future__ import annotations

import io

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import budget


@triton.jit
def count_up(out_ptr, n):
    i = 0
    while i < n:
        i = i + 1
    tl.store(out_ptr, i)


class Terminal(io.StringIO):
    """Standard error as a terminal would be."""

    def isatty(self) -> bool:
        return True


def launch(n: int = 3000) -> np.ndarray:
    out = np.zeros(1, np.int32)
    count_up[(1,)](out, n, backend="emulator")
    return out


@pytest.fixture
def due_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "NOTICE_AFTER", 0.0)
    monkeypatch.setattr(budget, "NOTICE_EVERY", 3600.0)


@pytest.mark.usefixtures("due_at_once")
def test_a_long_launch_says_where_it_is_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert launch()[0] == 3000
    lines = terminal.getvalue().splitlines()
    assert len(lines) == 1  # the next one is an hour away
    assert lines[0].startswith(
        "minitriton: kernel 'count_up' still running after 0 s, program (0, 0, 0) at "
    )
    assert "test_long_run_notice.py:17" in lines[0] or "test_long_run_notice.py:18" in lines[0]
    assert "Ctrl-C stops it" in lines[0] and "MINITRITON_TIMEOUT=SECONDS" in lines[0]


@pytest.mark.usefixtures("due_at_once")
def test_no_notice_off_a_terminal_or_under_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    monkeypatch.setattr("sys.stderr", piped)
    launch()
    assert piped.getvalue() == ""
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    out = np.zeros(1, np.int32)
    count_up[(1,)](out, 3000, backend="emulator", timeout=60)  # a budget ends it anyway
    assert terminal.getvalue() == ""


def test_the_notice_repeats_every_thirty_seconds() -> None:
    now = [100.0]
    stream = io.StringIO()
    notice = budget.LongRunNotice("k", stream, clock=lambda: now[0])
    loc = None
    for t in (105.0, 110.0, 125.0, 140.0, 141.0, 170.0):
        now[0] = t
        notice.poll(loc, (1, 0, 0))
    times = [line.split("after ")[1].split(" s")[0] for line in stream.getvalue().splitlines()]
    assert times == ["10", "40", "70"]
