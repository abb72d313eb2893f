"""Tests for exercise c2: DCE keeps every op whose running can be observed.

An op may go only if nothing observes it: no store, atomic or call inside
it (at any depth of nested regions), and it is sure to terminate (a dead
``scf.while`` may loop forever, so it stays). Pure dead code still goes.
"""

from __future__ import annotations

import pytest

from minitriton.ir import parse_module, print_module
from minitriton.passes import run_pipeline

pytestmark = pytest.mark.exercise("c2-dce")


def dce(text: str) -> str:
    """``text`` after DCE (verified), printed."""
    return print_module(run_pipeline(parse_module(text), ["dce"], verify=True))


def test_dce_keeps_a_dead_scf_while() -> None:
    out = dce(
        """tt.func @spin(%n: i32) -> () {
  %zero = arith.constant() {value = 0} : i32
  %i = scf.while(%zero) : i32 {
  ^(%a: i32):
    %go = arith.cmp(%a, %n) {pred = "ne"} : i1
    scf.condition(%go, %a)
  } {
  ^(%b: i32):
    %two = arith.constant() {value = 2} : i32
    %next = arith.add(%b, %two) : i32
    scf.yield(%next)
  }
  tt.return()
}
"""
    )
    assert "scf.while" in out, "a while loop may never end (odd n): deleting it changes a hang"


def test_dce_keeps_a_store_nested_two_levels_deep() -> None:
    out = dce(
        """tt.func @nested(%p: ptr<f32>, %x: f32, %c: i1, %n: i32) -> () {
  %zero = arith.constant() {value = 0} : i32
  %one = arith.constant() {value = 1} : i32
  %r = scf.if(%c) : f32 {
  ^():
    %s = scf.for(%zero, %n, %one, %x) : f32 {
    ^(%i: i32, %acc: f32):
      tt.store(%p, %acc)
      scf.yield(%acc)
    }
    scf.yield(%s)
  } {
  ^():
    scf.yield(%x)
  }
  tt.return()
}
"""
    )
    assert "tt.store" in out, "the store sits two regions deep: look into nested regions too"


def test_dce_keeps_an_atomic_whose_result_is_unused() -> None:
    out = dce(
        """tt.func @count(%p: ptr<i32>) -> () {
  %one = arith.constant() {value = 1} : i32
  %old = tt.atomic_rmw(%p, %one) {kind = "add", sem = "acq_rel"} : i32
  tt.return()
}
"""
    )
    assert "tt.atomic_rmw" in out, "an atomic writes memory even when its result is unused"


def test_dce_keeps_a_call_whose_result_is_unused() -> None:
    out = dce(
        """tt.func @helper(%p: ptr<f32>, %x: f32) -> (f32) {
  tt.store(%p, %x)
  tt.return(%x)
}
tt.func @main(%p: ptr<f32>, %x: f32) -> () {
  %r = tt.call(%p, %x) {callee = "helper"} : f32
  tt.return()
}
"""
    )
    assert "tt.call" in out, "the callee may store: a call with an unused result stays"


def test_dce_still_removes_dead_pure_code_in_nested_regions() -> None:
    out = dce(
        """tt.func @pure(%x: f32, %c: i1, %n: i32) -> (f32) {
  %zero = arith.constant() {value = 0} : i32
  %one = arith.constant() {value = 1} : i32
  %r = scf.if(%c) : f32 {
  ^():
    %s = scf.for(%zero, %n, %one, %x) : f32 {
    ^(%i: i32, %acc: f32):
      %t = arith.mul(%acc, %x) : f32
      scf.yield(%t)
    }
    scf.yield(%s)
  } {
  ^():
    scf.yield(%x)
  }
  tt.return(%x)
}
"""
    )
    assert "scf.if" not in out and "scf.for" not in out and "arith.mul" not in out
