"""The tracer: recorded accesses, the summary table, the PNGs and the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from minitriton.emulator import trace
from tests.debugger.buggy_kernels import softmax_no_mask
from tests.kernels.vector_add import add_kernel

REPO_ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def traced_add(n: int = 10, block: int = 4):  # noqa: ANN201 - a Trace
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    grid = (-(-n // block),)
    return trace(lambda: add_kernel[grid](x, x, out, n, BLOCK_SIZE=block, backend="emulator"))


def test_accesses_per_program() -> None:
    t = traced_add()
    assert t.kernel == "add_kernel" and t.grid == (3, 1, 1)
    assert [a.kind for a in t.accesses[:3]] == ["load", "load", "store"]  # program 0, in order
    first = t.accesses[0]
    assert first.pid == (0, 0, 0) and first.buffer == "x_ptr"
    np.testing.assert_array_equal(first.offsets, [0, 1, 2, 3])
    last = t.accesses[-1]
    assert last.pid == (2, 0, 0) and last.kind == "store"
    np.testing.assert_array_equal(last.offsets, [8, 9])
    np.testing.assert_array_equal(last.masked, [10, 11])
    # (pid, bytes loaded, bytes stored, enabled lanes, lanes)
    assert t.per_program() == [((0, 0, 0), 32, 16, 12, 12), ((1, 0, 0), 32, 16, 12, 12),
                               ((2, 0, 0), 16, 8, 6, 12)]  # fmt: skip


def test_summary_table() -> None:
    text = traced_add().summary()
    lines = text.splitlines()
    assert lines[0] == "trace of add_kernel, grid (3, 1, 1): 6 loads, 3 stores, 0 atomics"
    assert "(2, 0, 0)             16         8      50.0%" in text
    assert "total                 80        40      83.3%" in text
    site = next(line for line in lines if line.startswith("vector_add.py:26:5"))
    assert site.split() == [
        "vector_add.py:26:5",
        "store",
        "output_ptr",
        "3",
        "83.3%",
        "1.0",
        "(1.0)",
    ]


def test_coalescing_of_a_column_access() -> None:
    """Reading a column of a row-major matrix touches one segment per element."""
    from tests.debugger.debug_kernels import sum_rows_kernel

    x = np.ones((4, 64), np.float32)
    t = trace(lambda: sum_rows_kernel[(4,)](x, np.zeros(4, np.float32), 64, BLOCK=64,
                                           backend="emulator"))  # fmt: skip
    site = [s for s in t.per_site() if s["kind"] == "load"][0]
    assert site["segments"] / site["count"] == 2.0  # 256 bytes: two 128-byte segments, ideal
    assert site["ideal"] / site["count"] == 2.0


def test_out_of_bounds_attempt_is_kept(tmp_path: Path) -> None:
    x = np.ones((3, 5), np.float32)
    y = np.zeros_like(x)
    t = trace(lambda: softmax_no_mask[(3,)](y, x, 5, 5, BLOCK=8, backend="emulator"))
    assert t.error is not None and "out-of-bounds" in t.error.render()
    bad = t.accesses[-1]
    assert bad.pid == (2, 0, 0) and bad.kind == "load"
    np.testing.assert_array_equal(bad.oob, [15, 16, 17])
    owners = t.element_owners("in_ptr", "load")
    np.testing.assert_array_equal(owners["oob"], [15, 16, 17])
    assert owners["count"][5:10].tolist() == [2, 2, 2, 1, 1]  # program 0 read into row 1
    assert "the launch stopped with an error" in t.summary()
    paths = t.save_pngs(tmp_path)
    assert sorted(p.name for p in paths) == [
        "softmax_no_mask-in_ptr.png",
        "softmax_no_mask-out_ptr.png",
    ]


def test_pngs(tmp_path: Path) -> None:
    import matplotlib.image

    paths = traced_add().save_pngs(tmp_path)
    names = ["add_kernel-x_ptr.png", "add_kernel-y_ptr.png", "add_kernel-output_ptr.png"]
    assert [p.name for p in paths] == names
    for path in paths:
        assert path.read_bytes()[:8] == PNG_MAGIC
        height, width, _ = matplotlib.image.imread(path).shape
        assert width > 200 and height > 100


def test_cli(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    script = Path(__file__).with_name("debug_kernels.py")
    result = subprocess.run(
        [sys.executable, "-m", "minitriton", "trace", str(script), "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "trace of scale_kernel, grid (3, 1, 1): 3 loads, 3 stores, 0 atomics" in result.stdout
    assert (tmp_path / "scale_kernel-out_ptr.png").read_bytes()[:8] == PNG_MAGIC
