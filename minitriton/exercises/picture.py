"""Pictures of which output elements are wrong.

:func:`diff_picture` draws the output as a grid, one character per element
(or per group of elements when the output is large)::

         0       8       16      24
      0  ························████
     32  ························????

    · right   █ wrong value   ? never written (still NaN)   ▒ some wrong

A 1-D output of ``n`` elements is folded into rows of 32; the row label is
the index of the row's first element. :func:`save_png` draws the same mask
with matplotlib, when it is installed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

ROW_WIDTH_1D = 32
MAX_ROWS = 16
MAX_COLS = 64
RIGHT, WRONG, UNWRITTEN, MIXED = "·", "█", "?", "▒"
LEGEND = (
    f"{RIGHT} right   {WRONG} wrong value   {UNWRITTEN} never written (still NaN)"
    f"   {MIXED} some of the group wrong"
)


def wrong_mask(expected: np.ndarray, got: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """True where ``got`` is not within tolerance of ``expected`` (NaN matches NaN)."""
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        return expected != got
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    return ~np.isclose(g, e, atol=atol, rtol=rtol, equal_nan=True)


def unwritten_mask(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """True where the output still holds its NaN sentinel but a number was expected."""
    if got.dtype.kind != "f":
        return np.zeros(got.shape, dtype=bool)
    return np.isnan(got) & ~np.isnan(expected.astype(np.float64))


def as_grid(a: np.ndarray) -> tuple[np.ndarray, int]:
    """``a`` as a 2-D grid and the number of elements per grid row's label step.

    1-D arrays fold into rows of :data:`ROW_WIDTH_1D` (padded with False);
    higher ranks keep their last axis as columns.
    """
    if a.ndim == 0:
        return a.reshape(1, 1), 1
    if a.ndim == 1:
        width = min(ROW_WIDTH_1D, a.size) or 1
        rows = math.ceil(a.size / width)
        padded = np.zeros(rows * width, dtype=a.dtype)
        padded[: a.size] = a
        return padded.reshape(rows, width), width
    return a.reshape(-1, a.shape[-1]), 1


def _cells(
    wrong: np.ndarray, unwritten: np.ndarray, valid: np.ndarray
) -> tuple[list[str], int, int]:
    """Grid rows of characters, and the rows and columns each character stands for."""
    rows, cols = wrong.shape
    fy, fx = math.ceil(rows / MAX_ROWS), math.ceil(cols / MAX_COLS)
    lines = []
    for y in range(0, rows, fy):
        cells = [(slice(y, y + fy), slice(x, x + fx)) for x in range(0, cols, fx)]
        chars = [_cell(wrong[c], unwritten[c], valid[c]) for c in cells]
        lines.append("".join(chars).rstrip())
    return lines, fy, fx


def _cell(wrong: np.ndarray, unwritten: np.ndarray, valid: np.ndarray) -> str:
    if not valid.any():
        return " "  # padding after the last element of a 1-D output
    if not wrong.any():
        return RIGHT
    if wrong.all():
        return UNWRITTEN if unwritten.all() else WRONG
    return MIXED


def diff_picture(expected: np.ndarray, got: np.ndarray, atol: float, rtol: float) -> str:
    """The grid picture of wrong elements, a legend and the first few differences."""
    if expected.shape != got.shape:
        return f"the output has shape {got.shape}, expected {expected.shape}"
    wrong = wrong_mask(expected, got, atol, rtol)
    unwritten = unwritten_mask(expected, got) & wrong
    grid_wrong, step = as_grid(wrong)
    grid_unwritten, _ = as_grid(unwritten)
    grid_valid, _ = as_grid(np.ones(wrong.shape, dtype=bool))
    lines, fy, fx = _cells(grid_wrong, grid_unwritten, grid_valid)
    out = [_header(expected, fy, fx, step)]
    out += [_column_ruler(max(len(line) for line in lines), fx)]
    for i, line in enumerate(lines):
        out.append(f"{i * fy * step:>8}  {line}")
    out += ["", "    " + LEGEND, "", _summary(expected, got, wrong, unwritten)]
    return "\n".join(out)


def _header(expected: np.ndarray, fy: int, fx: int, step: int) -> str:
    shape = "x".join(str(n) for n in expected.shape) or "scalar"
    if expected.ndim == 1:
        layout = (
            f"{expected.size} elements in rows of {ROW_WIDTH_1D}; a row starts at the index shown"
        )
    else:
        layout = f"shape {shape}: rows down, the last axis across"
    group = f"; each character is a {fy}x{fx} group" if fy * fx > 1 else ""
    return f"    {layout}{group}"


def _column_ruler(width: int, fx: int) -> str:
    ruler = ""
    for x in range(0, width, 8):
        ruler += f"{x * fx:<8}"
    return "          " + ruler[: width + 6].rstrip()


def _summary(exp: np.ndarray, got: np.ndarray, wrong: np.ndarray, unwritten: np.ndarray) -> str:
    n_wrong = int(wrong.sum())
    pct = 100.0 * n_wrong / max(exp.size, 1)
    lines = [f"    {n_wrong} of {exp.size} elements wrong ({pct:.1f}%)"]
    if unwritten.any():
        lines[0] += f", {int(unwritten.sum())} of them never written"
    for flat in np.flatnonzero(wrong)[:4]:
        idx = np.unravel_index(flat, exp.shape)
        where = "[" + ", ".join(str(int(i)) for i in idx) + "]"
        lines.append(f"      at {where}: expected {_fmt(exp[idx])}, got {_fmt(got[idx])}")
    return "\n".join(lines)


def _fmt(x: object) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.6g}"
    return str(x)


def save_png(expected: np.ndarray, got: np.ndarray, atol: float, rtol: float, path: Path) -> bool:
    """Draw expected, got and the wrong-element mask into ``path``; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    wrong, _ = as_grid(wrong_mask(expected, got, atol, rtol))
    exp2, _ = as_grid(expected.astype(np.float64))
    got2, _ = as_grid(np.nan_to_num(got.astype(np.float64), nan=0.0))
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    for ax, data, title in zip(axes, (exp2, got2, wrong), ("expected", "got", "wrong")):
        ax.imshow(
            data,
            aspect="auto",
            interpolation="nearest",
            cmap="Reds" if title == "wrong" else "viridis",
        )
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
