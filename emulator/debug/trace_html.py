"""An interactive view of a :class:`~minitriton.emulator.debug.tracer.Trace`: one HTML file.

The file is self-contained (its data, script and style inline; no server, no
network): open it in any browser. Each buffer gets a panel per kind of
access, drawn cell by cell on a canvas as in the PNGs. Hovering a cell shows
the program that accessed it last, the lane, the element offset and the
source line. Below, a program's accesses can be stepped through one by one:
the cells of the chosen access are outlined and its source line is shown.

From Python: ``trace.save_html("trace.html")``; from the shell,
``minitriton trace FILE.py --html``; in a notebook, :func:`html_view` returns
the view for ``IPython.display.HTML``.
"""

from __future__ import annotations

import html
import json
import linecache
from pathlib import Path
from typing import Any

import numpy as np

from minitriton.emulator.debug.tracer import Trace
from minitriton.emulator.errors import format_pid


def trace_data(trace: Trace) -> dict[str, Any]:
    """What the page shows, as JSON-ready lists."""
    sites: dict[tuple[str, int, int], int] = {}
    site_list: list[dict[str, Any]] = []
    accesses = []
    for a in trace.accesses:
        key = (a.loc.file, a.loc.line, a.loc.col)
        if key not in sites:
            sites[key] = len(site_list)
            source = linecache.getline(a.loc.file, a.loc.line).strip()
            where = f"{Path(a.loc.file).name}:{a.loc.line}:{a.loc.col}"
            site_list.append({"where": where, "source": source})
        accesses.append({"p": a.linear, "k": a.kind, "b": a.buffer, "s": sites[key],
                         "r": _runs(a.offsets), "m": int(a.masked.size),
                         "o": int(a.oob.size)})  # fmt: skip
    buffers = []
    for name, info in trace.buffers.items():
        panels = []
        for kind in ("load", "store"):
            if not any(a.buffer == name and a.kind in (kind, "atomic") for a in trace.accesses):
                continue
            panels.append({"kind": kind, **_cells(trace, name, kind)})
        if panels:
            cols = int(info.shape[1]) if len(info.shape) == 2 else _width(info.size)
            buffers.append({"name": name, "size": info.size, "dtype": info.dtype, "cols": cols,
                            "panels": panels})  # fmt: skip
    return {"kernel": trace.kernel, "grid": list(trace.grid), "programs": int(np.prod(trace.grid)),
            "buffers": buffers, "sites": site_list, "accesses": accesses}  # fmt: skip


def _width(size: int) -> int:
    """Row width of a 1-D buffer: a power of two, about twice as wide as tall."""
    if size <= 32:
        return max(1, size)
    return int(min(1024, 1 << int(np.ceil(np.log2(np.sqrt(2 * size))))))


def _runs(offsets: np.ndarray) -> list[int]:
    """Offsets as flat ``[start, length, start, length, ...]`` runs (compact for blocks)."""
    if offsets.size == 0:
        return []
    flat = np.sort(offsets.astype(np.int64))
    breaks = np.flatnonzero(np.diff(flat) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [flat.size]])
    return np.stack([flat[starts], ends - starts], axis=1).reshape(-1).tolist()


def _cells(trace: Trace, buffer: str, kind: str) -> dict[str, list[int]]:
    """Per element: last program (-1: none), its lane, its access site, several programs."""
    size = trace.buffers[buffer].size
    owner = np.full(size, -1, np.int64)
    lane = np.full(size, -1, np.int64)
    site = np.full(size, -1, np.int64)
    sites: dict[tuple[str, int, int], int] = {}
    for a in trace.accesses:
        key = (a.loc.file, a.loc.line, a.loc.col)
        sites.setdefault(key, len(sites))
        if a.buffer != buffer or a.kind not in (kind, "atomic"):
            continue
        owner[a.offsets] = a.linear
        lane[a.offsets] = a.lane_ids if a.lane_ids is not None else -1
        site[a.offsets] = sites[key]
    owners = trace.element_owners(buffer, kind)
    return {"owner": owner.tolist(), "lane": lane.tolist(), "site": site.tolist(),
            "several": np.flatnonzero(owners["count"] > 1).tolist(),
            "masked": np.flatnonzero(owners["masked"]).tolist()}  # fmt: skip


