"""Signatures: Triton's argument-type rules and AOT signature strings."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.frontend.source import ArgSpec
from minitriton.ir import types as t
from minitriton.signature import Param, kernel_params, parse_signature, spec_for_value

# ---------------------------------------------------------------------------
# Launch-time inference (Triton's mangle_type and specialization)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "type_", "div16", "one"),
    [
        (True, t.I1, False, False),
        (np.bool_(False), t.I1, False, False),
        (0, t.I32, True, False),
        (1, t.I32, False, True),
        (7, t.I32, False, False),
        (32, t.I32, True, False),
        (-16, t.I32, True, False),
        (2**31 - 1, t.I32, False, False),
        (-(2**31), t.I32, True, False),
        (2**31, t.I64, True, False),  # Triton has no u32 rule: above i32 is i64
        (2**32 - 1, t.I64, False, False),
        (-(2**31) - 1, t.I64, False, False),
        (2**63 - 1, t.I64, False, False),
        (2**63, t.U64, True, False),
        (2**64 - 1, t.U64, False, False),
        (1.5, t.F32, False, False),
        (np.float64(1.5), t.F64, False, False),
        (np.float16(1.5), t.F16, False, False),
        (np.int64(48), t.I64, True, False),
        (np.uint8(1), t.U8, False, True),
        (np.int16(3), t.I16, False, False),
    ],
)
def test_scalar_types_follow_triton(value: object, type_: t.ScalarType, div16: bool, one: bool):
    spec = spec_for_value("x", value)
    assert spec == ArgSpec("x", "scalar", type_, divisible_by_16=div16, equal_to_1=one)


def test_int_outside_64_bits_is_rejected():
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        spec_for_value("x", 2**64)


@pytest.mark.parametrize(
    ("dtype", "pointee"),
    [
        (np.float32, t.F32),
        (np.float16, t.F16),
        (np.float64, t.F64),
        (np.int8, t.I8),
        (np.int32, t.I32),
        (np.int64, t.I64),
        (np.uint16, t.U16),
        (np.bool_, t.I1),
    ],
)
def test_arrays_are_pointers_to_their_dtype(dtype: type, pointee: t.ScalarType):
    spec = spec_for_value("p", np.zeros(64, dtype=dtype))
    assert spec.kind == "pointer"
    assert spec.type == t.PointerType(pointee)


def test_pointer_alignment_is_specialized():
    base = np.zeros(64, dtype=np.float32)
    assert base.ctypes.data % 16 == 0  # NumPy aligns its allocations
    assert spec_for_value("p", base).divisible_by_16
    assert not spec_for_value("p", base[1:]).divisible_by_16
    assert spec_for_value("p", base[4:]).divisible_by_16


class FakeTensor:
    """Quacks like a torch tensor: ``dtype`` and ``data_ptr()``."""

    def __init__(self, dtype: str, address: int) -> None:
        self.dtype = dtype
        self.address = address

    def data_ptr(self) -> int:
        return self.address


def test_tensors_use_their_dtype_and_data_ptr():
    spec = spec_for_value("p", FakeTensor("torch.bfloat16", 4096))
    assert spec == ArgSpec("p", "pointer", t.PointerType(t.BF16), divisible_by_16=True)
    assert not spec_for_value("p", FakeTensor("torch.float32", 4100)).divisible_by_16


@pytest.mark.parametrize("value", [None, "relu", tl.float16, [1, 2]])
def test_other_values_are_constexprs(value: object):
    assert spec_for_value("a", value) == ArgSpec("a", "constexpr", value=value)


def test_constexpr_params_and_wrappers():
    assert spec_for_value("B", 1024, is_constexpr=True) == ArgSpec("B", "constexpr", value=1024)
    assert spec_for_value("B", tl.constexpr(64)) == ArgSpec("B", "constexpr", value=64)


def test_specialization_keys_differ_by_flags():
    keys = {spec_for_value("n", v).key() for v in (1, 16, 17, 18)}
    assert len(keys) == 3  # 17 and 18 share a key: neither 1 nor divisible by 16


# ---------------------------------------------------------------------------
# Kernel parameters
# ---------------------------------------------------------------------------


def _kernel(x_ptr, n, scale=2.0, BLOCK: tl.constexpr = 128, ACT: "tl.constexpr" = None):  # noqa: N803, UP037
    pass


def test_kernel_params_find_constexprs_and_defaults():
    params = kernel_params(_kernel)
    assert [p.name for p in params] == ["x_ptr", "n", "scale", "BLOCK", "ACT"]
    assert [p.is_constexpr for p in params] == [False, False, False, True, True]
    assert params[2].default == 2.0 and not params[0].has_default


# ---------------------------------------------------------------------------
# AOT signature strings
# ---------------------------------------------------------------------------

ADD = [Param("x", False), Param("y", False), Param("out", False), Param("n", False)]
ADD += [Param("BLOCK", True)]


def test_parse_vector_add_signature():
    specs = parse_signature("*fp32:16, *fp32:16, *fp32, i32, 1024", ADD)
    f32p = t.PointerType(t.F32)
    assert specs == [
        ArgSpec("x", "pointer", f32p, divisible_by_16=True),
        ArgSpec("y", "pointer", f32p, divisible_by_16=True),
        ArgSpec("out", "pointer", f32p),
        ArgSpec("n", "scalar", t.I32),
        ArgSpec("BLOCK", "constexpr", value=1024),
    ]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("*bf16", ArgSpec("a", "pointer", t.PointerType(t.BF16))),
        ("*i8", ArgSpec("a", "pointer", t.PointerType(t.I8))),
        ("*kfp16", ArgSpec("a", "pointer", t.PointerType(t.F16, const=True))),
        ("*f32", ArgSpec("a", "pointer", t.PointerType(t.F32))),
        ("i64:16", ArgSpec("a", "scalar", t.I64, divisible_by_16=True)),
        ("i32:1", ArgSpec("a", "scalar", t.I32, equal_to_1=True)),
        ("u32", ArgSpec("a", "scalar", t.U32)),
        ("fp16", ArgSpec("a", "scalar", t.F16)),
        ("i1", ArgSpec("a", "scalar", t.I1)),
        ("-3", ArgSpec("a", "constexpr", value=-3)),
        ("0.5", ArgSpec("a", "constexpr", value=0.5)),
        ("True", ArgSpec("a", "constexpr", value=True)),
        ("None", ArgSpec("a", "constexpr", value=None)),
        ("'relu'", ArgSpec("a", "constexpr", value="relu")),
    ],
)
def test_parse_entries(entry: str, expected: ArgSpec):
    assert parse_signature(entry, [Param("a", False)]) == [expected]


def test_quoted_strings_may_hold_commas_and_colons():
    specs = parse_signature("'a, b:16', 3", [Param("s", True), Param("k", True)])
    assert [s.value for s in specs] == ["a, b:16", 3]


def test_missing_entries_take_defaults_or_fill():
    params = kernel_params(_kernel)
    specs = parse_signature("*fp16, i32", params, fill={"BLOCK": 256})
    assert specs[2] == ArgSpec("scale", "scalar", t.F32)
    assert specs[3] == ArgSpec("BLOCK", "constexpr", value=256)
    assert specs[4] == ArgSpec("ACT", "constexpr", value=None)


def _diagnostic(signature: str, params: list[Param]) -> str:
    with pytest.raises(CompileError) as info:
        parse_signature(signature, params)
    return str(info.value)


def test_unknown_type_points_at_the_entry():
    text = _diagnostic("*fp32, *fp33, *fp32, i32, 1024", ADD)
    assert text.splitlines() == [
        "<signature>:1:8: error: unknown type 'fp33' (expected one of i1, i8, i16, i32, i64, "
        "u8, u16, u32, u64, fp16, bf16, fp32, fp64)",
        "    *fp32, *fp33, *fp32, i32, 1024",
        "           ^",
    ]


@pytest.mark.parametrize(
    ("signature", "message"),
    [
        ("*fp32, *fp32, *fp32, i32, 1024, 7", "1:33: error: too many entries"),
        ("*fp32, *fp32, *fp32, i32", "1:25: error: missing entry for parameter 'BLOCK'"),
        ("*fp32, *fp32, *fp32, i32, i32", "1:27: error: parameter 'BLOCK' is a tl.constexpr"),
        ("*fp32, *fp32, *fp32, i32:8, 1024", "1:22: error: unknown hint ':8'"),
        ("*fp32:1, *fp32, *fp32, i32, 1024", "1:1: error: hint ':1' applies to integers"),
        ("*fp32, *fp32, *fp32, fp32:16, 1024", "1:22: error: hint ':16' applies to integers"),
        ("*fp32, *fp32, *fp32, i32, 1024:16", "1:27: error: hint ':16' applies to types"),
        ("*fp32, , *fp32, i32, 1024", "1:8: error: empty signature entry"),
    ],
)
def test_bad_signatures(signature: str, message: str):
    assert message in _diagnostic(signature, ADD).splitlines()[0]


def test_host_descriptors_are_specialized_on_block_shape_and_flags():
    from minitriton.tools.tensor_descriptor import TensorDescriptor

    x = np.zeros((32, 48), dtype=np.float16)
    spec = spec_for_value("a_desc", TensorDescriptor.from_tensor(x, [16, 32]))
    assert (spec.kind, spec.type, spec.value) == (
        "descriptor", t.PointerType(t.F16), ((16, 32), "zero", (True, True, True)))  # fmt: skip
    other = spec_for_value("a_desc", TensorDescriptor.from_tensor(x[:30], [16, 32]))
    assert other.value[2] == (False, True, True) and other.key() != spec.key()
    names = [(f.name, str(f.type)) for f in spec.kernel_params()]
    assert names == [("a_desc", "ptr<f16>"), ("a_desc_shape0", "i32"),
                     ("a_desc_shape1", "i32"), ("a_desc_stride0", "i64")]  # fmt: skip


def test_parse_descriptor_entries():
    params = [Param("a_desc", False), Param("n", False)]
    spec, n = parse_signature("tensordesc<bf16[64, 128]>:16, i32", params)
    assert (spec.kind, spec.type, spec.value) == (
        "descriptor", t.PointerType(t.BF16), ((64, 128), "zero", (True, True, True)))  # fmt: skip
    assert n == ArgSpec("n", "scalar", t.I32)
    bad = _diagnostic("tensordesc<fp16[64 64]>, i32", params).splitlines()[0]
    assert "1:1: error: expected a descriptor such as 'tensordesc<fp16[64, 64]>'" in bad
