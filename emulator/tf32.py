"""TF32: the fp32 inputs of a tensor-core ``tt.dot``, and how they are rounded.

TF32 keeps fp32's sign and 8-bit exponent but only the top 10 of its 23
mantissa bits. An fp32 value is stored as TF32 in an fp32 container whose
low 13 bits are zero.

:func:`round_to_tf32` rounds as PTX's ``cvt.rna.tf32.f32`` does: to the
nearest TF32 value, ties away from zero (``.rna``). On the bits of a finite
value that is "add ``0x1000`` (half of the dropped 13 bits), then clear the
low 13 bits": the sign is a separate bit, so the magnitude rounds and the
carry may ripple into the exponent. The consequences, each tested:

* a tie (dropped bits exactly ``0x1000``) rounds away from zero;
* the largest finite values (mantissa ``0x7fe000`` or more) round to
  infinity, as ``cvt.rna`` without ``.satfinite`` does;
* subnormals round like normal numbers (no flush to zero), and the
  largest ones round up to the smallest normal;
* infinities stay infinities and a NaN stays a NaN (quiet, sign kept; the
  emulator does not model NaN payloads).

:func:`truncate_to_tf32` clears the low 13 bits instead: what tensor cores do
with fp32 bits that nobody rounded. Triton emits no conversion on either
tensor-core path (``mma.sync`` or ``wgmma``): the fp32 operands reach the
tensor cores as they are, so what a dot computes is the hardware's choice.
:data:`TF32_INPUTS` records it per arch family and path, and
:func:`tensor_core_inputs` picks the entry for the arch the emulator models
(the arch a kernel is compiled for, ``sm_90`` by default: the H200).

:func:`tf32_dot` is the matrix product of a TF32 tensor-core dot: inputs
rounded to TF32 (their products are exact), accumulated in fp32 one
instruction step at a time (``mma.m16n8k8`` and ``wgmma ... k8`` both take
8 values of K per step).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ToTF32 = Callable[[np.ndarray], np.ndarray]

#: The low 13 bits of an fp32 mantissa, which TF32 drops.
DROPPED_BITS = 13
KEEP_MASK = np.uint32(0xFFFFFFFF << DROPPED_BITS & 0xFFFFFFFF)  # 0xffffe000
HALF = np.uint32(1 << (DROPPED_BITS - 1))  # 0x1000
EXPONENT = np.uint32(0x7F800000)
QUIET = np.uint32(0x00400000)
#: Values of K one tensor-core instruction step accumulates (TF32 shapes).
K_STEP = 8


#: How the tensor cores read the fp32 bits of a TF32 dot's operands, by (arch family,
#: path). ``"truncate"``: the low 13 bits are ignored (rounding toward zero);
#: ``"round"``: to nearest, ties away (as ``cvt.rna``). sm_90's ``wgmma`` truncates:
#: measured on an H200 (a truncating model matched 99.5 % of two real kernels'
#: outputs bit for bit, a rounding one 33-58 %). The ``mma.sync`` entries assume the
#: same datapath; ``benchmarks/tf32_probe.py`` measures each path.
TF32_INPUTS: dict[tuple[str, str], str] = {
    ("sm_80", "mma.sync"): "truncate",
    ("sm_90", "mma.sync"): "truncate",
    ("sm_90", "wgmma"): "truncate",
}
#: The arch the emulator models when a kernel names none.
DEFAULT_ARCH = "sm_90"


def arch_family(arch: str) -> str | None:
    """``"sm_90"`` for sm_90 and later, ``"sm_80"`` for sm_80 to sm_89, None before.

    Before sm_80 there is no TF32: Triton's dot is an exact fp32 FMA loop.
    """
    number = int(arch.removeprefix("sm_").rstrip("a"))
    if number >= 90:
        return "sm_90"
    return "sm_80" if number >= 80 else None


def tensor_core_inputs(arch: str = DEFAULT_ARCH, path: str | None = None) -> ToTF32 | None:
    """How a TF32 dot's operands become TF32 on ``arch`` (None: exact fp32, no tensor cores).

    ``path`` is ``"wgmma"`` or ``"mma.sync"`` (None: the arch's best); where the
    arch's paths agree (as in :data:`TF32_INPUTS` today) it does not matter.
    """
    family = arch_family(arch)
    if family is None:
        return None
    modes = {p: m for (f, p), m in TF32_INPUTS.items() if f == family}
    if path not in modes:  # the arch's best path: wgmma where it has one
        path = "wgmma" if "wgmma" in modes else "mma.sync"
    return truncate_to_tf32 if modes[path] == "truncate" else round_to_tf32


def round_to_tf32(x: np.ndarray) -> np.ndarray:
    """fp32 values rounded to TF32 (round to nearest, ties away from zero)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    finite = (bits & EXPONENT) != EXPONENT
    nan = ~finite & ((bits & ~EXPONENT & np.uint32(0x007FFFFF)) != 0)
    # Adding half an ULP to a finite value's bits cannot wrap: its exponent is below 0xff.
    rounded = np.where(finite, bits + HALF, bits) & KEEP_MASK
    rounded = np.where(nan, rounded | QUIET, rounded)
    return rounded.astype(np.uint32).view(np.float32)


def truncate_to_tf32(x: np.ndarray) -> np.ndarray:
    """fp32 values with the low 13 bits cleared (toward zero); a NaN stays a NaN.

    What tensor cores do with fp32 bits that were not rounded first (Triton
    hands them over unrounded): see :data:`TF32_INPUTS`.
    """
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    nan = np.isnan(bits.view(np.float32))
    return np.where(nan, bits | QUIET, bits & KEEP_MASK).astype(np.uint32).view(np.float32)


def split_tf32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(big, small)`` with ``big = round_to_tf32(x)`` and ``small = x - big`` (fp32).

    The split of Triton's ``tf32x3`` precision: ``x`` is about ``big + small``
    with 21 bits of mantissa where ``big`` alone has 11.
    """
    x = np.asarray(x, dtype=np.float32)
    big = round_to_tf32(x)
    return big, (x - big).astype(np.float32)


def tf32_dot(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray, to_tf32: ToTF32 = round_to_tf32
) -> np.ndarray:
    """``a @ b + acc`` (fp32 arrays, ``(..., M, K) @ (..., K, N)``) as TF32 tensor cores do it.

    ``to_tf32`` makes the inputs TF32: :func:`round_to_tf32` or
    :func:`truncate_to_tf32` (what :func:`tensor_core_inputs` picks for the arch).

    Each step adds the products of :data:`K_STEP` values of K to the fp32
    accumulator with one rounding; the products of two TF32 values are exact
    (22-bit significands), so each step's sum is formed in fp64 first. The
    steps' sums come from one batched matmul (a few at a time, to bound the
    memory), and only the accumulation runs step by step.
    """
    a_steps, b_steps = _by_step(to_tf32(a)), _by_step(to_tf32(b), rows=True)
    total = np.asarray(acc, dtype=np.float32)
    group = _steps_per_matmul(a_steps, b_steps)
    for first in range(0, a_steps.shape[-3], group):
        sums = np.matmul(
            a_steps[..., first : first + group, :, :], b_steps[..., first : first + group, :, :]
        )
        for step in range(sums.shape[-3]):
            total = (total + sums[..., step, :, :]).astype(np.float32)
    return total


def _by_step(x: np.ndarray, rows: bool = False) -> np.ndarray:
    """fp64 ``(..., M, K)`` as ``(..., K/8, M, 8)``, or ``(..., K, N)`` as ``(..., K/8, 8, N)``.

    K is padded with zeros to a multiple of 8 (a frontend ``tl.dot`` has K >= 16,
    a power of two, but hand-written IR need not).
    """
    x = x.astype(np.float64)
    axis = -2 if rows else -1
    if x.shape[axis] % K_STEP:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (0, -x.shape[axis] % K_STEP)
        x = np.pad(x, pad)
    if rows:
        *lead, k, n = x.shape
        return x.reshape(*lead, k // K_STEP, K_STEP, n)
    *lead, m, k = x.shape
    return np.swapaxes(x.reshape(*lead, m, k // K_STEP, K_STEP), -2, -3)


#: Bytes of fp64 step sums one matmul may produce at once.
_SUMS_BYTES = 1 << 25


def _steps_per_matmul(a_steps: np.ndarray, b_steps: np.ndarray) -> int:
    lead = np.broadcast_shapes(a_steps.shape[:-3], b_steps.shape[:-3])
    per_step = 8 * int(np.prod(lead)) * a_steps.shape[-2] * b_steps.shape[-1]
    return max(1, _SUMS_BYTES // per_step)


def tf32x3_dot(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray, to_tf32: ToTF32 = round_to_tf32
) -> np.ndarray:
    """``a @ b + acc`` with Triton's ``tf32x3``: three TF32 dots of the split inputs.

    As Triton's ``F32DotTC`` pass rewrites it:
    ``(a_small @ b_big + a_big @ b_small) + a_big @ b_big``, accumulated from
    zero in that order, then ``acc`` added in fp32 (the small-times-small
    term is dropped). The split rounds (``cvt.rna``, as that pass emits it);
    the three dots read their operands as the tensor cores do (``to_tf32``).
    """
    a_big, a_small = split_tf32(a)
    b_big, b_small = split_tf32(b)
    zero = np.zeros(np.shape(acc), np.float32)
    total = tf32_dot(a_small, b_big, zero, to_tf32)
    total = tf32_dot(a_big, b_small, total, to_tf32)
    total = tf32_dot(a_big, b_big, total, to_tf32)
    return (total + np.asarray(acc, dtype=np.float32)).astype(np.float32)
