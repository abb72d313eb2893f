"""The ``math`` family: ``math.*`` ops, with fast PTX instructions, libdevice, or fallbacks.

Like Triton, fp32 ``exp`` uses ``ex2.approx.f32``, ``exp2`` uses
``ex2.approx.ftz.f32`` and ``rsqrt`` uses ``rsqrt.approx.ftz.f32`` (fast
approximations; ``.ftz`` flushes subnormal inputs and results to zero, which
saves the range fix-up that ptxas puts around the plain forms: a third of
attention's floating-point instructions); ``sqrt`` is IEEE ``sqrt.rn``
(Triton's ``tl.sqrt`` is ``sqrt.approx.ftz.f32``, its ``tl.sqrt_rn`` is ours).
The other functions (``log``, ``sin``, ``erf``, ``pow``, all of fp64 ...)
call NVIDIA's libdevice, as Triton does, when libdevice is found
(``MINITRITON_LIBDEVICE``, Triton's copy, or a CUDA toolkit). Without it,
fp32 falls back to the approximate PTX instructions (``lg2.approx``,
``sin.approx``, ``tanh.approx``; ``erf`` by a polynomial with 1.5e-7 error) and
fp64 is computed in fp32 — less accurate, and documented as such.
"""

from __future__ import annotations

import glob
import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.lltypes import F32_T, F64_T, Lowered, float_suffix, ll_type, scalar_of
from minitriton.backend.lower.arith import from_f32, to_f32
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    MATH_BINARY_OPS,
    MATH_UNARY_OPS,
    AbsOp,
    FmaOp,
    JnOp,
    PowOp,
    RoundedOp,
    YnOp,
)
from minitriton.ir.types import BF16, F32, F64, ScalarType

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


#: The one-operand libdevice-style ops (``math.exp`` ...) and the two-operand
#: ones, each with the name of its function (``exp``) in the tables below.
_UNARY_FUNCTIONS: dict[type[Operation], str] = {cls: fn for fn, cls in MATH_UNARY_OPS.items()}
_BINARY_FUNCTIONS: dict[type[Operation], str] = {
    PowOp: "pow",
    **{cls: fn for fn, cls in MATH_BINARY_OPS.items()},
}

_LIBDEVICE_F32 = {
    "log": "__nv_logf",
    "log2": "__nv_log2f",
    "sin": "__nv_sinf",
    "cos": "__nv_cosf",
    "erf": "__nv_erff",
    "tanh": "__nv_tanhf",
    "pow": "__nv_powf",
}
_LIBDEVICE_F64 = {
    "exp": "__nv_exp",
    "exp2": "__nv_exp2",
    "log": "__nv_log",
    "log2": "__nv_log2",
    "sin": "__nv_sin",
    "cos": "__nv_cos",
    "erf": "__nv_erf",
    "tanh": "__nv_tanh",
    "rsqrt": "__nv_rsqrt",
    "pow": "__nv_pow",
}
# libdevice's functions with no PTX instruction: __nv_NAMEf and __nv_NAME.
_LIBDEVICE_ONLY: tuple[str, ...] = (
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cbrt",
    "cosh",
    "sinh",
)
_LIBDEVICE_ONLY += ("tan", "erfc", "exp10", "expm1", "log10", "log1p", "lgamma", "tgamma")
_LIBDEVICE_ONLY += ("atan2", "hypot", "nextafter")
_LIBDEVICE_ONLY += ("erfinv", "erfcinv", "normcdf", "normcdfinv", "rcbrt", "logb")
_LIBDEVICE_ONLY += ("j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1", "erfcx")
_LIBDEVICE_ONLY += ("sinpi", "cospi", "remainder")
for _name in _LIBDEVICE_ONLY:
    _LIBDEVICE_F32[_name] = f"__nv_{_name}f"
    _LIBDEVICE_F64[_name] = f"__nv_{_name}"
# LLVM intrinsics with exact semantics (llvm.round rounds ties away from zero).
_INTRINSICS = ("sqrt", "floor", "ceil", "rint", "round", "trunc", "copysign")
_APPROX = {
    "exp2": "ex2.approx.f32",
    "log2": "lg2.approx.f32",
    "rsqrt": "rsqrt.approx.f32",
    "sin": "sin.approx.f32",
    "cos": "cos.approx.f32",
    "tanh": "tanh.approx.f32",
}
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@lru_cache(maxsize=1)
def find_libdevice() -> str | None:
    """Path of ``libdevice.10.bc``, or ``None`` if none is installed."""
    env = os.environ.get("MINITRITON_LIBDEVICE")
    if env:
        return env if os.path.isfile(env) else None
    candidates = []
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin:
        root = Path(spec.origin).parent
        candidates.append(str(root / "backends" / "nvidia" / "lib" / "libdevice.10.bc"))
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc"))
    candidates += sorted(glob.glob("/usr/local/cuda-*/nvvm/libdevice/libdevice.10.bc"))
    return next((c for c in candidates if os.path.isfile(c)), None)


