"""Realistic wrong solutions of the kernel track, as edits of each ``solution.py``.

Each :class:`KernelMutant` replaces one snippet of an exercise's reference
solution (``old``, which must occur exactly once) by a typical mistake
(``new``); a mistake made in two places adds more edits (``also``).
``test_course_mutants.py`` grades every mutant and asserts that the grader
fails it, and that the first failure (the failing case's name, its
message, or the located error) matches ``expect``: the case that fails names
the mistake.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelMutant:
    """One wrong solution: ``solution.py`` with ``old`` replaced by ``new``."""

    exercise: str  # "05"
    name: str  # the mistake, in a few words
    old: str
    new: str
    expect: str  # a regex the first failure must match
    also: tuple[tuple[str, str], ...] = ()  # more (old, new) edits, for a mistake in two places

    def apply(self, solution: str) -> str:
        """``solution`` with every edit made; each ``old`` must occur exactly once."""
        for old, new in ((self.old, self.new), *self.also):
            assert solution.count(old) == 1, f"{old!r} must occur once in the solution"
            solution = solution.replace(old, new)
        return solution


M = KernelMutant

FIRST: tuple[KernelMutant, ...] = (
    # 01 constant add
    M("01", "hard-coded constant", "x + value", "x + 1.5", "value = -2.25"),
    M("01", "no program offset", "pid * BLOCK + tl.arange", "tl.arange", "32 programs"),
    M("01", "pid added, not scaled", "pid * BLOCK + tl.arange", "pid + tl.arange", "32 programs"),
    # 02 vector add
    M("02", "mask <= n", "mask = offsets < n", "mask = offsets <= n", "out-of-bounds"),
    M(
        "02",
        "mask only on the store",
        "x = tl.load(x_ptr + offsets, mask=mask)",
        "x = tl.load(x_ptr + offsets)",
        "partial.*out-of-bounds|out-of-bounds",
    ),
    M(
        "02",
        "mask drops the last element",
        "mask = offsets < n",
        "mask = offsets < n - 1",
        "1 never written",
    ),
    # 03 outer add
    M(
        "03",
        "column stride taken as 1",
        "cols[None, :] * stride_on",
        "cols[None, :]",
        "column-major",
    ),
    M(
        "03",
        "store mask checks rows only",
        "mask = (rows[:, None] < M) & (cols[None, :] < N)",
        "mask = rows[:, None] < M",
        "partial tiles",
    ),
    M(
        "03",
        "y loaded without a mask",
        "y = tl.load(y_ptr + cols, mask=cols < N)",
        "y = tl.load(y_ptr + cols)",
        "partial tiles",
    ),
    # 04 row reduce
    M(
        "04",
        "mean over BLOCK_N",
        "tl.sum(x, axis=1) / N",
        "tl.sum(x, axis=1) / BLOCK_N",
        "partial rows and columns",
    ),
    M(
        "04",
        "row stride taken as N",
        "rows[:, None] * stride_xm",
        "rows[:, None] * N",
        "stride_xm = 200",
    ),
    M(
        "04",
        "padding not zero",
        "mask=mask, other=0.0)",
        "mask=mask, other=1.0)",
        "partial rows and columns",
    ),
    # 05 softmax
    M("05", "no max subtraction", "    x = x - tl.max(x, axis=0)\n", "", "exp overflows"),
    M("05", "padding 0 instead of -inf", 'other=-float("inf")', "other=0.0", "padding lanes"),
    M("05", "row stride taken as N", "row * stride_xm", "row * N", "view"),
    # 06 long softmax
    M("06", "denominator not rescaled", "denom * tl.exp(m - m_new)", "denom", "the max changes"),
    M(
        "06",
        "padding 0 instead of -inf",
        'mask=cols < N, other=-float("inf"))\n        m_new',
        "mask=cols < N, other=0.0)\n        m_new",
        "padding lanes|padding must be -inf",
    ),
    M(
        "06",
        "row stride taken as N",
        "x_row = x_ptr + row * stride_xm",
        "x_row = x_ptr + row * N",
        "view",
    ),
    # 07 matmul
    M(
        "07",
        "K mask missing",
        "mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)",
        "mask=rm[:, None] < M, other=0.0)",
        "ragged K",
    ),
    M(
        "07",
        "B's strides assumed row-major",
        "ks[:, None] * stride_bk + rn[None, :] * stride_bn",
        "ks[:, None] * N + rn[None, :]",
        "transpose",
    ),
    M(
        "07",
        "M mask missing",
        "mask=(rm[:, None] < M) & (rn[None, :] < N))",
        "mask=rn[None, :] < N)",
        "ragged M",
    ),
    M(
        "07",
        "C's row stride taken as N",
        "rm[:, None] * stride_cm",
        "rm[:, None] * N",
        "C is a view",
    ),
    M(
        "07",
        "A's load not masked on M",
        "mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)",
        "mask=ks[None, :] < K, other=0.0)",
        "ragged M.*\n(.|\n)*out-of-bounds tt.load from 'a_ptr'",
    ),
    # 08 fused epilogue
    M("08", "plain ReLU", "tl.where(z > 0, z, 0.01 * z)", "tl.where(z > 0, z, 0.0)", "negative"),
    M(
        "08",
        "bias added after the activation",
        "z = acc + bias[None, :]\n    out = tl.where(z > 0, z, 0.01 * z)",
        "z = acc\n    out = tl.where(z > 0, z, 0.01 * z) + bias[None, :]",
        "bias",
    ),
    M(
        "08",
        "bias not masked",
        "bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)",
        "bias = tl.load(bias_ptr + rn)",
        "N not a multiple",
    ),
    # 09 layer norm
    M(
        "09",
        "padding counted in the variance",
        "d = tl.where(cols < N, x - mean, 0.0)",
        "d = x - mean",
        "padding lanes",
    ),
    M(
        "09",
        "variance as E[x^2] - mean^2 in fp32",
        "d = tl.where(cols < N, x - mean, 0.0)\n        acc += d * d\n"
        "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)",
        "acc += x * x\n    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N - mean * mean + eps)",
        "large mean",
    ),
    M(
        "09",
        "row stride taken as N",
        "x_row = x_ptr + row * stride_xm",
        "x_row = x_ptr + row * N",
        "view",
    ),
    M(
        "09",
        "eps outside the square root",
        "tl.sqrt(tl.sum(acc, axis=0) / N + eps)",
        "(tl.sqrt(tl.sum(acc, axis=0) / N) + eps)",
        "eps inside",
    ),
    # 10 histogram
    M(
        "10",
        "plain load-add-store instead of an atomic",
        "tl.atomic_add(hist_ptr + bins, 1, mask=mask)",
        "tl.store(hist_ptr + bins, tl.load(hist_ptr + bins, mask=mask) + 1, mask=mask)",
        "race|one bin",
    ),
    M(
        "10",
        "no clamp to the last bin",
        "bins = tl.minimum(tl.maximum(bins, 0), NUM_BINS - 1)",
        "bins = tl.maximum(bins, 0)",
        "outside the range|out-of-bounds",
    ),
    M(
        "10",
        "padding lanes counted",
        "tl.atomic_add(hist_ptr + bins, 1, mask=mask)",
        "tl.atomic_add(hist_ptr + bins, 1)",
        "partial",
    ),
    # 11 SGD
    M(
        "11",
        "gradient stored, not added",
        "tl.atomic_add(grad_ptr + cols, partial)",
        "tl.store(grad_ptr + cols, partial)",
        "race|8 programs",
    ),
    M(
        "11",
        "padding samples not zero",
        "mask=row_mask[:, None], other=0.0)",
        "mask=row_mask[:, None], other=1.0)",
        "partial",
    ),
    M("11", "mean over the block", "* (2.0 / n_samples)", "* (2.0 / BLOCK)", "8 programs|partial"),
    # 12 moving average
    M("12", "carry not added", "tl.cumsum(x, axis=0) + carry", "tl.cumsum(x, axis=0)", "8 blocks"),
    M(
        "12",
        "count always W",
        "count = tl.minimum(offs + 1, W).to(tl.float32)",
        "count = W * 1.0",
        "first W|one block",
    ),
    M(
        "12",
        "window off by one",
        "p_before = tl.load(p_ptr + (offs - W), mask=mask & (offs >= W)",
        "p_before = tl.load(p_ptr + (offs - W - 1), mask=mask & (offs >= W + 1)",
        "one block",
    ),
    # 13 k-means
    M(
        "13",
        "argmax instead of argmin",
        "tl.argmin(dist, axis=1)",
        "tl.argmax(dist, axis=1)",
        "D = 2",
    ),
    M(
        "13",
        "counts stored, not added",
        "tl.atomic_add(counts_ptr + labels, ones, mask=mask)",
        "tl.store(counts_ptr + labels, ones, mask=mask)",
        "race|points",
    ),
    M(
        "13",
        "padding points counted",
        "tl.atomic_add(counts_ptr + labels, ones, mask=mask)",
        "tl.atomic_add(counts_ptr + labels, ones)",
        "partial block",
    ),
    M(
        "13",
        "ties go to the last centroid",
        """    ks = tl.arange(0, K)
    dist = tl.zeros((BLOCK, K), dtype=tl.float32)
    for d in tl.static_range(D):
        p = tl.load(points_ptr + offs * D + d, mask=mask, other=0.0)
        c = tl.load(centroids_ptr + ks * D + d)
        diff = p[:, None] - c[None, :]
        dist += diff * diff
    labels = tl.argmin(dist, axis=1)
