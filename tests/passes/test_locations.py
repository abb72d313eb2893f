"""An op made by a rewrite takes the location of the op it replaces."""

from __future__ import annotations

from minitriton.ir import parse_module, print_module
from minitriton.passes import run_pipeline

SOURCE = """\
tt.func @k(%x: i32) -> (i32, tensor<16xi32>) {
  %a = arith.constant() {value = 6} : i32 loc("k.py":2:9)
  %b = arith.constant() {value = 7} : i32 loc("k.py":3:9)
  %c = arith.mul(%a, %b) : i32 loc("k.py":4:9)
  %s = tt.splat(%c) : tensor<16xi32> loc("k.py":5:9)
  tt.return(%c, %s) loc("k.py":6:5)
}
"""


def test_folded_constants_keep_the_location_of_the_replaced_op() -> None:
    module = run_pipeline(parse_module(SOURCE), ["canonicalize", "dce"], verify=True)
    text = print_module(module, with_locs=True)
    assert '%c = arith.constant() {value = 42} : i32 loc("k.py":4:9)' in text
    assert '%s = arith.constant() {value = 42} : tensor<16xi32> loc("k.py":5:9)' in text


DOT_ADD = """\
tt.func @k(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %d: tensor<16x16xf32>) \
-> (tensor<16x16xf32>) {
  %z = arith.constant() {value = 0.0} : tensor<16x16xf32> loc("k.py":2:9)
  %p = tt.dot(%a, %b, %z) {input_precision = "ieee"} : tensor<16x16xf32> loc("k.py":3:9)
  %s = arith.add(%p, %d) : tensor<16x16xf32> loc("k.py":4:9)
  tt.return(%s) loc("k.py":5:5)
}
"""


def test_a_dot_that_takes_in_an_add_keeps_the_dots_location() -> None:
    # Triton's combine rule does so: the add happens in the dot, whose line the GPU's
    # line table then shows (Triton's own line-info test looks for it)
    module = run_pipeline(parse_module(DOT_ADD), ["canonicalize", "dce"], verify=True)
    text = print_module(module, with_locs=True)
    fused = 'tt.dot(%a, %b, %d) {input_precision = "ieee"} : tensor<16x16xf32> loc("k.py":3:9)'
    assert fused in text
    assert "arith.add" not in text and 'k.py":4:9' not in text