class LibdeviceMissing(Exception):
    """A libdevice function was called and no ``libdevice.10.bc`` was found."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"libdevice.{name} needs NVIDIA's libdevice on the GPU, and none was found: "
            "install Triton or a CUDA toolkit, or set MINITRITON_LIBDEVICE to libdevice.10.bc"
        )


@lowering(*_UNARY_FUNCTIONS)
def lower_math_unary(ctx: LoweringContext, op: Operation) -> Lowered:
    """``math.exp`` ... element by element (:func:`math`)."""
    st = scalar_of(op.result.type)
    fn = _UNARY_FUNCTIONS[type(op)]
    return ctx.elementwise(op, lambda a: math(ctx, fn, st, a))


@lowering(*_BINARY_FUNCTIONS)
def lower_math_binary(ctx: LoweringContext, op: Operation) -> Lowered:
    """``math.pow``, ``math.atan2`` ... element by element (:func:`math`)."""
    st = scalar_of(op.result.type)
    fn = _BINARY_FUNCTIONS[type(op)]
    return ctx.elementwise(op, lambda a, b: math(ctx, fn, st, a, b))


@lowering(JnOp, YnOp)
def lower_bessel_n(ctx: LoweringContext, op: Operation) -> Lowered:
    """``math.jn`` / ``math.yn``: libdevice's ``__nv_jnf(int, float)`` ... (libdevice needed)."""
    st = scalar_of(op.result.type)
    name = "jn" if isinstance(op, JnOp) else "yn"
    if find_libdevice() is None:
        raise LibdeviceMissing(name)
    ty = F32_T if st == F32 else F64_T
    symbol = f"__nv_{name}{'f' if st == F32 else ''}"

    def call(n: ir.Value, x: ir.Value) -> ir.Value:
        ctx.uses_libdevice = True
        return ctx.call_function(symbol, ty, [n, x])

    return ctx.elementwise(op, call)


@lowering(AbsOp)
def lower_abs(ctx: LoweringContext, op: Operation) -> Lowered:
    """``math.abs`` on integers and floats (bf16 and fp8, held as integers: clear the sign bit)."""
    st = scalar_of(op.result.type)
    return ctx.elementwise(op, lambda a: _abs(ctx, st, a))


@lowering(FmaOp)
def lower_fma(ctx: LoweringContext, op: Operation) -> Lowered:
    """``math.fma``: ``a * b + c`` with one rounding."""
    st = scalar_of(op.result.type)
    return ctx.elementwise(op, lambda a, b, c: fma(ctx, st, a, b, c))


def _abs(ctx: LoweringContext, st: ScalarType, a: ir.Value) -> ir.Value:
    bld = ctx.b
    if st == BF16 or st.is_fp8():
        return bld.and_(a, ir.Constant(a.type, (1 << (st.bitwidth - 1)) - 1))
    if st.is_float():
        return ctx.call_intrinsic(f"llvm.fabs.{float_suffix(st)}", a.type, [a])
    if not st.is_signed():
        return a
    neg = bld.icmp_signed("<", a, ir.Constant(a.type, 0))
    return bld.select(neg, bld.neg(a), a)