""",
        """    best = tl.full((BLOCK,), float("inf"), tl.float32)
    labels = tl.zeros((BLOCK,), dtype=tl.int32)
    for j in tl.static_range(K):
        dj = tl.zeros((BLOCK,), dtype=tl.float32)
        for d in tl.static_range(D):
            p = tl.load(points_ptr + offs * D + d, mask=mask, other=0.0)
            diff = p - tl.load(centroids_ptr + j * D + d)
            dj += diff * diff
        closer = dj <= best
        best = tl.where(closer, dj, best)
        labels = tl.where(closer, j, labels)
""",
        "tie",
    ),
    # 14 RNN
    M("14", "time stride taken as D", "t * stride_xt", "t * D", "time-major"),
    M(
        "14",
        "hidden state not carried",
        "z = tl.dot(x, wx) + tl.dot(h, wh)",
        "z = tl.dot(x, wx) + tl.dot(h * 0.0, wh)",
        "T = 6",
    ),
    M(
        "14",
        "batch rows not masked",
        "x = tl.load(x_ptrs, mask=row_mask, other=0.0)",
        "x = tl.load(x_ptrs)",
        "partial batch",
    ),
    # 15 flash attention
    M(
        "15",
        "no running max",
        "m_new = tl.maximum(m_i, tl.max(qk, axis=1))",
        "m_new = tl.zeros((BLOCK_M,), dtype=tl.float32)",
        "exp overflows",
    ),
    M(
        "15",
        "causal mask off by one",
        "valid & (offs_m[:, None] >= cols[None, :])",
        "valid & (offs_m[:, None] > cols[None, :])",
        "causal",
    ),
    M(
        "15",
        "accumulator not rescaled",
        "acc = acc * alpha[:, None] + tl.dot(p, v)",
        "acc = acc + tl.dot(p, v)",
        "the row max changes",
    ),
    M(
        "15",
        "key padding not masked",
        'qk = tl.where(valid, qk, -float("inf"))',
        "qk = qk",
        "partial",
    ),
    # 16 int4 matmul
    M(
        "16",
        "nibbles swapped",
        "lo = (packed & 0xF).to(tl.float32) - 8.0\n        hi = (packed >> 4)",
        "lo = (packed >> 4).to(tl.float32) - 8.0\n        hi = (packed & 0xF)",
        "one group",
    ),
    M(
        "16",
        "one scale for every group",
        "(k // GROUP) * stride_sg",
        "0 * stride_sg",
        "four groups",
    ),
    M(
        "16",
        "A's row stride taken as K",
        "a_ptr + rm[:, None] * stride_am + (k + 2 * half)[None",
        "a_ptr + rm[:, None] * K + (k + 2 * half)[None",
        "A is a view",
    ),
    M(
        "16",
        "no zero point",
        "(packed & 0xF).to(tl.float32) - 8.0",
        "(packed & 0xF).to(tl.float32)",
        "one group",
    ),
    # 17 CSR SpMV
    M(
        "17",
        "only the first BLOCK nonzeros",
        "for k in range(start, end, BLOCK):",
        "for k in range(start, start + 1):",
        "longer than BLOCK",
    ),
    M(
        "17",
        "mask against the row count",
        "mask = offs < end",
        "mask = offs < end + 1",
        "out-of-bounds|empty rows|nonzeros",
    ),
    M(
        "17",
        "x gathered without a mask",
        "acc += vals * tl.load(x_ptr + cols, mask=mask, other=0.0)",
        "acc += vals * tl.load(x_ptr + offs, mask=mask, other=0.0)",
        "nonzeros",
    ),
    # 18 tensor-core matmul
    M(
        "18",
        "BLOCK_M = 32: too small for wgmma",
        "BLOCK_M = 64",
        "BLOCK_M = 32",
        "sm_90a.*multiples of 64",
    ),
    M(
        "18",
        "no K mask on A",
        "mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)",
        "mask=rm[:, None] < M, other=0.0)",
        "K = 72.*|out-of-bounds",
    ),
    M(
        "18",
        "fp32 upcast before the dot",
        "acc = tl.dot(a, b, acc)",
        "acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)",
        "operands are fp16.*keep the loaded fp16 tiles",
    ),
    M(
        "18",
        "exact fp32 dot: FMA on every arch",
        "acc = tl.dot(a, b, acc)",
        'acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")',
        "operands are fp16",
    ),
)

_LONG_SOFTMAX_PASS_1 = """    m = -float("inf")
    denom = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        denom = denom * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
