"""Small kernels that exercise one lowering feature each (frontend golden tests)."""

# fmt: off
# ruff: noqa: SIM108, SIM300 - the kernels spell these constructs out on purpose
import minitriton as triton
import minitriton.language as tl
from minitriton.language import load as tl_load

SCALE = tl.constexpr(2)
EPS = tl.constexpr(1e-5)


@triton.jit
def add_mul(a, b):
    return a + b, a * b


@triton.jit
def pick(x, MODE: tl.constexpr):
    if MODE == "double":
        return x * 2
    return x


@triton.jit
def max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def control_flow(p, n, BLOCK: tl.constexpr, BIAS: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl_load(p + offs, mask=offs < n, other=0.0)
    if pid == 0:
        y = x + 1.0
    elif pid < n:
        y = x * 2.0
    else:
        y = x
    if BIAS is None:
        z = y
    else:
        z = y + BIAS
    i = 0
    while i < n:
        z = z * 0.5
        i += 1
    for k in tl.static_range(3):
        z = z + k
    for j in range(0, n, 2):
        z = z - j
    s, m = add_mul(z, EPS)
    t = pick(s, "double") + pick(m, "keep")
    tl.store(p + offs, t, mask=(offs < n) & (0 <= offs) and pid >= 0)


@triton.jit
def reductions(p, out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    x = tl.load(p + rows * BLOCK_N + cols)
    total = tl.sum(x)
    row_max = x.max(axis=1, keep_dims=True)
    best = tl.argmax(x, axis=0)
    custom = tl.reduce(x, 1, max_combine)
    scan = tl.cumsum(x, axis=1)
    srt = tl.sort(x)
    small = x.to(tl.int8)
    isum = tl.sum(small, axis=0)
    tl.store(out + tl.arange(0, BLOCK_N), best + isum)
    tl.store(out + rows * BLOCK_N + cols, (scan + srt - row_max).to(tl.int32))
    tl.store(out + tl.arange(0, BLOCK_M), custom.to(tl.int32) + total.to(tl.int32))


@triton.jit
def shapes_and_math(p, q, BLOCK: tl.constexpr):
    offs = tl.multiple_of(tl.arange(0, BLOCK), 16)
    x = tl.load(p + offs)
    m = tl.reshape(x, (BLOCK // 4, 4))
    t = m.T
    e = tl.expand_dims(tl.sum(t, axis=0), 1)
    b = tl.broadcast_to(e, (BLOCK // 4, 4))
    y = tl.sigmoid(b) + tl.exp(b) * tl.sqrt(tl.abs(b)) - tl.clamp(b, -1.0, 1.0)
    y = tl.where(y > SCALE, y, -float("inf"))
    y = tl.maximum(y, min(SCALE, 3)) / len(y.shape)
    bits = y.to(tl.int32, bitcast=True) >> 1
    tl.device_print("bits", bits)
    tl.device_assert(bits == bits, "nan bits")
    tl.debug_barrier()
    old = tl.atomic_add(q + offs, tl.reshape(y, (BLOCK,)), mask=offs < BLOCK)
    tl.atomic_max(q + offs, old, sem="relaxed", scope="cta")
    c = tl.cdiv(BLOCK, 3) + tl.program_id(0) // 3 % 2
    tl.store(q + c, tl.sum(old))


@triton.jit
def random_numbers(out, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    u = tl.rand(seed, offs)
    n = tl.randn(seed, offs)
    r = tl.randint(seed, offs)
    tl.store(out + offs, u + n + r.to(tl.float32))