def html_view(trace: Trace) -> str:
    """The whole page, as one string."""
    data = json.dumps(trace_data(trace), separators=(",", ":"))
    title = html.escape(f"trace of {trace.kernel}, grid {format_pid(trace.grid)}")
    # "</" cannot end the script early: JSON escapes it as "<\/".
    return _PAGE.replace("{{title}}", title).replace("{{data}}", data.replace("</", "<\\/"))


def save_html(trace: Trace, path: str | Path) -> Path:
    """Write :func:`html_view` to ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html_view(trace), encoding="utf-8")
    return out


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{title}}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 16px; color: #222; }
.panel { display: inline-block; vertical-align: top; margin: 0 24px 16px 0; }
.panel h3 { font-size: 13px; margin: 4px 0; }
canvas { border: 1px solid #999; image-rendering: pixelated; }
#tip { position: fixed; pointer-events: none; background: #fffbe6; border: 1px solid #aaa;
       padding: 4px 6px; font: 12px monospace; white-space: pre; display: none; }
#stepper { margin-top: 12px; padding: 8px; border-top: 1px solid #ccc; }
#access { font: 13px monospace; white-space: pre; margin-top: 6px; }
.key span { display: inline-block; width: 12px; height: 12px; border: 1px solid #999;
            vertical-align: middle; margin: 0 4px 0 12px; }
</style></head><body>
<h2>{{title}}</h2>
<div class="key">colour: the program that accessed the element last
<span style="background:#fff"></span>not accessed
<span style="background:#ccc"></span>masked-off lanes only
<span style="background:#000"></span>dot: several programs
<span style="background:none;border:2px solid #e00"></span>the access being stepped</div>
<div id="views"></div>
<div id="stepper">program <select id="program"></select>
<button id="prev">&#9664; previous access</button> <button id="next">next access &#9654;</button>
<div id="access"></div></div>
<div id="tip"></div>
<div id="status"></div>
<script id="trace-data" type="application/json">{{data}}</script>
<script>
"use strict";
const T = JSON.parse(document.getElementById("trace-data").textContent);
const views = document.getElementById("views"), tip = document.getElementById("tip");
const golden = 137.508;
function colour(p) {  // distinct hues that never repeat silently: the tooltip names the program
  return `hsl(${(p * golden) % 360}, 65%, ${p % 2 ? 48 : 62}%)`;
}
function pidText(p) {
  const gx = T.grid[0], gy = T.grid[1];
  return `(${p % gx}, ${Math.floor(p / gx) % gy}, ${Math.floor(p / (gx * gy))})`;
}
const panels = [];
for (const b of T.buffers) {
  const rows = Math.ceil(b.size / b.cols);
  const cell = Math.max(1, Math.min(18, Math.floor(640 / b.cols), Math.floor(480 / rows)));
  for (const p of b.panels) {
    const div = document.createElement("div");
    div.className = "panel";
    const verb = p.kind === "load" ? "loads from" : "stores to";
    div.innerHTML = `<h3>${verb} ${b.name} (${b.size} x ${b.dtype}, rows of ${b.cols})</h3>`;
    const canvas = document.createElement("canvas");
    canvas.width = b.cols * cell; canvas.height = rows * cell;
    canvas.className = "cells";
    div.appendChild(canvas); views.appendChild(div);
    const panel = {b, p, canvas, cell, rows, ctx: canvas.getContext("2d")};
    panels.push(panel); draw(panel, null);
    canvas.addEventListener("mousemove", e => hover(panel, e));
    canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  }
}
function fill(panel, i) {
  const cols = panel.b.cols, cell = panel.cell;
  panel.ctx.fillRect((i % cols) * cell, Math.floor(i / cols) * cell, cell, cell);
}
function draw(panel, access) {
  const {b, p, ctx, cell} = panel;
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, panel.canvas.width, panel.canvas.height);
  ctx.fillStyle = "#ccc";
  for (const i of p.masked) fill(panel, i);
  for (let i = 0; i < b.size; i++) {
    const o = p.owner[i];
    if (o < 0) continue;
    ctx.fillStyle = colour(o);
    fill(panel, i);
  }
  if (cell >= 4) {
    ctx.fillStyle = "#000";
    for (const i of p.several) {
      ctx.beginPath();
      ctx.arc((i % b.cols + 0.5) * cell, (Math.floor(i / b.cols) + 0.5) * cell, cell / 5, 0, 7);
      ctx.fill();
    }
  }
  ctx.fillStyle = "#f2e4e4";  // past the end of the buffer
  for (let i = b.size; i < panel.rows * b.cols; i++) fill(panel, i);
  if (!access || access.b !== b.name || !(access.k === p.kind || access.k === "atomic")) return;
  ctx.strokeStyle = "#e00"; ctx.lineWidth = Math.max(1, cell / 6);
  const r = access.r;
  for (let j = 0; j < r.length; j += 2)
    for (let i = r[j]; i < r[j] + r[j + 1]; i++)
      ctx.strokeRect((i % b.cols) * cell + 0.5, Math.floor(i / b.cols) * cell + 0.5,
                     cell - 1, cell - 1);
}
function hover(panel, e) {
  const {b, p, cell} = panel, box = panel.canvas.getBoundingClientRect();
  const col = Math.floor((e.clientX - box.left) / cell);
  const row = Math.floor((e.clientY - box.top) / cell);
  const i = row * b.cols + col;
  if (col < 0 || col >= b.cols || i < 0) { tip.style.display = "none"; return; }
  let text = `${b.name}[${i}]`;
  if (i >= b.size) text += "\\npast the end of the buffer";
  else if (p.owner[i] < 0)
    text += p.masked.includes(i) ? "\\nmasked-off lanes only" : "\\nnot accessed";
  else {
    const s = T.sites[p.site[i]];
    text += `\\nprogram ${pidText(p.owner[i])} (linear ${p.owner[i]}), lane ${p.lane[i]}` +
            `\\noffset ${i}\\n${s.where}  ${s.source}`;
    if (p.several.includes(i)) text += "\\n(several programs accessed it: this is the last)";
  }
  tip.textContent = text; tip.style.display = "block";
  tip.style.left = (e.clientX + 14) + "px"; tip.style.top = (e.clientY + 14) + "px";
}
// Stepping through one program's accesses.
const select = document.getElementById("program"), info = document.getElementById("access");
const byProgram = new Map();
T.accesses.forEach((a, n) => {
  if (!byProgram.has(a.p)) byProgram.set(a.p, []);
  byProgram.get(a.p).push(n);
});
for (const p of byProgram.keys()) select.add(new Option(`${pidText(p)}`, p));
let step = 0;
function show() {
  const list = byProgram.get(Number(select.value)) || [];
  step = Math.max(0, Math.min(step, list.length - 1));
  const a = T.accesses[list[step]];
  for (const panel of panels) draw(panel, a);
  if (!a) { info.textContent = "no accesses"; return; }
  const s = T.sites[a.s];
  let lanes = 0; for (let j = 1; j < a.r.length; j += 2) lanes += a.r[j];
  info.textContent = `access ${step + 1} of ${list.length}: ${a.k} ${a.b}, ${lanes} lanes enabled` +
    (a.m ? `, ${a.m} masked off` : "") + (a.o ? `, ${a.o} out of bounds` : "") +
    `\\n${s.where}  ${s.source}`;
}
select.addEventListener("change", () => { step = 0; show(); });
document.getElementById("prev").addEventListener("click", () => { step--; show(); });
document.getElementById("next").addEventListener("click", () => { step++; show(); });
show();
document.getElementById("status").textContent =
  `ready: ${panels.length} panels, ${T.accesses.length} accesses, programs 0–${T.programs - 1}`;
</script></body></html>
"""
