"""Reductions and scans written the way TorchInductor writes them.

The helpers below follow ``torch/_inductor/runtime/triton_helpers.py``
(``max2``, ``online_softmax_reduce``, ``welford_combine``, ``any``, ``prod``,
``maximum_with_index``...), and the kernels follow the code Inductor
generates: a 2-D block ``[XBLOCK, RBLOCK]`` of rows by reduced columns,
masks ``xmask & rmask``, reductions over axis 1 whose result is put back as
a column with ``[:, None]``, persistent reductions (the whole row in one
block) and looped ones (an accumulator carried over ``RBLOCK`` chunks).
"""

import minitriton as triton
import minitriton.language as tl
from minitriton.language.extra.cuda import libdevice

# ---------------------------------------------------------------- helpers


@triton.jit
def promote_to_tensor(x):
    # Addition promotes to tensor for us
    return x + tl.zeros((1,), tl.int1)


@triton.jit
def is_floating(x):
    return promote_to_tensor(x).dtype.is_floating()


@triton.jit
def _prod_accumulate(a, b):
    return a * b


@triton.jit
def prod(input, axis):
    return tl.reduce(input, axis, _prod_accumulate)


@triton.jit
def minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _maximum_reduce(a, b):
    value = maximum(a, b)
    if is_floating(a):
        value = tl.where(a == b, b, value)
    return value


@triton.jit
def min2(a, dim):
    return tl.reduce(a, dim, minimum)


@triton.jit
def max2(a, dim):
    return tl.reduce(a, dim, maximum)


@triton.jit
def max2_strict(a, dim):
    return tl.reduce(a, dim, _maximum_reduce)


@triton.jit
def maximum_with_index(a_value, a_index, b_value, b_index):
    mask = a_value > b_value
    equal = a_value == b_value
    if is_floating(a_value):
        a_isnan = a_value != a_value
        b_isnan = b_value != b_value
        mask |= a_isnan & (not b_isnan)
        # Consider NaNs as equal
        equal |= a_isnan & b_isnan

    # Prefer lowest index if values are equal
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)


@triton.jit
def max_with_index(value, index, dim):
    return tl.reduce((value, index), dim, maximum_with_index)


@triton.jit
def exp(x, use_fast_math: tl.constexpr):
    if use_fast_math:
        return tl.math.exp(x)
    else:
        return libdevice.exp(x)


@triton.jit
def online_softmax_reduce(
    lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr, strict_signed_zero: tl.constexpr
):
    if strict_signed_zero:  # noqa: SIM108 - Inductor's code, as it is written
        out_max = max2_strict(lhs_max, dim)
    else:
        out_max = max2(lhs_max, dim)
    out_max_keepdim = tl.expand_dims(out_max, dim)
    delta = tl.where(out_max_keepdim == float("-inf"), 0, lhs_max - out_max_keepdim)
    out_sum = tl.sum(lhs_sum * exp(delta, use_fast_math), dim)
    return out_max, out_sum


@triton.jit
def online_softmax_combine(
    lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr, strict_signed_zero: tl.constexpr
):
    if strict_signed_zero:  # noqa: SIM108 - Inductor's code, as it is written
        out_max = _maximum_reduce(lhs_max, rhs_max)
    else:
        out_max = maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, exp(lhs_max - out_max, use_fast_math))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, exp(rhs_max - out_max, use_fast_math))
    out_sum = lhs_sum * lhs_scale + rhs_scale
    return out_max, out_sum


@triton.jit
def welford_reduce(value, mean, m2, weight, first_iteration):
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = tl.where(mean_1 == mean_2, 0.0, mean_2 - mean_1)
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


@triton.jit
def welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, welford_combine)


@triton.jit
def _any_combine(a, b):
    return a | b


@triton.jit
def any(a, dim):
    return tl.reduce(a, dim, _any_combine)


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def _mul_combine(a, b):
    return a * b


# ---------------------------------------------------------------- kernels


