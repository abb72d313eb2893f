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