def fma(ctx: LoweringContext, st: ScalarType, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """``a * b + c`` with one rounding."""
    if st == BF16:
        args = [to_f32(ctx, v, st) for v in (a, b, c)]
        return from_f32(ctx, fma(ctx, F32, *args), st)
    return ctx.call_intrinsic(f"llvm.fma.{float_suffix(st)}", a.type, [a, b, c])


def math(
    ctx: LoweringContext, name: str, st: ScalarType, x: ir.Value, y: ir.Value | None = None
) -> ir.Value:
    """``name`` (exp, log, sin, pow, ...) of ``x`` (and ``y`` for pow), of float type ``st``."""
    if st not in (F32, F64):
        args = [to_f32(ctx, v, st) for v in (x, y) if v is not None]
        return from_f32(ctx, math(ctx, name, F32, *args), st)
    simple = _simple_math(ctx, name, st, x)
    if simple is not None:
        return simple
    return _library_math(ctx, name, st, x, y)


def _simple_math(ctx: LoweringContext, name: str, st: ScalarType, x: ir.Value) -> ir.Value | None:
    ty = F32_T if st == F32 else F64_T
    suffix = "f32" if st == F32 else "f64"
    if name in _INTRINSICS and name != "copysign":
        return ctx.call_intrinsic(f"llvm.{name}.{suffix}", ty, [x])
    if st != F32:
        return None
    if name == "exp":
        scaled = ctx.b.fmul(x, ir.Constant(F32_T, LOG2E))
        return approx(ctx, "ex2.approx.f32", scaled)
    if name in ("exp2", "rsqrt"):  # as Triton: .ftz, so no subnormal fix-up around them,
        op = _APPROX[name]  # unless the launch says enable_reflect_ftz=False
        if ctx.kernel.attrs.get("reflect_ftz", True):
            op = op.replace(".approx.", ".approx.ftz.")
        return approx(ctx, op, x)
    return None


def _library_math(
    ctx: LoweringContext, name: str, st: ScalarType, x: ir.Value, y: ir.Value | None
) -> ir.Value:
    table = _LIBDEVICE_F32 if st == F32 else _LIBDEVICE_F64
    args = [v for v in (x, y) if v is not None]
    if name == "copysign":
        ty = F32_T if st == F32 else F64_T
        return ctx.call_intrinsic(f"llvm.copysign.{'f32' if st == F32 else 'f64'}", ty, args)
    if name in _LIBDEVICE_ONLY and find_libdevice() is None:
        raise LibdeviceMissing(name)
    if find_libdevice() is not None and name in table:
        ctx.uses_libdevice = True
        ty = F32_T if st == F32 else F64_T
        return ctx.call_function(table[name], ty, args)
    if st == F64:
        narrow = [ctx.b.fptrunc(v, F32_T) for v in args]
        return ctx.b.fpext(_fallback_f32(ctx, name, *narrow), F64_T)
    return _fallback_f32(ctx, name, *args)


def _fallback_f32(
    ctx: LoweringContext, name: str, x: ir.Value, y: ir.Value | None = None
) -> ir.Value:
    b = ctx.b
    if name in _APPROX:
        return approx(ctx, _APPROX[name], x)
    if name == "log":
        return b.fmul(approx(ctx, "lg2.approx.f32", x), ir.Constant(F32_T, LN2))
    if name == "pow":
        return approx(ctx, "ex2.approx.f32", b.fmul(y, approx(ctx, "lg2.approx.f32", x)))
    if name == "erf":
        return _erf_poly(ctx, x)
    raise NotImplementedError(name)


def _erf_poly(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7.
    b = ctx.b

    def c(v: float) -> ir.Constant:
        return ir.Constant(F32_T, v)

    ax = ctx.call_intrinsic("llvm.fabs.f32", F32_T, [x])
    t = b.fdiv(c(1.0), b.fadd(c(1.0), b.fmul(c(0.3275911), ax)))
    poly = c(1.061405429)
    for coef in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = b.fadd(b.fmul(poly, t), c(coef))
    poly = b.fmul(poly, t)
    e = approx(ctx, "ex2.approx.f32", b.fmul(b.fmul(ax, ax), c(-LOG2E)))
    r = b.fsub(c(1.0), b.fmul(poly, e))
    return ctx.call_intrinsic("llvm.copysign.f32", F32_T, [r, x])


def approx(ctx: LoweringContext, instr: str, x: ir.Value) -> ir.Value:
    """A one-operand fp32 PTX instruction through inline assembly."""
    fty = ir.FunctionType(F32_T, [F32_T])
    return ctx.b.call(ir.InlineAsm(fty, f"{instr} $0, $1;", "=f,f"), [x])


# ---------------------------------------------------------------- explicit rounding

#: IEEE rounding modes as PTX spells them.
_PTX_ROUNDING = {"rn": "rn", "rz": "rz", "rd": "rm", "ru": "rp"}
#: PTX's type names and inline-assembly constraint letters.
_PTX_TYPE = {"f32": ("f32", "f"), "f64": ("f64", "d"), "i32": ("s32", "r"), "u32": ("u32", "r"),
             "i64": ("s64", "l"), "u64": ("u64", "l")}  # fmt: skip


@lowering(RoundedOp)
def lower_rounded(ctx: LoweringContext, op: Operation) -> Lowered:
    """``math.rounded``: one PTX instruction with its rounding modifier (``add.rm.f32`` ...)."""
    src, dst = scalar_of(op.operands[0].type), scalar_of(op.result.type)
    instr = rounded_instruction(op.attrs["fn"], op.attrs["rounding"], src, dst)
    dst_c, src_c = _PTX_TYPE[dst.name][1], _PTX_TYPE[src.name][1]
    n = len(op.operands)
    operands = ", ".join(f"${i}" for i in range(n + 1))
    constraints = ",".join([f"={dst_c}", *[src_c] * n])
    fty = ir.FunctionType(ll_type(dst), [ll_type(src)] * n)
    asm = ir.InlineAsm(fty, f"{instr} {operands};", constraints)
    return ctx.elementwise(op, lambda *vs: ctx.b.call(asm, list(vs)))


def rounded_instruction(fn: str, rounding: str, src: ScalarType, dst: ScalarType) -> str:
    """The PTX instruction of ``math.rounded``: ``div.rz.f32``, ``cvt.rmi.s32.f32`` ..."""
    mode = _PTX_ROUNDING[rounding]
    if fn != "cvt":
        return f"{fn}.{mode}.{_PTX_TYPE[dst.name][0]}"
    if src.is_float() and dst.is_int():
        mode += "i"  # to an integral value, then to the integer type (saturating)
    return f"cvt.{mode}.{_PTX_TYPE[dst.name][0]}.{_PTX_TYPE[src.name][0]}"