@triton.jit
def amax_kernel(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    """Persistent ``amax`` over the rows of a ``[xnumel, rnumel]`` matrix."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    r1 = rindex
    x0 = xindex
    tmp0 = tl.load(
        in_ptr0 + (r1 + rnumel * x0), rmask & xmask, eviction_policy="evict_last", other=0.0
    )
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
    tmp3 = tl.where(rmask & xmask, tmp1, float("-inf"))
    tmp4 = max2(tmp3, 1)[:, None]
    tl.store(out_ptr0 + x0, tmp4, xmask)


@triton.jit
def softmax_persistent_kernel(
    in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr
):
    """Inductor's persistent softmax: max, then exp and sum, then divide."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    r1 = rindex
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
    tmp3 = tl.where(rmask & xmask, tmp1, float("-inf"))
    tmp4 = triton_max = max2(tmp3, 1)[:, None]
    tmp5 = tmp0 - tmp4
    tmp6 = tl.exp(tmp5)
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, RBLOCK])
    tmp9 = tl.where(rmask & xmask, tmp7, 0)
    tmp10 = tl.sum(tmp9, 1)[:, None]
    tmp11 = tmp6 / tmp10
    tl.store(out_ptr0 + (r1 + rnumel * x0), tmp11 + 0 * triton_max, rmask & xmask)


@triton.jit
def online_softmax_kernel(
    in_ptr0,
    out_max_ptr,
    out_sum_ptr,
    xnumel,
    rnumel,
    XBLOCK: tl.constexpr,
    RBLOCK: tl.constexpr,
    STRICT: tl.constexpr,
):
    """Inductor's looped online softmax: (max, sum) carried over RBLOCK chunks."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    _tmp_max = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)
    _tmp_sum = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        r1 = rindex
        tmp0 = tl.load(
            in_ptr0 + (r1 + rnumel * x0), rmask & xmask, eviction_policy="evict_first", other=0.0
        )
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
        _tmp_max_next, _tmp_sum_next = online_softmax_combine(
            _tmp_max, _tmp_sum, tmp1, False, STRICT
        )
        _tmp_max = tl.where(rmask & xmask, _tmp_max_next, _tmp_max)
        _tmp_sum = tl.where(rmask & xmask, _tmp_sum_next, _tmp_sum)
    tmp2, tmp3 = online_softmax_reduce(_tmp_max, _tmp_sum, 1, False, STRICT)
    tmp2 = tmp2[:, None]
    tmp3 = tmp3[:, None]
    tl.store(out_max_ptr + x0, tmp2, xmask)
    tl.store(out_sum_ptr + x0, tmp3, xmask)


@triton.jit
def welford_kernel(
    in_ptr0, out_mean_ptr, out_var_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr
):
    """Inductor's looped Welford mean/variance, finished with ``welford`` (a 3-tuple reduce)."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    tmp2_mean = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    tmp2_m2 = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    tmp2_weight = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        r1 = rindex
        tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
        tmp2_mean_next, tmp2_m2_next, tmp2_weight_next = welford_reduce(
            tmp1, tmp2_mean, tmp2_m2, tmp2_weight, roffset == 0
        )
        tmp2_mean = tl.where(rmask & xmask, tmp2_mean_next, tmp2_mean)
        tmp2_m2 = tl.where(rmask & xmask, tmp2_m2_next, tmp2_m2)
        tmp2_weight = tl.where(rmask & xmask, tmp2_weight_next, tmp2_weight)
    tmp2_tmp, tmp3_tmp, tmp4_tmp = welford(tmp2_mean, tmp2_m2, tmp2_weight, 1)
    tmp2 = tmp2_tmp[:, None]
    tmp3 = tmp3_tmp[:, None]
    tl.store(out_mean_ptr + x0, tmp2, xmask)
    tl.store(out_var_ptr + x0, tmp3 / rnumel, xmask)


