"""Elementwise cases of ``elementwise.ir``: IR snippets and their NumPy references.

``python tests/backend/kernels/elementwise_cases.py`` rewrites ``elementwise.ir``;
``tests/backend/test_lowering.py`` checks that the file is up to date, and
``tests/gpu/test_gpu_kernels.py`` runs it against :data:`FLOAT_CASES` and
:data:`INT_CASES`. The kernel reads ``x`` (256 f32 in (0.5, 2)) and ``i``
(256 i32 in [-1000, 1000]) and writes output ``k`` at ``out + k*256``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

N = 256
T = f"tensor<{N}x"


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def op(self, text: str, ty: str) -> str:
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {text} : {T}{ty}>")
        return name

    def const(self, value: object, ty: str) -> str:
        return self.op(f"arith.constant() {{value = {value}}}", ty)

    def cast(self, v: str, ty: str) -> str:
        return self.op(f"arith.cast({v})", ty)

    def bin(self, name: str, a: str, b: str, ty: str) -> str:
        return self.op(f"{name}({a}, {b})", ty)

    def un(self, name: str, a: str, ty: str) -> str:
        return self.op(f"{name}({a})", ty)


def _bf16(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def _unary(fn: str):
    return lambda b, x, i: b.un(f"math.{fn}", x, "f32")


def _cmp(b: _Builder, a: str, c: str, pred: str) -> str:
    return b.op(f'arith.cmp({a}, {c}) {{pred = "{pred}"}}', "i1")


def _select_case(b: _Builder, x: str) -> str:
    cond = _cmp(b, x, b.const(1.0, "f32"), "gt")
    return b.op(f"arith.select({cond}, {x}, {b.un('arith.neg', x, 'f32')})", "f32")


def _c_div(a: np.ndarray, d: int) -> np.ndarray:
    return (np.abs(a) // d * np.sign(a)).astype(np.int32)


# (name, build(builder, x, i) -> value name, reference(x, i) -> array, rtol)
FLOAT_CASES = [
    ("exp", _unary("exp"), np.exp, 2e-6),
    ("log", _unary("log"), np.log, 2e-6),
    ("sin", _unary("sin"), np.sin, 2e-6),
    ("cos", _unary("cos"), np.cos, 2e-6),
    ("sqrt", _unary("sqrt"), np.sqrt, 1e-7),
    ("rsqrt", _unary("rsqrt"), lambda x: 1 / np.sqrt(x), 2e-6),
    ("erf", _unary("erf"), None, 2e-6),
    ("tanh", _unary("tanh"), np.tanh, 2e-6),
    ("exp2", _unary("exp2"), np.exp2, 2e-6),
    ("log2", _unary("log2"), np.log2, 2e-6),
    (
        "floor3",
        lambda b, x, i: b.un(
            "math.floor", b.bin("arith.mul", x, b.const(3.0, "f32"), "f32"), "f32"
        ),
        lambda x: np.floor(x * np.float32(3)),
        0,
    ),
    (
        "ceil3",
        lambda b, x, i: b.un("math.ceil", b.bin("arith.mul", x, b.const(3.0, "f32"), "f32"), "f32"),
        lambda x: np.ceil(x * np.float32(3)),
        0,
    ),
    (
        "pow",
        lambda b, x, i: b.bin("math.pow", x, b.const(1.5, "f32"), "f32"),
        lambda x: x**1.5,
        2e-6,
    ),
    ("abs_neg", lambda b, x, i: b.un("math.abs", b.un("arith.neg", x, "f32"), "f32"), np.abs, 0),
    ("fma", lambda b, x, i: b.op(f"math.fma({x}, {x}, {x})", "f32"), lambda x: x * x + x, 1e-6),
    (
        "f16_roundtrip",
        lambda b, x, i: b.cast(b.cast(x, "f16"), "f32"),
        lambda x: x.astype(np.float16).astype(np.float32),
        0,
    ),
    ("bf16_roundtrip", lambda b, x, i: b.cast(b.cast(x, "bf16"), "f32"), _bf16, 0),
    (
        "bf16_mul",
        lambda b, x, i: b.cast(b.bin("arith.mul", (h := b.cast(x, "bf16")), h, "bf16"), "f32"),
        lambda x: _bf16(_bf16(x) * _bf16(x)),
        0,
    ),
    (
        "div_rn",
        lambda b, x, i: b.bin("math.div_rn", x, b.const(3.0, "f32"), "f32"),
        lambda x: x / np.float32(3),
        0,
    ),
    (
        "div",
        lambda b, x, i: b.bin("arith.div", x, b.const(3.0, "f32"), "f32"),
        lambda x: x / np.float32(3),
        3e-7,
    ),
    (
        "f64_exp",
        lambda b, x, i: b.cast(b.un("math.exp", b.cast(x, "f64"), "f64"), "f32"),
        lambda x: np.exp(x.astype(np.float64)),
        1e-7,
    ),
    (
        "rem",
        lambda b, x, i: b.bin(
            "arith.rem",
            b.bin("arith.mul", x, b.const(7.0, "f32"), "f32"),
            b.const(2.5, "f32"),
            "f32",
        ),
        lambda x: np.fmod(x * np.float32(7), np.float32(2.5)),
        1e-6,
    ),
    (
        "max",
        lambda b, x, i: b.bin("arith.max", x, b.const(1.0, "f32"), "f32"),
        lambda x: np.maximum(x, 1),
        0,
    ),
    (
        "min",
        lambda b, x, i: b.bin("arith.min", x, b.const(1.0, "f32"), "f32"),
        lambda x: np.minimum(x, 1),
        0,
    ),
    ("select", lambda b, x, i: _select_case(b, x), lambda x: np.where(x > 1, x, -x), 0),
    (
        "f2i2f",
        lambda b, x, i: b.cast(
            b.cast(b.bin("arith.mul", x, b.const(100.0, "f32"), "f32"), "i32"), "f32"
        ),
        lambda x: np.trunc(x * np.float32(100)),
        0,
    ),
]
INT_CASES = [
    (
        "div7",
        lambda b, x, i: b.bin("arith.div", i, b.const(7, "i32"), "i32"),
        lambda i: _c_div(i, 7),
    ),
    (
        "rem7",
        lambda b, x, i: b.bin("arith.rem", i, b.const(7, "i32"), "i32"),
        lambda i: np.fmod(i, 7),
    ),
    ("ashr", lambda b, x, i: b.bin("arith.shr", i, b.const(2, "i32"), "i32"), lambda i: i >> 2),
    (
        "lshr",
        lambda b, x, i: b.cast(
            b.bin("arith.shr", b.cast(i, "u32"), b.const(2, "u32"), "u32"), "i32"
        ),
        lambda i: (i.view(np.uint32) >> 2).view(np.int32),
    ),
    (
        "umulhi",
        lambda b, x, i: b.cast(
            b.bin("arith.umulhi", b.cast(i, "u32"), b.const(2654435769, "u32"), "u32"), "i32"
        ),
        lambda i: (
            ((i.view(np.uint32).astype(np.uint64) * 2654435769) >> 32)
            .astype(np.uint32)
            .view(np.int32)
        ),
    ),
    ("shl", lambda b, x, i: b.bin("arith.shl", i, b.const(3, "i32"), "i32"), lambda i: i << 3),
    ("xor", lambda b, x, i: b.bin("arith.xor", i, b.const(85, "i32"), "i32"), lambda i: i ^ 85),
    ("not", lambda b, x, i: b.un("arith.not", i, "i32"), lambda i: ~i),
    ("abs", lambda b, x, i: b.un("math.abs", i, "i32"), np.abs),
    ("neg", lambda b, x, i: b.un("arith.neg", i, "i32"), lambda i: -i),
    (
        "i8_wrap",
        lambda b, x, i: b.cast(b.cast(i, "i8"), "i32"),
        lambda i: i.astype(np.int8).astype(np.int32),
    ),
    (
        "u8_wrap",
        lambda b, x, i: b.cast(b.cast(i, "u8"), "i32"),
        lambda i: i.astype(np.uint8).astype(np.int32),
    ),
    (
        "u16_wrap",
        lambda b, x, i: b.cast(b.cast(i, "u16"), "i32"),
        lambda i: i.astype(np.uint16).astype(np.int32),
    ),
    (
        "i64_math",
        lambda b, x, i: b.cast(
            b.bin(
                "arith.shr",
                b.bin("arith.mul", (w := b.cast(i, "i64")), w, "i64"),
                b.const(4, "i64"),
                "i64",
            ),
            "i32",
        ),
        lambda i: ((i.astype(np.int64) * i.astype(np.int64)) >> 4).astype(np.int32),
    ),
    ("bitcast", lambda b, x, i: b.op(f"arith.bitcast({x})", "i32"), None),
    (
        "max0",
        lambda b, x, i: b.bin("arith.max", i, b.const(0, "i32"), "i32"),
        lambda i: np.maximum(i, 0),
    ),
    (
        "min0",
        lambda b, x, i: b.bin("arith.min", i, b.const(0, "i32"), "i32"),
        lambda i: np.minimum(i, 0),
    ),
    (
        "bool",
        lambda b, x, i: b.cast(_cmp(b, i, b.const(0, "i32"), "lt"), "i32"),
        lambda i: (i < 0).astype(np.int32),
    ),
    ("via_f16", lambda b, x, i: b.cast(b.cast(i, "f16"), "i32"), lambda i: i),
]


def build_ir() -> str:
    """The text of ``elementwise.ir``."""
    b = _Builder()
    r = b.op("tt.make_range() {end = 256, start = 0}", "i32")
    px = b.op("tt.splat(%x_ptr)", "ptr<f32>")
    ax = b.op(f"tt.addptr({px}, {r})", "ptr<f32>")
    x = b.op(f"tt.load({ax})", "f32")
    pi = b.op("tt.splat(%i_ptr)", "ptr<i32>")
    ai = b.op(f"tt.addptr({pi}, {r})", "ptr<i32>")
    i = b.op(f"tt.load({ai})", "i32")
    for out, cases, ty in (("%fo_ptr", FLOAT_CASES, "f32"), ("%io_ptr", INT_CASES, "i32")):
        for k, case in enumerate(cases):
            v = case[1](b, x, i)
            off = b.bin("arith.add", r, b.const(k * N, "i32"), "i32")
            p = b.op(f"tt.addptr({b.op(f'tt.splat({out})', f'ptr<{ty}>')}, {off})", f"ptr<{ty}>")
            b.lines.append(f"  tt.store({p}, {v})")
    head = (
        "// Generated by elementwise_cases.py: every elementwise op kind and cast.\n"
        "tt.func @elementwise(%x_ptr: ptr<f32> {divisibility = 16}, %i_ptr: ptr<i32> "
        "{divisibility = 16}, %fo_ptr: ptr<f32> {divisibility = 16}, %io_ptr: ptr<i32> "
        "{divisibility = 16}) {"
    )
    return "\n".join([head, *b.lines, "  tt.return()", "}"]) + "\n"


def erf_reference(x: np.ndarray) -> np.ndarray:
    """erf without SciPy."""
    from math import erf

    return np.array([erf(float(v)) for v in x], np.float64)


if __name__ == "__main__":
    Path(__file__).with_name("elementwise.ir").write_text(build_ir())
