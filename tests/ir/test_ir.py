"""Tests of the IR core: text round trip, locations and the verifier."""

from pathlib import Path

import pytest

from minitriton.diagnostics import CompileError
from minitriton.ir import parse_module, print_module, verify_module
from minitriton.ir.types import parse_type

SAMPLE = Path(__file__).parent / "goldens" / "sample.ir"


@pytest.mark.parametrize(
    "text", ["i1", "u64", "bf16", "ptr<f16>", "tensor<1x128xf32>", "tensor<64xptr<i8>>"]
)
def test_type_text_round_trips(text: str) -> None:
    assert str(parse_type(text)) == text


def test_sample_round_trips_and_verifies() -> None:
    text = SAMPLE.read_text()
    module = parse_module(text, str(SAMPLE))
    verify_module(module)
    assert print_module(module) == text


def test_locations_round_trip() -> None:
    module = parse_module(SAMPLE.read_text(), str(SAMPLE))
    with_locs = print_module(module, with_locs=True)
    assert f'loc("{SAMPLE}":3:3)' in with_locs
    assert print_module(parse_module(with_locs), with_locs=True) == with_locs
    assert print_module(parse_module(with_locs)) == SAMPLE.read_text()


def test_name_collisions_get_suffixes() -> None:
    text = SAMPLE.read_text()
    module = parse_module(text)
    ops = module.kernel.body.ops
    ops[0].result.name_hint = "x"  # collides with the later %x
    printed = print_module(module)
    assert "%x = tt.get_program_id" in printed
    assert "%x_1 = tt.load" in printed
    assert print_module(parse_module(printed)) == printed


def _diagnose(text: str) -> str:
    with pytest.raises(CompileError) as info:
        verify_module(parse_module(text, "bad.ir"))
    return str(info.value)


def test_verifier_rejects_type_mismatch() -> None:
    msg = _diagnose(
        "tt.func @k(%a: i32, %b: f32) {\n  %c = arith.add(%a, %b) : i32\n  tt.return()\n}\n"
    )
    assert msg.startswith("bad.ir:2:3: error: invalid IR in @k: 'arith.add' operand has type f32")


def test_verifier_rejects_non_power_of_two_block() -> None:
    msg = _diagnose(
        "tt.func @k() {\n"
        "  %r = tt.make_range() {end = 100, start = 0} : tensor<100xi32>\n"
        "  tt.return()\n"
        "}\n"
    )
    assert "bad.ir:2:3: error" in msg and "block dimension 100 is not a power of two" in msg


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("  %c = arith.constant() : i32", "'arith.constant' missing attribute 'value'"),
        ("  %p = tt.get_program_id(%n) {axis = 0} : i32", "expects 0 operands, got 1"),
        ('  tt.assert(%n, %n) {message = "m"}', "'tt.assert' expects 1 operands, got 2"),
        ("  %t = tt.trans(%n, %n) {order = [0]} : i32", "'tt.trans' expects 1 operands, got 2"),
        ("  %s = tt.sort(%n) {dim = 0} : i32", "'tt.sort' missing attribute 'descending'"),
    ],
)
def test_verifier_checks_the_declared_signature(line: str, problem: str) -> None:
    msg = _diagnose(f"tt.func @k(%n: i32) {{\n{line}\n  tt.return()\n}}\n")
    assert msg.startswith("bad.ir:2:3: error: invalid IR in @k: ") and problem in msg


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            "%e = tt.expand_dims(%r) {axis = 2} : tensor<8x1xi32>",
            "axis 2 is out of range for rank 1",
        ),
        ("%e = tt.expand_dims(%r) {axis = -1} : tensor<8x1xi32>", "axis -1 is out of range"),
        ("%s = tt.sort(%r) {descending = false, dim = 1} : tensor<8xi32>", "dim 1 is out of range"),
        ("%h = tt.histogram(%r) : tensor<4xi64>", "the result must be a 1-D block of i32"),
        ("%h = tt.histogram(%r, %r) : tensor<4xi32>", "mask must be a block of i1 shaped as x"),
        ("%f = tt.histogram(%n) : tensor<4xi32>", "x must be a 1-D block"),
    ],
)
def test_verifier_rejects_axes_out_of_range(line: str, problem: str) -> None:
    msg = _diagnose(
        "tt.func @k(%n: i32) {\n"
        "  %r = tt.make_range() {end = 8, start = 0} : tensor<8xi32>\n"
        f"  {line}\n"
        "  tt.return()\n"
        "}\n"
    )
    assert msg.startswith("bad.ir:3:3: error: invalid IR in @k: ") and problem in msg


def test_a_store_with_a_result_breaks_its_signature() -> None:
    from minitriton.ir.core import VerifyError
    from minitriton.ir.ops import StoreOp
    from minitriton.ir.types import I32, PointerType

    ptr = parse_module("tt.func @k(%p: ptr<i32>) {\n  tt.return()\n}\n").kernel.body.args[0]
    assert ptr.type == PointerType(I32)
    with pytest.raises(VerifyError, match="expects 0 results, got 1"):
        StoreOp([ptr, ptr], [I32]).verify()


def test_the_signature_is_declared_in_words() -> None:
    from minitriton.ir.ops import AtomicRMWOp, StoreOp, YieldOp

    assert AtomicRMWOp.signature() == "operands 2 or 3; attributes kind, sem"
    assert StoreOp.signature() == "operands 2 or 3; results 0"
    assert YieldOp.signature() == ""


def test_an_op_that_overrides_verify_fails_at_import() -> None:
    from minitriton.ir.core import Operation

    with pytest.raises(TypeError, match="override verify_ instead"):
        type("Careless", (Operation,), {"name": "x.careless", "verify": lambda self: None})


def test_parser_rejects_values_escaping_a_region() -> None:
    text = (
        "tt.func @k(%n: i32) {\n"
        '  %c = arith.cmp(%n, %n) {pred = "lt"} : i1\n'
        "  scf.if(%c) {\n"
        "  ^():\n"
        "    %x = arith.add(%n, %n) : i32\n"
        "    scf.yield()\n"
        "  } {\n"
        "  ^():\n"
        "    scf.yield()\n"
        "  }\n"
        "  %y = arith.neg(%x) : i32\n"
        "  tt.return()\n"
        "}\n"
    )
    with pytest.raises(CompileError) as info:
        parse_module(text, "esc.ir")
    assert str(info.value).startswith("esc.ir:11:18: error: use of undefined value %x")


def test_verifier_rejects_bad_yield() -> None:
    msg = _diagnose(
        "tt.func @k(%n: i32) {\n"
        '  %c = arith.cmp(%n, %n) {pred = "lt"} : i1\n'
        "  %r = scf.if(%c) : i32 {\n"
        "  ^():\n"
        "    scf.yield(%n)\n"
        "  } {\n"
        "  ^():\n"
        "    scf.yield(%c)\n"
        "  }\n"
        "  tt.return()\n"
        "}\n"
    )
    assert "bad.ir:3:3: error: invalid IR in @k: 'scf.if' yields (i1), expected (i32)" in msg


def test_parser_reports_undefined_values_with_location() -> None:
    with pytest.raises(CompileError) as info:
        parse_module("tt.func @k() {\n  %a = arith.neg(%zz) : i32\n  tt.return()\n}\n", "u.ir")
    assert str(info.value).splitlines()[0] == "u.ir:2:18: error: use of undefined value %zz"
    assert str(info.value).splitlines()[2] == "    " + " " * 17 + "^"