@triton.jit
def argmax_kernel(
    in_ptr0, out_ptr0, out_idx_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr
):
    """Inductor's ``max(dim)``: value and first index through ``max_with_index``."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    r1 = rindex
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
    tmp3 = tl.where(rmask & xmask, tmp1, float("-inf"))
    tmp4 = tl.broadcast_to(rindex, tmp3.shape)
    _, tmp5_tmp = max_with_index(tmp3, tmp4, 1)
    tmp5 = tmp5_tmp[:, None]
    tmp6 = max2(tmp3, 1)[:, None]
    tl.store(out_ptr0 + x0, tmp6, xmask)
    tl.store(out_idx_ptr + x0, tmp5, xmask)


@triton.jit
def any_prod_kernel(
    in_ptr0, out_any_ptr, out_prod_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr
):
    """``any(x > 0)`` and ``prod(x)`` over the rows, keep_dims through ``[:, None]``."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    r1 = rindex
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, other=0.0)
    tmp1 = tmp0 > 0.0
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK, RBLOCK])
    tmp4 = tl.where(rmask & xmask, tmp2, False)
    tmp5 = any(tmp4, 1)[:, None]
    tmp6 = tl.where(rmask & xmask, tmp0, 1.0)
    tmp7 = prod(tmp6, 1)[:, None]
    tl.store(out_any_ptr + x0, tmp5, xmask)
    tl.store(out_prod_ptr + x0, tmp7, xmask)


@triton.jit
def scan_kernel(
    in_ptr0, out_sum_ptr, out_prod_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr
):
    """Inductor's persistent ``cumsum`` and ``cumprod`` through ``tl.associative_scan``."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    r1 = rindex
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
    (tmp2,) = tl.associative_scan((tmp1,), 1, _add_combine)
    (tmp3,) = tl.associative_scan((tmp1,), 1, _mul_combine)
    tl.store(out_sum_ptr + (r1 + rnumel * x0), tmp2, rmask & xmask)
    tl.store(out_prod_ptr + (r1 + rnumel * x0), tmp3, rmask & xmask)


@triton.jit
def keepdims_kernel(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    """``x - max(x, keep_dims=True)`` over axis 0 of the transposed block, then a column sum."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[:, None]
    rmask = rindex < rnumel
    tmp0 = tl.load(in_ptr0 + (rindex + rnumel * xindex), rmask & xmask, other=float("-inf"))
    tmp1 = tl.max(tmp0, axis=0, keep_dims=True)
    tmp2 = tl.where(rmask & xmask, tmp0 - tmp1, 0.0)
    tmp3 = tl.reduce(tmp2, 0, _add_combine, keep_dims=True)
    tl.store(out_ptr0 + xindex, tmp3, xmask)


# ---------------------------------------------------------------- generated cases
#
# One kernel per family, specialized by constexpr switches, for the property
# test (tests/fuzz/test_reduction_properties.py). Each program reduces or
# scans its own [M, N] (or [N]) block of ``x``.


@triton.jit
def _load_case(x_ptr, M: tl.constexpr, N: tl.constexpr, TWO_D: tl.constexpr):
    base = tl.program_id(0) * (M * N)
    if TWO_D:  # noqa: SIM108 - a compile-time branch
        offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    else:
        offs = tl.arange(0, N)
    return base + offs


@triton.jit
def _index_along(x, AXIS: tl.constexpr, M: tl.constexpr, N: tl.constexpr, TWO_D: tl.constexpr):
    """The position of every element along ``AXIS`` (the flat position for ``None``)."""
    if TWO_D:
        if AXIS is None:
            idx = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
        elif AXIS == 0:
            idx = tl.broadcast_to(tl.arange(0, M)[:, None], [M, N])
        else:
            idx = tl.broadcast_to(tl.arange(0, N)[None, :], [M, N])
    else:
        idx = tl.arange(0, N)
    return idx


