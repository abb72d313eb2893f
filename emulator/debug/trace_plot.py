"""Pictures of a :class:`~minitriton.emulator.debug.tracer.Trace` (needs matplotlib).

One figure per buffer, with a panel for loads and one for stores. Each cell
is one element, laid out as the host array: 2-D arrays keep their rows, a
1-D buffer is folded into rows of a power-of-two width, and its vertical axis
is labelled with the offset each row starts at.

* A cell's colour says which program accessed it last. Up to
  :data:`DISCRETE_PROGRAMS` programs get distinct colours, each named in the
  legend; more get one continuous scale with a colour bar that says
  "programs 0–96", so colours never repeat silently. Each program's region is
  labelled with its number where the label fits.
* A black dot marks an element that several programs accessed.
* Light grey: only masked-off lanes pointed there.
* Pale cells are past the end of the buffer; black ones past the end mark
  out-of-bounds attempts.

Every mark that appears in a panel has a legend entry, and labels that would
overlap are dropped. The drawing is vectorised (one image, one call for the
dots, one for the grid lines): a picture of 100,000 elements takes a fraction
of a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minitriton.emulator.debug.tracer import Trace
from minitriton.emulator.errors import format_pid

DISCRETE_PROGRAMS = 10  # up to this many programs: one legend entry and colour each

_EMPTY = (1.0, 1.0, 1.0, 1.0)
_MASKED = (0.80, 0.80, 0.80, 1.0)
_OOB = (0.0, 0.0, 0.0, 1.0)
_PAST_END = (0.98, 0.90, 0.90, 1.0)
_PANEL_IN = 6.0  # the largest side of one panel, in inches
_MAX_CELL_IN = 0.32  # cells of small buffers stop growing here
_FONT_PT = 7.0  # tick labels
_MIN_LABEL_PT = 5.0  # smaller program labels are dropped
_GRID_MIN_PT = 6.0  # draw lines between cells from this cell size on


@dataclass
class Grid:
    """How a buffer's elements are laid out as cells."""

    rows: int
    cols: int
    folded: bool  # a 1-D buffer folded into rows (its y axis shows offsets)
    cell_pt: float  # the side of one cell, in points


DPI = 100


@dataclass
class _Picture:
    """What one picture shows, worked out before anything is drawn."""

    trace: Trace
    buffer: str
    grid: Grid
    extra: int  # rows past the buffer that show out-of-bounds attempts
    panels: list[tuple[str, dict[str, np.ndarray]]]  # (kind, element_owners) per panel
    colours: np.ndarray
    marks: dict[str, Any]
    box: _Box

    def frame_key(self) -> tuple[Any, ...]:
        """Everything the frame (axes, ticks, colour bar, legend) depends on."""
        grid = self.grid
        # The panels' titles are content, so a load-only and a store-only
        # buffer of the same shape share one frame.
        return (grid.rows, grid.cols, grid.folded, self.extra, len(self.panels),
                len(self.colours), self.trace.grid, tuple(self.marks))  # fmt: skip


def _picture(trace: Trace, buffer: str) -> _Picture:
    info = trace.buffers[buffer]
    kinds = [k for k in ("load", "store") if any(a.buffer == buffer and a.kind in (k, "atomic")
                                                 for a in trace.accesses)]  # fmt: skip
    grid = layout(info.shape, info.size)
    colours = program_colours(max(1, math.prod(trace.grid)))
    panels = [(kind, trace.element_owners(buffer, kind)) for kind in kinds or ["load"]]
    extra = max(_extra_rows(data["oob"], info.size, grid) for _, data in panels)
    marks: dict[str, Any] = {}
    for _, data in panels:
        _note_marks(data, info.size, grid, extra, marks)
    _program_marks(colours, trace.grid, marks)
    box = _Box(grid, extra, len(panels), len(colours) > DISCRETE_PROGRAMS, len(marks))
    return _Picture(trace, buffer, grid, extra, panels, colours, marks, box)


def plot_buffer(trace: Trace, buffer: str) -> Any:
    """A matplotlib figure of how the programs of ``trace`` touched ``buffer``."""
    from matplotlib.figure import Figure

    picture = _picture(trace, buffer)
    fig = Figure(figsize=(picture.box.width, picture.box.height), dpi=DPI)
    axes = _draw_frame(fig, picture)
    _draw_content(fig, axes, picture, animated=False)
    return fig


