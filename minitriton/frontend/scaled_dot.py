"""``tl.dot_scaled``: the product of two blocks in microscaling (MX) formats.

Each operand is a block in one of Triton's formats, ``"e2m1"`` (fp4, two to a
``uint8``, the first element in the low four bits), ``"e4m3"``, ``"e5m2"``
(fp8, as ``uint8`` bits or the fp8 type), ``"bf16"`` or ``"fp16"``, with an
optional scale: one ``uint8`` ``e8m0`` exponent (the value ``2**(s - 127)``;
``0xFF`` is NaN) per 32 elements along K, of shape ``[M, K // 32]`` for the
left operand and ``[N, K // 32]`` for the right one (not transposed), or, for
NVFP4, one ``fp8e4nv`` scale (its value) per 16 elements, ``[M, K // 16]``.

As Triton does on GPUs without MX tensor cores (Hopper among them), the
frontend *decomposes* the product: each operand is decoded exactly to bf16
(fp16 if either format is ``"fp16"``), multiplied by its scale, and the two
meet in an ordinary ``tl.dot`` with an fp32 accumulator. Every step is an op
both backends already run, so there is no new IR op::

    a = upcast(lhs) * 2**(lhs_scale - 127)   # [M, K], bf16
    b = upcast(rhs) * 2**(rhs_scale - 127)   # [K, N], bf16
    result = tl.dot(a, b, acc)                # fp32

An fp4 operand packed along M or N instead of K (``lhs_k_pack=False``,
``rhs_k_pack=False``) is unpacked along that dimension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minitriton.diagnostics import error
from minitriton.frontend import semantic as S
from minitriton.frontend.builtins import IMPLS, _block, _dtype, _join, impl
from minitriton.frontend.semantic import Tensor
from minitriton.ir.types import BF16, F8E4NV, F8E5, F16, F32, U8, U32, ScalarType

if TYPE_CHECKING:
    from minitriton.frontend.lower import FunctionLowerer

#: Elements that share one scale, along K.
GROUP = 32
#: The formats and, for fp8, the type their bits decode as.
FORMATS = {"e2m1": None, "e4m3": F8E4NV, "e5m2": F8E5, "bf16": BF16, "fp16": F16}


@impl("dot_scaled")
def _dot_scaled(
    ctx: FunctionLowerer,
    lhs: Any,
    lhs_scale: Any,
    lhs_format: Any,
    rhs: Any,
    rhs_scale: Any,
    rhs_format: Any,
    acc: Any,
    fast_math: Any,
    lhs_k_pack: Any,
    rhs_k_pack: Any,
    out_dtype: Any,
) -> Tensor:
    fmt_a, fmt_b = _format(ctx, lhs_format, "lhs"), _format(ctx, rhs_format, "rhs")
    a, b = _block(ctx, lhs, "lhs"), _block(ctx, rhs, "rhs")
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise error(ctx.b.loc, f"tl.dot_scaled needs 2-D blocks, got {a.type} and {b.type}")
    for fmt, pack, which in ((fmt_a, lhs_k_pack, "lhs"), (fmt_b, rhs_k_pack, "rhs")):
        if not pack and fmt != "e2m1":
            raise error(
                ctx.b.loc, f"only e2m1 (fp4) operands may be packed along M or N; {which} is {fmt}"
            )
    compute = F16 if "fp16" in (fmt_a, fmt_b) else BF16
    # The left operand is [M, K]; the right one is decoded as its transpose, [N, K], so
    # that K is the last dimension of both, as the scales are laid out.
    a_up = _upcast(ctx, a, fmt_a, compute, k_last=bool(lhs_k_pack))
    b_up = _upcast(ctx, S.permute(ctx.b, b, (1, 0)), fmt_b, compute, k_last=bool(rhs_k_pack))
    if a_up.shape[1] != b_up.shape[1]:
        raise error(
            ctx.b.loc,
            f"tl.dot_scaled: lhs has K={a_up.shape[1]} and rhs K={b_up.shape[1]} "
            f"(e2m1 packs two values per byte)",
        )
    a_up = _scaled(ctx, a_up, lhs_scale, "lhs_scale")
    b_up = _scaled(ctx, b_up, rhs_scale, "rhs_scale")
    out = F32 if out_dtype is None else _dtype(ctx, out_dtype, "out_dtype")
    b_kn = S.permute(ctx.b, b_up, (1, 0))
    return IMPLS["dot"](ctx, a_up, b_kn, acc, "ieee", None, None, out)


def _format(ctx: FunctionLowerer, fmt: Any, which: str) -> str:
    if fmt not in FORMATS:
        names = ", ".join(f'"{f}"' for f in FORMATS)
        raise error(ctx.b.loc, f"tl.dot_scaled: {which}_format must be one of {names}, got {fmt!r}")
    return str(fmt)


def _upcast(ctx: FunctionLowerer, x: Tensor, fmt: str, compute: ScalarType, k_last: bool) -> Tensor:
    """``x`` decoded exactly to ``compute`` (bf16 or fp16), K last.

    ``k_last`` False: an e2m1 block packed along its first dimension (M or N).
    """
    if fmt == "e2m1":
        return _fp4(ctx, x, compute, k_last)
    elem = FORMATS[fmt]
    assert elem is not None
    if fmt in ("bf16", "fp16"):
        return S.cast(ctx.b, x, compute)
    bits = x if S.scalar_dtype(x) == elem else S.bitcast(ctx.b, _as_bytes(ctx, x, fmt), elem)
    return S.cast(ctx.b, S.cast(ctx.b, bits, F32), compute)  # exact: fp8 fits in bf16/fp16


def _as_bytes(ctx: FunctionLowerer, x: Tensor, fmt: str) -> Tensor:
    if S.scalar_dtype(x).bitwidth != 8:
        raise error(ctx.b.loc, f"tl.dot_scaled: {fmt} operands are 8-bit, got {x.type}")
    return S.bitcast(ctx.b, x, U8)


def _fp4(ctx: FunctionLowerer, x: Tensor, compute: ScalarType, k_last: bool) -> Tensor:
    """Two e2m1 values per byte, the first in the low bits, to ``compute``."""
    b = ctx.b
    packed = _as_bytes(ctx, x, "e2m1")
    low = _fp4_value(ctx, S.binary(b, "&", packed, 0xF), compute)
    high = _fp4_value(ctx, S.binary(b, ">>", packed, 4), compute)
    pairs = _join(ctx, low, high)  # [R, C, 2]: each byte's two values, low first
    rows, cols = packed.shape
    if k_last:
        return S.reshape(b, pairs, (rows, 2 * cols))
    # Packed along the first dimension: the pair's axis follows the rows.
    return S.reshape(b, S.permute(b, pairs, (0, 2, 1)), (2 * rows, cols))


def _fp4_value(ctx: FunctionLowerer, nibble: Tensor, compute: ScalarType) -> Tensor:
    """One e2m1 value (sign, 2 exponent bits, 1 mantissa bit) as fp32 bits, then ``compute``.

    Normal codes (exponent 1..3) are ``2**(e - 1) * (1 + m / 2)``; the subnormal
    code 1 is 0.5; 0 is zero. Built on the fp32 bit pattern, so every value is
    exact.
    """
    b = ctx.b
    code = S.cast(b, nibble, U32)
    e = S.binary(b, "&", S.binary(b, ">>", code, 1), 3)
    m = S.binary(b, "&", code, 1)
    normal = S.binary(b, "|", S.binary(b, "<<", S.binary(b, "+", e, 126), 23),
                      S.binary(b, "<<", m, 22))  # fmt: skip
    half = S.binary(b, "*", m, 0x3F000000)  # 0.5 for the code 0b001, else 0.0
    is_normal = S.compare(b, "!=", e, 0)
    magnitude = S.where(b, is_normal, normal, half)
    sign = S.binary(b, "<<", S.binary(b, "&", code, 8), 28)
    value = S.bitcast(b, S.binary(b, "|", magnitude, sign), F32)
    return S.cast(b, value, compute)


def _scaled(ctx: FunctionLowerer, x: Tensor, scale: Any, what: str) -> Tensor:
    """``x`` times its scales, one per group of 32 (or 16) elements along K.

    A ``uint8`` scale is an ``e8m0`` exponent, ``2**(s - 127)``, NaN for 0xFF (MX
    formats, groups of 32); an ``fp8e4nv`` scale is the e4m3 value itself (NVFP4:
    groups of 16). The group is K over the scale's columns, as Triton reads it.
    """
    if scale is None:
        return x
    b = ctx.b
    s = _block(ctx, scale, what)
    rows, k = x.shape
    group = 16 if S.scalar_dtype(s) == F8E4NV else GROUP
    if S.scalar_dtype(s).bitwidth != 8 or s.shape != (rows, k // group) or k % group:
        raise error(
            b.loc,
            f"tl.dot_scaled: {what} must be a uint8 block of shape [{rows}, {k // GROUP}] "
            f"(one e8m0 exponent per {GROUP} elements along K), or an fp8e4nv block of shape "
            f"[{rows}, {k // 16}] (one e4m3 scale per 16, NVFP4), got {s.type}",
        )
    if S.scalar_dtype(s) == F8E4NV:
        factor = S.cast(b, S.cast(b, s, F32), S.scalar_dtype(x))
        nan = None  # a NaN scale is its own value
    else:
        s = S.bitcast(b, s, U8)
        factor_bits = S.binary(b, "<<", S.cast(b, s, U32), 23)  # 2**(s - 127); 0 for s=0
        factor = S.cast(b, S.bitcast(b, factor_bits, F32), S.scalar_dtype(x))
        nan = _per_element(ctx, S.compare(b, "==", s, 0xFF), rows, k, group)
    scaled = S.binary(b, "*", x, _per_element(ctx, factor, rows, k, group))
    return scaled if nan is None else S.where(b, nan, float("nan"), scaled)


def _per_element(ctx: FunctionLowerer, per_group: Tensor, rows: int, k: int, group: int) -> Tensor:
    """``[rows, k // group]`` values repeated over their groups: ``[rows, k]``."""
    b = ctx.b
    wide = S.expand_dims(b, per_group, 2)
    return S.reshape(b, S.broadcast_to(b, wide, (rows, k // group, group)), (rows, k))