@triton.jit
def _back_to_block(r, x, AXIS: tl.constexpr, KEEP: tl.constexpr, TWO_D: tl.constexpr):
    """The reduced value broadcast back over ``x``'s shape (a splat for a scalar)."""
    if KEEP or AXIS is None or not TWO_D:
        col = r
    elif AXIS == 0:
        col = r[None, :]
    else:
        col = r[:, None]
    return tl.broadcast_to(col, x.shape) if TWO_D or KEEP else x * 0 + col


@triton.jit
def _keep_dims(r, AXIS: tl.constexpr, TWO_D: tl.constexpr):
    """What ``keep_dims=True`` would have given: the reduced axis back, of size 1."""
    if AXIS is not None:
        return tl.expand_dims(r, AXIS)
    if TWO_D:
        return tl.zeros([1, 1], r.dtype) + r
    return tl.zeros([1], r.dtype) + r


@triton.jit
def reduce_case_kernel(
    x_ptr,
    out_ptr,
    out2_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    TWO_D: tl.constexpr,
    AXIS: tl.constexpr,
    KEEP: tl.constexpr,
    OP: tl.constexpr,
    POST: tl.constexpr,
):
    """``OP`` over ``AXIS``, then ``POST``: the result put back over the block.

    ``out`` (and ``out2`` for two-result reductions) hold, per element of the
    block, ``r`` broadcast back (``"bcast"``) or ``where(x > r, x, r)``
    (``"where"``).
    """
    offs = _load_case(x_ptr, M, N, TWO_D)
    x = tl.load(x_ptr + offs)
    idx = _index_along(x, AXIS, M, N, TWO_D)
    r2 = x
    if OP == "sum":
        r = tl.sum(x, AXIS, keep_dims=KEEP)
    elif OP == "max":
        r = tl.max(x, AXIS, keep_dims=KEEP)
    elif OP == "max2":
        r = max2(x, AXIS)
    elif OP == "max2_strict":
        r = max2_strict(x, AXIS)
    elif OP == "min2":
        r = min2(x, AXIS)
    elif OP == "prod":
        r = prod(x, AXIS)
    elif OP == "any":
        r = any(x > 0, AXIS).to(x.dtype)
    elif OP == "argmax":
        r = tl.argmax(x, AXIS, keep_dims=KEEP).to(x.dtype)
    elif OP == "max_with_index":
        r2, r = tl.reduce((x, idx), AXIS, maximum_with_index, keep_dims=KEEP)
        r = r.to(x.dtype)
    elif OP == "welford":
        mean, m2, weight = tl.reduce(
            (x.to(tl.float32), tl.zeros(x.shape, tl.float32), tl.full(x.shape, 1.0, tl.float32)),
            AXIS,
            welford_combine,
            keep_dims=KEEP,
        )
        r = mean.to(x.dtype)
        r2 = (m2 / weight).to(x.dtype)
    else:  # "softmax": Inductor's online softmax, max and sum of exp together
        mx, sm = online_softmax_reduce(
            x.to(tl.float32), tl.full(x.shape, 1.0, tl.float32), AXIS, False, False
        )
        if KEEP:
            mx = _keep_dims(mx, AXIS, TWO_D)
            sm = _keep_dims(sm, AXIS, TWO_D)
        r = mx.to(x.dtype)
        r2 = sm.to(x.dtype)
    if OP in ("max2", "max2_strict", "min2", "prod", "any") and KEEP:
        r = _keep_dims(r, AXIS, TWO_D)
    full = _back_to_block(r, x, AXIS, KEEP, TWO_D)
    if POST == "where":
        full = tl.where(x > full, x, full)
    tl.store(out_ptr + offs, full)
    if OP in ("max_with_index", "welford", "softmax"):
        tl.store(out2_ptr + offs, _back_to_block(r2, x, AXIS, KEEP, TWO_D))


@triton.jit
def _cummax_combine(a_value, a_index, b_value, b_index):
    return maximum_with_index(a_value, a_index, b_value, b_index)


