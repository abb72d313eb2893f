"""Pictures of a :class:`~minitriton.emulator.trace.Trace` (needs matplotlib).

One figure per buffer, with a panel for loads and one for stores. Each cell
is one element, laid out as the host array (2-D arrays keep their rows):

* coloured by the program that accessed it (the colour legend names them),
  with a black dot where several programs accessed the same element;
* light grey where only masked-off lanes pointed;
* black cells past the end of the buffer mark out-of-bounds attempts
  (pale cells are past the end but nobody tried them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minitriton.emulator.debug.tracer import Trace
from minitriton.emulator.errors import format_pid

_EMPTY = (1.0, 1.0, 1.0, 1.0)
_MASKED = (0.85, 0.85, 0.85, 1.0)
_OOB = (0.1, 0.1, 0.1, 1.0)
_PAST_END = (0.97, 0.93, 0.93, 1.0)
_ANNOTATE_LIMIT = 512  # write program numbers into cells up to this many cells


def plot_buffer(trace: Trace, buffer: str) -> Any:
    """A matplotlib figure of how the programs of ``trace`` touched ``buffer``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    info = trace.buffers[buffer]
    kinds = [k for k in ("load", "store") if any(a.buffer == buffer and a.kind in (k, "atomic")
                                                 for a in trace.accesses)]  # fmt: skip
    rows, cols = _layout(info.shape, info.size)
    size = _figsize(rows, cols, len(kinds))
    fig, axes = plt.subplots(1, len(kinds), figsize=size, squeeze=False, layout="constrained")
    used: set[int] = set()
    extra_rows = 0
    for ax, kind in zip(axes[0], kinds):
        data = trace.element_owners(buffer, kind)
        image, n_rows = _image(data, info.size, rows, cols)
        extra_rows = max(extra_rows, n_rows - rows)
        used.update(int(p) for p in np.unique(data["owner"]) if p >= 0)
        _draw(ax, image, data, rows, cols, n_rows)
        verb = "loads from" if kind == "load" else "stores to"
        ax.set_title(f"{verb} {buffer}", fontsize=10)
    handles = [Patch(color=_color(p), label=f"program {format_pid(_pid(p, trace.grid))}")
               for p in sorted(used)[:12]]  # fmt: skip
    handles.append(Patch(color=_MASKED, label="masked-off lanes only"))
    if any(a.buffer == buffer and a.oob.size for a in trace.accesses):
        handles.append(Patch(color=_OOB, label="out-of-bounds attempt"))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(4, len(handles)), fontsize=8)
    title = (
        f"{trace.kernel}: '{buffer}' ({info.size} x {info.dtype}), grid {format_pid(trace.grid)}"
    )
    fig.suptitle(title, fontsize=11)
    return fig


def _layout(shape: tuple[int, ...], size: int) -> tuple[int, int]:
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    cols = 32 if size > 64 else 16
    return max(1, -(-size // cols)), cols


def _figsize(rows: int, cols: int, panels: int) -> tuple[float, float]:
    cell = min(0.35, 9.0 / max(cols, 1))
    width = max(4.0, min(8.0, cols * cell)) * panels
    height = max(1.6, min(10.0, (rows + 1) * cell + 1.4))
    return width, height


def _image(data: dict[str, np.ndarray], size: int, rows: int, cols: int) -> tuple[np.ndarray, int]:
    """RGBA cells; rows past the buffer show out-of-bounds attempts (a few at most)."""
    oob = data["oob"]
    past = oob[oob >= size]
    extra = 0 if past.size == 0 else min(4, -(-(int(past.max()) + 1 - rows * cols) // cols))
    n_rows = rows + max(0, extra)
    image = np.ones((n_rows * cols, 4))
    image[:] = _EMPTY
    image[size:] = _PAST_END
    owner = data["owner"]
    image[:size][data["masked"]] = _MASKED
    touched = np.flatnonzero(owner >= 0)
    image[touched] = [_color(int(p)) for p in owner[touched]]
    shown = past[past < n_rows * cols]
    image[shown] = _OOB
    return image.reshape(n_rows, cols, 4), n_rows


def _draw(ax: Any, image: np.ndarray, data: dict[str, np.ndarray], rows: int, cols: int,
          n_rows: int) -> None:  # fmt: skip
    ax.imshow(image, interpolation="nearest", aspect="equal")
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1), minor=True)
    if rows * cols <= 4096:
        ax.grid(which="minor", color="white", linewidth=0.5)
    step = max(1, cols // 16)
    ax.set_xticks(np.arange(0, cols, step))
    ax.set_yticks(np.arange(0, n_rows, max(1, n_rows // 16)))
    ax.tick_params(which="both", length=0, labelsize=7)
    several = np.flatnonzero(data["count"] > 1)
    if several.size:
        ax.plot(several % cols, several // cols, "k.", markersize=3)
    if rows * cols > _ANNOTATE_LIMIT:
        return
    for i in np.flatnonzero(data["owner"] >= 0):
        ax.text(i % cols, i // cols, str(int(data["owner"][i])), ha="center", va="center",
                fontsize=6, color="black")  # fmt: skip
    for i in data["oob"][(data["oob"] >= 0) & (data["oob"] < n_rows * cols)]:
        ax.text(i % cols, i // cols, "x", ha="center", va="center", fontsize=7, color="white")


def _color(linear: int) -> tuple[float, float, float, float]:
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    return tuple(cmap((linear * 2) % 20 / 20 + (linear // 10) % 2 / 20))  # type: ignore[return-value]


def _pid(linear: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    gx, gy, _ = grid
    return (linear % gx, (linear // gx) % gy, linear // (gx * gy))