class PictureWriter:
    """Writes pictures as PNG files, drawing a frame that several share only once.

    Placed by hand, a picture has a frame (axes, ticks, colour bar, legend)
    and a content (the cells, dots, labels and titles). The buffers of a
    launch often share a frame (vector add's three have the same size and
    programs), so the writer keeps the drawn frame and only draws the next
    content over it, as matplotlib's animations do (blitting).
    """

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._fig: Any = None
        self._axes: list[Any] = []
        self._background: Any = None

    def save(self, trace: Trace, buffer: str, path: Path) -> Path:
        """Write the picture of ``buffer`` to ``path``."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from PIL import Image

        picture = _picture(trace, buffer)
        if picture.frame_key() != self._key:
            self._key = picture.frame_key()
            self._fig = Figure(figsize=(picture.box.width, picture.box.height), dpi=DPI)
            FigureCanvasAgg(self._fig)
            self._axes = _draw_frame(self._fig, picture)
            self._fig.canvas.draw()
            self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        fig = self._fig
        fig.canvas.restore_region(self._background)
        artists = _draw_content(fig, self._axes, picture, animated=True)
        for artist in artists:
            fig.draw_artist(artist)
        # Fast compression: flat colours compress well anyway.
        Image.fromarray(np.asarray(fig.canvas.buffer_rgba())).save(path, compress_level=1)
        for artist in artists:
            if artist not in (fig._suptitle, *(ax.title for ax in self._axes)):
                artist.remove()
        return path


def _draw_frame(fig: Any, picture: _Picture) -> list[Any]:
    """The axes with their ticks and labels, the colour bar and the legend."""
    grid, box = picture.grid, picture.box
    axes = []
    for i in range(len(picture.panels)):
        ax = fig.add_axes(box.panel(i))
        ax.set_xlim(-0.5, grid.cols - 0.5)
        ax.set_ylim(grid.rows + picture.extra - 0.5, -0.5)
        _axes(ax, grid, grid.rows + picture.extra)
        axes.append(ax)
    if len(picture.colours) > DISCRETE_PROGRAMS:
        _colour_bar(fig, box, picture.colours, picture.trace.grid)
    if picture.marks:
        fig.legend(handles=list(picture.marks.values()), loc="lower center",
                   bbox_to_anchor=(0.5, 0.0), ncol=box.legend_cols, fontsize=8,
                   frameon=False)  # fmt: skip
    return axes


def _draw_content(fig: Any, axes: list[Any], picture: _Picture, animated: bool) -> list[Any]:
    """The cells, dots, program labels and titles; returns the artists drawn."""
    trace, buffer, grid = picture.trace, picture.buffer, picture.grid
    info = trace.buffers[buffer]
    artists: list[Any] = []
    for ax, (kind, data) in zip(axes, picture.panels):
        image = _image(data, info.size, grid, picture.extra, picture.colours)
        artists.append(ax.imshow(image, interpolation="nearest", aspect="auto"))
        artists += _several(ax, data, grid)
        artists += _region_labels(ax, data, grid, picture.colours)
        verb = "loads from" if kind == "load" else "stores to"
        artists.append(ax.set_title(f"{verb} {buffer}", fontsize=9))
    title = (
        f"{trace.kernel}: '{buffer}' ({info.size} x {info.dtype}), grid {format_pid(trace.grid)}"
    )
    artists.append(fig.suptitle(title, fontsize=10, y=1 - 0.08 / picture.box.height))
    for artist in artists:
        artist.set_animated(animated)
    return artists


class _Box:
    """Where each part of the figure goes, in inches (matplotlib wants fractions)."""

    LEFT, RIGHT, GAP, TOP, BOTTOM, BAR = 0.95, 0.2, 1.05, 0.62, 0.55, 1.0

    def __init__(self, grid: Grid, extra: int, panels: int, bar: bool, entries: int):
        self.panel_w = grid.cols * grid.cell_pt / 72
        self.panel_h = (grid.rows + extra) * grid.cell_pt / 72
        right = self.RIGHT + (0.9 if grid.folded else 0.0)  # room for band labels
        self.panels = panels
        self.width = self.LEFT + panels * self.panel_w + (panels - 1) * (self.GAP + right)
        self.width += right + (self.BAR if bar else 0.0)
        self.width = max(self.width, 4.6)
        # Legend entries are up to 2.6 inches wide: as many columns as fit.
        self.legend_cols = max(1, min(3, entries, int(self.width // 2.6)))
        self.bottom = self.BOTTOM + 0.2 * -(-entries // self.legend_cols) + 0.08
        self.height = self.bottom + self.panel_h + self.TOP
        self.right = right

    def panel(self, i: int) -> tuple[float, float, float, float]:
        """The ``i``-th panel's rectangle as figure fractions."""
        x = self.LEFT + i * (self.panel_w + self.GAP + self.right)
        return self._frac(x, self.bottom, self.panel_w, self.panel_h)

    def bar(self) -> tuple[float, float, float, float]:
        """The colour bar's rectangle as figure fractions."""
        x = self.LEFT + self.panels * self.panel_w + (self.panels - 1) * (self.GAP + self.right)
        x += self.right + 0.12
        height = max(self.panel_h, 1.2)
        return self._frac(x, self.bottom + (self.panel_h - height) / 2, 0.13, height)

    def _frac(self, x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
        return (x / self.width, y / self.height, w / self.width, h / self.height)


# ---------------------------------------------------------------- layout


def layout(shape: tuple[int, ...], size: int) -> Grid:
    """Cells for a buffer: a 2-D host array keeps its rows; 1-D folds into rows."""
    if len(shape) == 2:
        rows, cols, folded = int(shape[0]), int(shape[1]), False
    elif size <= 32:
        rows, cols, folded = 1, max(1, size), False
    else:
        # About twice as wide as tall, and a power of two so that rows line
        # up with power-of-two blocks.
        cols = min(1024, 1 << math.ceil(math.log2(math.sqrt(2 * size))))
        rows, folded = -(-size // cols), True
    cell_in = min(_MAX_CELL_IN, _PANEL_IN / cols, _PANEL_IN / rows)
    return Grid(rows, cols, folded, cell_in * 72)


def _extra_rows(oob: np.ndarray, size: int, grid: Grid) -> int:
    """Rows past the buffer that show out-of-bounds attempts (a few at most)."""
    past = oob[oob >= size]
    if past.size == 0:
        return 0
    return max(0, min(4, -(-(int(past.max()) + 1 - grid.rows * grid.cols) // grid.cols)))


def program_colours(programs: int) -> np.ndarray:
    """One RGBA row per linear program id: distinct hues, or one continuous scale."""
    import matplotlib

    if programs <= DISCRETE_PROGRAMS:
        return np.asarray(matplotlib.colormaps["tab10"](np.arange(programs)))
    colours = np.asarray(matplotlib.colormaps["viridis"](np.linspace(0.0, 1.0, programs)))
    # Neighbouring programs differ in lightness too, so their border shows.
    colours[1::2, :3] *= 0.78
    return colours


def _image(data: dict[str, np.ndarray], size: int, grid: Grid, extra: int,
           colours: np.ndarray) -> np.ndarray:  # fmt: skip
    cells = (grid.rows + extra) * grid.cols
    image = np.empty((cells, 4))
    image[:] = _EMPTY
    image[size:] = _PAST_END
    image[:size][data["masked"]] = _MASKED
    owner = data["owner"]
    touched = np.flatnonzero(owner >= 0)
    image[touched] = colours[np.minimum(owner[touched], len(colours) - 1)]
    oob = data["oob"]
    image[oob[(oob >= size) & (oob < cells)]] = _OOB
    return image.reshape(grid.rows + extra, grid.cols, 4)


# ---------------------------------------------------------------- axes and marks


def _axes(ax: Any, grid: Grid, n_rows: int) -> None:
    """Ticks that never crowd; axis labels that say what a cell's position means."""
    width_pt, height_pt = grid.cols * grid.cell_pt, n_rows * grid.cell_pt
    x_digits = len(str(grid.cols - 1))
    # A label needs its own width and some space (x), or two line heights (y).
    ax.set_xticks(_ticks(grid.cols - 1, int(width_pt // (x_digits * _FONT_PT * 0.7 + 10)), 8))
    y_ticks = _ticks(n_rows - 1, int(height_pt // (_FONT_PT * 2.4)), 10)
    ax.tick_params(which="both", length=2, labelsize=_FONT_PT)
    if grid.folded:
        ax.set_yticks(y_ticks, [str(t * grid.cols) for t in y_ticks])
        ax.set_ylabel("offset of the row's first element", fontsize=8)
        ax.set_xlabel("+ offset within the row", fontsize=8)
    elif grid.rows == 1:
        ax.set_yticks([])
        ax.set_xlabel("element offset", fontsize=8)
    else:
        ax.set_yticks(y_ticks)
        ax.set_ylabel("row", fontsize=8)
        ax.set_xlabel("column", fontsize=8)
    if grid.cell_pt >= _GRID_MIN_PT:  # lines between cells, where cells are large enough
        ax.vlines(np.arange(0.5, grid.cols - 1), -0.5, n_rows - 0.5, colors="white", linewidth=0.5)
        ax.hlines(np.arange(0.5, n_rows - 1), -0.5, grid.cols - 0.5, colors="white", linewidth=0.5)


def _ticks(last: int, room: int, most: int) -> list[int]:
    """At most ``room`` (and ``most``) round tick positions in ``0..last``."""
    from matplotlib.ticker import MaxNLocator

    locator = MaxNLocator(nbins=max(1, min(room, most)), integer=True, steps=[1, 2, 4, 5, 8, 10])
    return [int(t) for t in locator.tick_values(0, max(last, 1)) if 0 <= t <= last]


def _several(ax: Any, data: dict[str, np.ndarray], grid: Grid) -> list[Any]:
    several = np.flatnonzero(data["count"] > 1)
    if several.size == 0:
        return []
    size = max(1.0, 0.35 * grid.cell_pt)
    return list(ax.plot(several % grid.cols, several // grid.cols, "k.", markersize=size,
                        linestyle="none"))  # fmt: skip


def _note_marks(data: dict[str, np.ndarray], size: int, grid: Grid, extra: int,
                marks: dict[str, Any]) -> None:  # fmt: skip
    """Legend entries for the marks this panel shows."""
    if (data["count"] > 1).any():
        _mark(marks, "several", "accessed by several programs (colour: the last)", dot=True)
    if ((data["owner"] < 0) & ~data["masked"]).any():
        _mark(marks, "empty", "not accessed", colour=_EMPTY)
    if data["masked"].any():
        _mark(marks, "masked", "masked-off lanes only", colour=_MASKED)
    cells = (grid.rows + extra) * grid.cols
    oob = data["oob"]
    if ((oob >= size) & (oob < cells)).any() or (oob < 0).any():
        _mark(marks, "oob", "out-of-bounds attempt (past the end)", colour=_OOB)
    tried = np.unique(oob[(oob >= size) & (oob < cells)]).size
    if cells - size > tried:  # pale cells remain
        _mark(marks, "past", "past the end of the buffer", colour=_PAST_END)


def _mark(
    marks: dict[str, Any], key: str, label: str, colour: Any = None, dot: bool = False
) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if key in marks:
        return
    if dot:
        marks[key] = Line2D([], [], color="black", marker=".", linestyle="none", label=label)
    else:
        marks[key] = Patch(facecolor=colour, edgecolor="0.6", linewidth=0.5, label=label)


def _program_marks(colours: np.ndarray, grid: tuple[int, int, int], marks: dict[str, Any]) -> None:
    """A legend entry per program when there are few (more get a colour bar)."""
    from matplotlib.patches import Patch

    if len(colours) <= DISCRETE_PROGRAMS:
        for p in range(len(colours)):
            marks[f"p{p}"] = Patch(color=colours[p], label=f"program {format_pid(_pid(p, grid))}")


def _colour_bar(fig: Any, box: _Box, colours: np.ndarray, grid: tuple[int, int, int]) -> None:
    """The program scale: one colour per linear program id, labelled "programs 0–N"."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import ListedColormap, Normalize

    programs = len(colours)
    norm = Normalize(-0.5, programs - 0.5)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=ListedColormap(colours)),
                       cax=fig.add_axes(box.bar()))  # fmt: skip
    label = f"programs 0–{programs - 1}"
    gx, gy, gz = grid
    if gy > 1 or gz > 1:
        label += f" (linear id = x + {gx}·y" + (f" + {gx * gy}·z)" if gz > 1 else ")")
    bar.set_label(label, fontsize=8)
    bar.ax.tick_params(labelsize=_FONT_PT)
    bar.set_ticks(_ticks(programs - 1, 6, 6))
    bar.minorticks_off()


# ---------------------------------------------------------------- region labels


def _region_labels(
    ax: Any, data: dict[str, np.ndarray], grid: Grid, colours: np.ndarray
) -> list[Any]:
    """Write each program's number on its region where it fits, overlapping no other label.

    Where no region of a folded 1-D buffer has room, the programs label their
    bands of rows on the right-hand axis instead.
    """
    owner = data["owner"]
    touched = np.flatnonzero(owner >= 0)
    if touched.size == 0:
        return []
    order = touched[np.argsort(owner[touched], kind="stable")]
    ids, starts = np.unique(owner[order], return_index=True)
    rows, cols = order // grid.cols, order % grid.cols
    extent = [np.minimum.reduceat(rows, starts), np.maximum.reduceat(rows, starts),
              np.minimum.reduceat(cols, starts), np.maximum.reduceat(cols, starts)]  # fmt: skip
    counts = np.diff(np.append(starts, order.size))
    middle = order[starts + counts // 2]  # a cell the program owns
    centre_r, centre_c = (extent[0] + extent[1]) / 2, (extent[2] + extent[3]) / 2
    placed: list[tuple[float, float, float, float]] = []
    labels: list[Any] = []
    for i, pid in enumerate(ids.tolist()):
        text = str(pid)
        width_pt = (extent[3][i] - extent[2][i] + 1) * grid.cell_pt
        height_pt = (extent[1][i] - extent[0][i] + 1) * grid.cell_pt
        font = min(8.0, width_pt / (0.62 * len(text) + 0.3), height_pt / 1.3)
        if font < _MIN_LABEL_PT:
            continue
        # The centre of the program's extent when the program owns it, else its middle cell.
        x, y = float(centre_c[i]), float(centre_r[i])
        if owner[int(round(y)) * grid.cols + int(round(x))] != pid:
            x, y = int(middle[i]) % grid.cols, int(middle[i]) // grid.cols
        half_w = (0.62 * len(text) * font + 2) / 2 / grid.cell_pt
        half_h = (1.25 * font + 2) / 2 / grid.cell_pt
        box = (x - half_w, y - half_h, x + half_w, y + half_h)
        if any(_overlap(box, other) for other in placed):
            continue
        placed.append(box)
        r, g, b, _ = colours[min(pid, len(colours) - 1)]
        ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"
        labels.append(ax.text(x, y, text, ha="center", va="center", fontsize=font, color=ink,
                              gid="program-label"))  # fmt: skip
    if not placed and grid.folded:
        labels += _band_labels(ax, ids, (extent[0] + extent[1]) / 2, grid)
    return labels


def _band_labels(ax: Any, ids: np.ndarray, centres: np.ndarray, grid: Grid) -> list[Any]:
    """Labels right of the axes naming the program of each band of rows, never touching."""
    gap = 3.0 * _FONT_PT / grid.cell_pt  # rows between two labels
    shown: list[float] = []
    labels = []
    for pid, centre in zip(ids.tolist(), centres.tolist()):
        if shown and centre - shown[-1] < gap:
            continue
        shown.append(centre)
        # x in axes fractions, y in rows: just right of the panel, at the band's middle.
        labels.append(ax.text(1.02, centre, f"program {pid}", transform=ax.get_yaxis_transform(),
                              ha="left", va="center", fontsize=_FONT_PT, clip_on=False,
                              gid="band-label"))  # fmt: skip
    return labels


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _pid(linear: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    gx, gy, _ = grid
    return (linear % gx, (linear // gx) % gy, linear // (gx * gy))