@triton.jit
def scan_case_kernel(
    x_ptr,
    out_ptr,
    out2_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    TWO_D: tl.constexpr,
    AXIS: tl.constexpr,
    REVERSE: tl.constexpr,
    OP: tl.constexpr,
):
    """An inclusive scan ``OP`` along ``AXIS`` of each program's block."""
    offs = _load_case(x_ptr, M, N, TWO_D)
    x = tl.load(x_ptr + offs)
    idx = _index_along(x, AXIS, M, N, TWO_D)
    r2 = idx
    if OP == "cumsum":
        r = tl.cumsum(x, AXIS, reverse=REVERSE)
    elif OP == "cumprod":
        r = tl.cumprod(x, AXIS, reverse=REVERSE)
    elif OP == "scan_add":
        (r,) = tl.associative_scan((x,), AXIS, _add_combine, reverse=REVERSE)
    else:  # "cummax": a running (max, first index) pair, as Inductor scans tuples
        r, r2 = tl.associative_scan((x, idx), AXIS, _cummax_combine, reverse=REVERSE)
    tl.store(out_ptr + offs, r)
    tl.store(out2_ptr + offs, r2)


# ---------------------------------------------------------------- more of Inductor's patterns


@triton.jit
def select_one(x, mask, dim, keep_dims=False):
    # Inductor picks the type with tl.core.get_int_dtype(x.dtype.primitive_bitwidth,
    # signed=False); these kernels select fp32 values.
    idtype: tl.constexpr = tl.uint32
    ix = x.to(idtype, bitcast=True)
    iy = tl.sum(ix * mask, dim, keep_dims=keep_dims)
    return iy.to(idtype).to(x.dtype, bitcast=True)


@triton.jit
def split_scan_kernel(
    in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr
):
    """Inductor's looped ``cumsum``: a ``[XBLOCK, 1]`` carry, ``select_one`` of the last lane."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    tmp3 = tl.full([XBLOCK, 1], float("nan"), tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        r1 = rindex
        tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, other=0.0)
        tmp1 = tmp0.to(tl.float32)
        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, RBLOCK])
        (tmp4,) = tl.associative_scan((tmp2,), 1, _add_combine)
        tmp5 = select_one((tmp4), rbase == (RBLOCK - 1), dim=-1, keep_dims=True)
        tmp6 = _add_combine(tmp3, tmp5)
        tmp7 = _add_combine(tmp3, tmp4)
        tmp8 = tl.where(roffset > 0, tmp7, tmp4)
        tmp3 = tl.where(roffset > 0, tmp6, tmp5)
        tl.store(out_ptr0 + (r1 + rnumel * x0), tmp8, rmask & xmask)


@triton.jit
def pairs_sum_kernel(in_ptr0, out_ptr0, N: tl.constexpr):
    """The bitonic sort's step: ``tl.sum`` over the middle axis of ``[n, 2, m]``, back with
    ``[:, None, :]`` (each pair of elements ``m`` apart swapped)."""
    offs = tl.arange(0, N)
    x = tl.load(in_ptr0 + offs)
    shape: tl.constexpr = [N // 8, 2, 4]
    y = tl.reshape(x, shape)
    right_mask = tl.arange(0, 2)[None, :, None].to(tl.float32)
    left_mask = 1 - right_mask
    left = tl.broadcast_to(tl.sum(y * left_mask, 1)[:, None, :], shape)
    right = tl.broadcast_to(tl.sum(y * right_mask, 1)[:, None, :], shape)
    swapped = tl.where(right_mask == 1, left, right)
    tl.store(out_ptr0 + offs, tl.reshape(swapped, [N]))


@triton.jit
def _half_sum_of_a_block(a, b):
    # Builds a [2] block and reduces it back: fine on the emulator, a located error on the GPU.
    return tl.sum(a + tl.zeros((2,), tl.float32) + b, 0) * 0.5


@triton.jit
def block_in_combiner_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """A combine function that computes on a block it builds."""
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.reduce(x, 0, _half_sum_of_a_block))