"""
_MEAN_SHIFT_PASS_1 = """    total = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0), axis=0)
    m = total / N
    denom = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        denom += tl.sum(tl.exp(x - m), axis=0)
"""
_ACC32 = "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)"
_ACC16 = "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)"

#: More wrong solutions: at least five per exercise, among them the numerically
#: unsafe shifts, fp16 accumulators and unit-stride assumptions that earlier
#: graders let through.
MORE: tuple[KernelMutant, ...] = (
    # 01
    M("01", "value added twice", "x + value", "x + value + value", "value = -2.25|one program"),
    M(
        "01",
        "one block for every program",
        "offsets = pid * BLOCK + tl.arange(0, BLOCK)",
        "offsets = tl.arange(0, BLOCK)",
        "32 programs",
    ),
    # 02
    M("02", "x added to itself", "x + y", "x + x", "multiple of BLOCK"),
    M(
        "02",
        "no program offset",
        "offsets = pid * BLOCK + tl.arange(0, BLOCK)",
        "offsets = tl.arange(0, BLOCK)",
        "multiple of BLOCK",
    ),
    # 03
    M(
        "03",
        "row and column strides swapped",
        "rows[:, None] * stride_om + cols[None, :] * stride_on",
        "rows[:, None] * stride_on + cols[None, :] * stride_om",
        "full tiles.*out-of-bounds",
    ),
    M(
        "03",
        "row index from the column program",
        "rows = pid_m * BLOCK_M",
        "rows = pid_n * BLOCK_M",
        "full tiles|partial tiles",
    ),
    # 04
    M(
        "04",
        "mean over the block's rows",
        "tl.sum(x, axis=1) / N",
        "tl.sum(x, axis=0) / N",
        "full blocks",
    ),
    M(
        "04",
        "output row stride taken from x",
        "rows[:, None] * stride_om",
        "rows[:, None] * stride_xm",
        "view",
    ),
    # 05: the unsafe shifts
    M(
        "05",
        "shift by the row mean",
        "    x = x - tl.max(x, axis=0)\n",
        "    x = x - tl.sum(tl.where(mask, x, 0.0), axis=0) / N\n",
        r"spread over \+-300|one logit 1e4",
    ),
    M(
        "05",
        "shift by the max clamped at 0",
        "x = x - tl.max(x, axis=0)",
        "x = x - tl.maximum(tl.max(x, axis=0), 0.0)",
        "around -200",
    ),
    # 06: the unsafe shifts
    M("06", "running max started at 0", 'm = -float("inf")\n', "m = 0.0\n", "around -200"),
    M(
        "06",
        "a while loop that never advances",
        _LONG_SOFTMAX_PASS_1.split("        m_new")[0],
        _LONG_SOFTMAX_PASS_1.split("        m_new")[0].replace(
            "    for start in range(0, N, BLOCK):\n", "    start = 0\n    while start < N:\n"
        ),
        "3 x 100: one partial block.*ran past its time budget",
    ),
    M(
        "06",
        "shift by the row mean",
        _LONG_SOFTMAX_PASS_1,
        _MEAN_SHIFT_PASS_1,
        r"logits around 80|spread over \+-300",
    ),
    # 07: the survivors
    M(
        "07",
        "fp16 accumulator",
        _ACC32,
        _ACC16,
        "K = 1024",
        (("acc += tl.dot(a, b)", "acc += tl.dot(a, b).to(tl.float16)"),),
    ),  # fmt: skip
    M("07", "A's column stride taken as 1", "ks[None, :] * stride_ak", "ks[None, :]", "A column"),
    # 08
    M(
        "08",
        "fp16 accumulator",
        "acc += tl.dot(a, w)",
        "acc += tl.dot(a, w).to(tl.float16)",
        "K = 1024",
    ),  # fmt: skip
    M("08", "A's column stride taken as 1", "ks[None, :] * stride_ak", "ks[None, :]", "A column"),
    M("08", "C's column stride taken as 1", "rn[None, :] * stride_cn", "rn[None, :]", "C column"),
    # 09
    M(
        "09",
        "mean over the block, not N",
        "mean = tl.sum(acc, axis=0) / N",
        "mean = tl.sum(acc, axis=0) / BLOCK",
        "partial block",
    ),
    # 10
    M(
        "10",
        "bins from the value, not its offset from lo",
        "((x - lo) * inv_width)",
        "(x * inv_width)",
        "normal samples",
    ),
    M(
        "10",
        "bins rounded, not floored",
        "((x - lo) * inv_width).to(tl.int32)",
        "((x - lo) * inv_width + 0.5).to(tl.int32)",
        "normal samples|all equal",
    ),
    # 11
    M(
        "11",
        "gradient without the factor 2",
        "* (2.0 / n_samples)",
        "* (1.0 / n_samples)",
        "one program",
    ),  # fmt: skip
    M("11", "update adds the gradient", "w - lr * g", "w + lr * g", "one program"),
    # 12
    M(
        "12",
        "carry includes the block itself",
        "tl.cumsum(x, axis=0) + carry, mask=mask)",
        "tl.cumsum(x, axis=0) + carry + tl.sum(x, axis=0), mask=mask)",
        "one block",
    ),
    M(
        "12",
        "carry reset every block",
        "carry += tl.sum(x, axis=0)",
        "carry = tl.sum(x, axis=0)",
        "8 blocks",
    ),  # fmt: skip
    # 13
    M(
        "13", "sums stored, not added", "tl.atomic_add(sums_ptr", "tl.store(sums_ptr", "race|points"
    ),  # fmt: skip
    # 14
    M(
        "14",
        "fp16 accumulator in x @ wx",
        "tl.dot(x, wx)",
        "tl.dot(x.to(tl.float16), wx.to(tl.float16), out_dtype=tl.float16)",
        "D = 512",
    ),
    M("14", "output time stride taken from x", "t * stride_ot", "t * stride_xt", "T = 6"),
    # 15: the survivor
    M(
        "15",
        "running max started at 0",
        'm_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)',
        "m_i = tl.zeros((BLOCK_M,), dtype=tl.float32)",
        "around -256",
    ),
    # 16
    M("16", "high nibble not shifted", "hi = (packed >> 4)", "hi = (packed & 0xF0)", "one group"),
    # 17
    M(
        "17",
        "one nonzero per row",
        "end = tl.load(row_ptr + row + 1)",
        "end = start + 1",
        "nonzeros",
    ),  # fmt: skip
    M(
        "17",
        "values gathered by column",
        "vals = tl.load(values + offs",
        "vals = tl.load(values + cols",
        "nonzeros",
    ),  # fmt: skip
    # 18
    M("18", "C's column stride taken as 1", "rn[None, :] * stride_cn", "rn[None, :]", "C column"),
    M(
        "18",
        "fp16 accumulator",
        _ACC32,
        _ACC16,
        "full tiles|K = 1024",
        (("tl.dot(a, b, acc)", "tl.dot(a, b, acc, out_dtype=tl.float16)"),),
    ),  # fmt: skip
)

MUTANTS: tuple[KernelMutant, ...] = FIRST + MORE
