"""Tests for exercise c3: CSE merges only ops that compute the same value.

Two ops are interchangeable only with the same name, operands *in order*,
attributes (``0.0`` is not ``-0.0``) and result types, no regions (a
``tt.reduce`` is defined by its combiner) and no dependence on memory (a
load may see another value after an atomic or a store).
"""

from __future__ import annotations

import pytest

from minitriton.ir import parse_module, print_module
from minitriton.passes import run_pipeline

pytestmark = pytest.mark.exercise("c3-cse")


def cse(text: str) -> str:
    """``text`` after CSE (verified), printed."""
    return print_module(run_pipeline(parse_module(text), ["cse"], verify=True))


def test_cse_keeps_non_commutative_operands_in_order() -> None:
    out = cse(
        """tt.func @f(%x: i32, %y: i32) -> (i32, i32) {
  %a = arith.sub(%x, %y) : i32
  %b = arith.sub(%y, %x) : i32
  tt.return(%a, %b)
}
"""
    )
    assert out.count("arith.sub") == 2, "x - y is not y - x: operands keep their order"


def test_cse_keeps_reductions_with_different_regions_apart() -> None:
    out = cse(
        """tt.func @f(%x: tensor<16xf32>) -> (f32, f32) {
  %s = tt.reduce(%x) {axis = 0} : f32 {
  ^(%a: f32, %b: f32):
    %t = arith.add(%a, %b) : f32
    tt.reduce_return(%t)
  }
  %m = tt.reduce(%x) {axis = 0} : f32 {
  ^(%c: f32, %d: f32):
    %u = arith.max(%c, %d) : f32
    tt.reduce_return(%u)
  }
  tt.return(%s, %m)
}
"""
    )
    assert out.count("tt.reduce(") == 2, "tl.sum(x) and tl.max(x): a region op is not keyed"


def test_cse_keeps_loads_apart_across_an_atomic() -> None:
    out = cse(
        """tt.func @f(%p: ptr<i32>) -> (i32, i32) {
  %before = tt.load(%p) : i32
  %one = arith.constant() {value = 1} : i32
  %old = tt.atomic_rmw(%p, %one) {kind = "add", sem = "acq_rel"} : i32
  %after = tt.load(%p) : i32
  tt.return(%before, %after)
}
"""
    )
    assert out.count("tt.load") == 2, "the atomic changes *p: the second load sees a new value"


def test_cse_keeps_casts_to_different_types_apart() -> None:
    out = cse(
        """tt.func @f(%x: i32) -> (f32, i64) {
  %a = arith.cast(%x) : f32
  %b = arith.cast(%x) : i64
  tt.return(%a, %b)
}
"""
    )
    assert out.count("arith.cast") == 2, "the result type is part of the key"


def test_cse_tells_zero_from_negative_zero() -> None:
    out = cse(
        """tt.func @f() -> (f32, f32) {
  %a = arith.constant() {value = 0.0} : f32
  %b = arith.constant() {value = -0.0} : f32
  tt.return(%a, %b)
}
"""
    )
    assert out.count("arith.constant") == 2, "0.0 == -0.0 in Python, but 1 / -0.0 is -inf"


def test_cse_still_merges_identical_pure_ops() -> None:
    out = cse(
        """tt.func @f(%x: i32, %y: i32) -> (i32, i32) {
  %a = arith.mul(%x, %y) : i32
  %b = arith.mul(%x, %y) : i32
  tt.return(%a, %b)
}
"""
    )
    assert out.count("arith.mul") == 1
