"""Pictures of which output elements are wrong.

:func:`diff_picture` draws the output as a grid, one character per element
(or per group of elements when the output is large)::

         0       8       16      24
      0  ························████
     32  ····················!!!!????????

    · right   █ wrong value   ! NaN or inf (a number was expected)
    ? never written   ▒ a group with several kinds

"Never written" comes from the emulator's write tracking (the grader passes
the mask of stored elements); without it (on a GPU) a NaN is called a NaN,
never a missing store. A 1-D output of ``n`` elements is folded into rows
of 32; the row label is the index of the row's first element.
:func:`save_png` draws the same classes with matplotlib, when it is
installed: expected and got share one colour scale.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

ROW_WIDTH_1D = 32
MAX_ROWS = 16
MAX_COLS = 64
RIGHT, WRONG, NONFINITE, UNWRITTEN, MIXED = "·", "█", "!", "?", "▒"
#: Element classes, in the order of :func:`classify`'s codes.
CLASSES = ("right", "wrong value", "NaN or inf (a number was expected)", "never written")
LEGEND = (
    f"{RIGHT} right   {WRONG} wrong value   {NONFINITE} NaN or inf (a number was expected)"
    f"   {UNWRITTEN} never written   {MIXED} a group with several kinds"
)
_CHARS = (RIGHT, WRONG, NONFINITE, UNWRITTEN)


def wrong_mask(expected: np.ndarray, got: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """True where ``got`` is not within tolerance of ``expected`` (NaN matches NaN)."""
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        return expected != got
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    return ~np.isclose(g, e, atol=atol, rtol=rtol, equal_nan=True)


def classify(
    expected: np.ndarray,
    got: np.ndarray,
    atol: float,
    rtol: float,
    written: np.ndarray | None = None,
) -> np.ndarray:
    """Per element: 0 right, 1 wrong value, 2 NaN or inf, 3 never written.

    ``written`` is the emulator's mask of stored elements; without it no
    element is called never written.
    """
    wrong = wrong_mask(expected, got, atol, rtol)
    codes = wrong.astype(np.int8)
    if got.dtype.kind == "f":
        codes[wrong & ~np.isfinite(got.astype(np.float64))] = 2
    if written is not None and written.shape == got.shape:
        codes[wrong & ~written] = 3
    return codes


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


def _cells(codes: np.ndarray, valid: np.ndarray) -> tuple[list[str], int, int]:
    """Grid rows of characters, and the rows and columns each character stands for."""
    rows, cols = codes.shape
    fy, fx = math.ceil(rows / MAX_ROWS), math.ceil(cols / MAX_COLS)
    lines = []
    for y in range(0, rows, fy):
        cells = [(slice(y, y + fy), slice(x, x + fx)) for x in range(0, cols, fx)]
        lines.append("".join(_cell(codes[c], valid[c]) for c in cells).rstrip())
    return lines, fy, fx


def _cell(codes: np.ndarray, valid: np.ndarray) -> str:
    if not valid.any():
        return " "  # padding after the last element of a 1-D output
    kinds = np.unique(codes[valid])
    if len(kinds) == 1:
        return _CHARS[int(kinds[0])]
    return MIXED


def diff_picture(
    expected: np.ndarray,
    got: np.ndarray,
    atol: float,
    rtol: float,
    written: np.ndarray | None = None,
) -> str:
    """The grid picture of wrong elements, a legend and the first few differences."""
    if expected.shape != got.shape:
        return f"the output has shape {got.shape}, expected {expected.shape}"
    codes = classify(expected, got, atol, rtol, written)
    grid, step = as_grid(codes)
    grid_valid, _ = as_grid(np.ones(codes.shape, dtype=bool))
    lines, fy, fx = _cells(grid, grid_valid)
    out = [_header(expected, fy, fx, step)]
    out += [_column_ruler(max(len(line) for line in lines), fx)]
    for i, line in enumerate(lines):
        out.append(f"{i * fy * step:>8}  {line}")
    out += ["", "    " + LEGEND, "", _summary(expected, got, codes)]
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


def _summary(exp: np.ndarray, got: np.ndarray, codes: np.ndarray) -> str:
    wrong = codes > 0
    n_wrong = int(wrong.sum())
    pct = 100.0 * n_wrong / max(exp.size, 1)
    lines = [f"    {n_wrong} of {exp.size} elements wrong ({pct:.1f}%)"]
    kinds = _kinds(got, codes)
    if kinds:
        lines[0] += ": " + ", ".join(kinds)
    for flat in np.flatnonzero(wrong)[:4]:
        idx = np.unravel_index(flat, exp.shape)
        where = "[" + ", ".join(str(int(i)) for i in idx) + "]"
        got_text = "never written" if codes[idx] == 3 else _fmt(got[idx])
        lines.append(f"      at {where}: expected {_fmt(exp[idx])}, got {got_text}")
    return "\n".join(lines)


def _kinds(got: np.ndarray, codes: np.ndarray) -> list[str]:
    """``["3 NaN", "2 inf", "5 never written"]``: the wrong elements that are not plain values."""
    kinds = []
    if got.dtype.kind == "f":
        g = got.astype(np.float64)
        for label, mask in (("NaN", np.isnan(g)), ("inf", np.isinf(g))):
            n = int((mask & (codes == 2)).sum())
            if n:
                kinds.append(f"{n} {label}")
    n = int((codes == 3).sum())
    if n:
        kinds.append(f"{n} never written")
    return kinds


def _fmt(x: object) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.6g}"
    return str(x)


def save_png(
    expected: np.ndarray,
    got: np.ndarray,
    atol: float,
    rtol: float,
    path: Path,
    written: np.ndarray | None = None,
) -> bool:
    """Draw expected, got and the element classes into ``path``; False without matplotlib.

    Expected and got share one colour scale (NaN and inf are left blank in
    "got" and marked in the third panel); the third panel has a fixed
    colour per class and a legend, so it is never blank.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch
    except ImportError:
        return False
    codes, _ = as_grid(classify(expected, got, atol, rtol, written))
    exp2, _ = as_grid(expected.astype(np.float64))
    got2, _ = as_grid(np.where(np.isfinite(got.astype(np.float64)), got, np.nan))
    finite = np.concatenate([exp2[np.isfinite(exp2)], got2[np.isfinite(got2)]])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    colours = ("#f0f0f0", "#d62728", "#9467bd", "#ff7f0e")
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, data, title in zip(axes[:2], (exp2, got2), ("expected", "got")):
        image = ax.imshow(data, aspect="auto", interpolation="nearest", vmin=lo, vmax=hi)
        ax.set_title(title)
    fig.colorbar(image, ax=list(axes[:2]))
    axes[2].imshow(
        codes, aspect="auto", interpolation="nearest", cmap=ListedColormap(colours), vmin=0, vmax=3
    )
    n_wrong = int((codes > 0).sum())
    axes[2].set_title(f"wrong: {n_wrong} of {expected.size}")
    handles = [Patch(color=c, label=label) for c, label in zip(colours, CLASSES)]
    axes[2].legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return True
