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
    if strict_signed_zero:
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
    if strict_signed_zero:
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
    tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, eviction_policy="evict_last", other=0.0)
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
        tmp0 = tl.load(in_ptr0 + (r1 + rnumel * x0), rmask & xmask, eviction_policy="evict_first", other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
        _tmp_max_next, _tmp_sum_next = online_softmax_combine(_tmp_max, _tmp_sum, tmp1, False, STRICT)
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
