"""Helpers for the emulator tests: parse, verify and launch IR text."""

from __future__ import annotations

import linecache
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from minitriton.emulator import launch
from minitriton.ir import Module, parse_module, verify_module


@lru_cache(maxsize=256)
def module(text: str, filename: str = "test.ir") -> Module:
    """Parse and verify IR text (cached: tests reuse kernels across examples)."""
    m = parse_module(text, filename)
    verify_module(m)
    return m


def run(text: str, grid: Sequence[int], args: Sequence[Any], **kwargs: Any) -> None:
    """Launch the kernel of ``text`` on ``grid``."""
    g = tuple(grid) + (1,) * (3 - len(grid))
    launch(module(text), g, args, **kwargs)  # type: ignore[arg-type]


def fake_source(filename: str, text: str) -> None:
    """Make ``filename`` readable to diagnostics without writing a file."""
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)


def unary_kernel(op: str, t: str, n: int, out_t: str | None = None, attrs: str = "") -> str:
    """``out[i] = op(a[i])`` over one block of ``n`` elements."""
    out_t = out_t or t
    return f"""tt.func @k(%a_ptr: ptr<{t}>, %o_ptr: ptr<{out_t}>) {{
  %r = tt.make_range() {{end = {n}, start = 0}} : tensor<{n}xi32>
  %ap = tt.splat(%a_ptr) : tensor<{n}xptr<{t}>>
  %aa = tt.addptr(%ap, %r) : tensor<{n}xptr<{t}>>
  %a = tt.load(%aa) : tensor<{n}x{t}>
  %y = {op}(%a){attrs} : tensor<{n}x{out_t}>
  %op = tt.splat(%o_ptr) : tensor<{n}xptr<{out_t}>>
  %oa = tt.addptr(%op, %r) : tensor<{n}xptr<{out_t}>>
  tt.store(%oa, %y)
  tt.return()
}}
"""


def binary_kernel(op: str, t: str, n: int, out_t: str | None = None, attrs: str = "") -> str:
    """``out[i] = op(a[i], b[i])`` over one block of ``n`` elements."""
    out_t = out_t or t
    return f"""tt.func @k(%a_ptr: ptr<{t}>, %b_ptr: ptr<{t}>, %o_ptr: ptr<{out_t}>) {{
  %r = tt.make_range() {{end = {n}, start = 0}} : tensor<{n}xi32>
  %ap = tt.splat(%a_ptr) : tensor<{n}xptr<{t}>>
  %aa = tt.addptr(%ap, %r) : tensor<{n}xptr<{t}>>
  %a = tt.load(%aa) : tensor<{n}x{t}>
  %bp = tt.splat(%b_ptr) : tensor<{n}xptr<{t}>>
  %ba = tt.addptr(%bp, %r) : tensor<{n}xptr<{t}>>
  %b = tt.load(%ba) : tensor<{n}x{t}>
  %y = {op}(%a, %b){attrs} : tensor<{n}x{out_t}>
  %op = tt.splat(%o_ptr) : tensor<{n}xptr<{out_t}>>
  %oa = tt.addptr(%op, %r) : tensor<{n}xptr<{out_t}>>
  tt.store(%oa, %y)
  tt.return()
}}
"""


def vector_add_ir(block: int, locs: tuple[str, str, str] = ("", "", "")) -> str:
    """Triton's vector add as IR, ``block`` elements per program.

    ``locs`` are optional ``loc(...)`` suffixes for the two loads and the
    store, so error tests can point diagnostics at a known kernel line.
    """
    x_loc, y_loc, store_loc = (f" {loc}" if loc else "" for loc in locs)
    t, p = f"tensor<{block}xi32>", f"tensor<{block}xptr<f32>>"
    params = "%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32"
    return f"""tt.func @add_kernel({params}) {{
  %pid = tt.get_program_id() {{axis = 0}} : i32
  %c = arith.constant() {{value = {block}}} : i32
  %start = arith.mul(%pid, %c) : i32
  %r = tt.make_range() {{end = {block}, start = 0}} : {t}
  %s = tt.splat(%start) : {t}
  %offsets = arith.add(%s, %r) : {t}
  %ns = tt.splat(%n) : {t}
  %mask = arith.cmp(%offsets, %ns) {{pred = "lt"}} : tensor<{block}xi1>
  %xp = tt.splat(%x_ptr) : {p}
  %xa = tt.addptr(%xp, %offsets) : {p}
  %x = tt.load(%xa, %mask) : tensor<{block}xf32>{x_loc}
  %yp = tt.splat(%y_ptr) : {p}
  %ya = tt.addptr(%yp, %offsets) : {p}
  %y = tt.load(%ya, %mask) : tensor<{block}xf32>{y_loc}
  %sum = arith.add(%x, %y) : tensor<{block}xf32>
  %op = tt.splat(%out_ptr) : {p}
  %oa = tt.addptr(%op, %offsets) : {p}
  tt.store(%oa, %sum, %mask){store_loc}
  tt.return()
}}
"""
