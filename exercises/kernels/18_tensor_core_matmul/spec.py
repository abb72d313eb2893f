"""Exercise 18 spec: an fp16 matmul, right on the emulator and on the tensor cores when compiled."""

import re

import numpy as np

import minitriton as triton
from minitriton.course import Case, accumulation_tolerance, fp16_exact, fp32_matmul

TITLE = "Tensor-core matmul"
KERNELS = ("matmul_kernel", "BLOCK_M", "BLOCK_N", "BLOCK_K")
MINUTES = 45
REQUIRES = ("07",)
OUTCOMES = (
    "fp16 tiles, an fp32 accumulator",
    "which dot shapes and types reach wgmma and mma.sync",
    "reading the ttgir's layouts",
)
NUM_WARPS = 4
#: The arch -> the accumulator layout the dot must get there.
ARCHS = {"sm_90a": 3, "sm_80": 2}
#: ``check 18 --gpu``: once the cases pass, the kernel is timed on this shape
#: and must reach ``floor`` times the reference solution's TFLOP/s
#: (see minitriton.course.speed).
SPEED = {"shape": (4096, 4096, 4096), "floor": 0.5}
#: fp16 products are exact in fp32; only the order of the additions differs.
TOLERANCE = {"atol": 1e-3, "rtol": 1e-3}

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {"K = 72": 2, "K = 1024": 2}
#: The same for the checks of the compiled kernel (:func:`check_compiled`).
COMPILED_HINTS = {"tensor cores: the dot's operands": 3, "tensor cores": 1}


def reference(a: np.ndarray, b: np.ndarray, c_columns: bool = False) -> np.ndarray:
    """``a @ b`` in float64, rounded to fp32."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def launch(kernels, a: np.ndarray, b: np.ndarray, c_columns: bool = False) -> np.ndarray:
    """A 2D grid of tiles of C, with the block sizes of the student's file.

    ``c_columns``: C is column-major (stride_cm = 1).
    """
    (M, K), (_, N) = a.shape, b.shape
    c = np.full((N, M), np.nan, np.float32).T if c_columns else np.full((M, N), np.nan, np.float32)
    bm, bn, bk = kernels.BLOCK_M, kernels.BLOCK_N, kernels.BLOCK_K
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    strides = [s // arr.itemsize for arr in (a, b, c) for s in arr.strides]
    kernels.matmul_kernel[grid](
        a, b, c, M, N, K, *strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=NUM_WARPS
    )
    return c


def cases() -> list[Case]:
    """Full tiles, ragged M, N and K, strided A and B, a long K; all fp16."""
    rng = np.random.default_rng(18)

    def mats(m: int, k: int, n: int, b_transposed: bool = False) -> tuple:
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((n, k) if b_transposed else (k, n)).astype(np.float16)
        return a, b.T if b_transposed else b

    a, b = mats(64, 48, 64)
    wide_a, wide_b = mats(128, 96, 128)
    return [
        Case("64 x 64 x 64: full tiles", mats(64, 64, 64), **TOLERANCE),
        Case("M = 80, N = 72: ragged M and N, K = 64", mats(80, 64, 72), **TOLERANCE),
        Case("K = 72: a ragged K, the last step is partial", mats(64, 72, 64), **TOLERANCE),
        Case(
            "B = transpose of a 64 x 48 array: stride_bk = 1", mats(64, 48, 64, True), **TOLERANCE
        ),
        Case(
            "A column-major: stride_am = 1, stride_ak = 64", (np.asfortranarray(a), b), **TOLERANCE
        ),
        Case(
            "A and B = every other row and column of 128 x 96 and 96 x 128 arrays",
            (wide_a[::2, ::2], wide_b[::2, ::2]),
            **TOLERANCE,
        ),
        Case(
            "C column-major: stride_cm = 1, stride_cn = 80", (*mats(80, 32, 64), True), **TOLERANCE
        ),
        long_k_case(),
    ]


def long_k_case() -> Case:
    """K = 1024: the tolerance is the fp32 reference's own error (fp16 products are exact).

    An accumulator kept in fp16 (11 significant bits) drifts 40 times further.
    """
    a, b = fp16_exact((64, 1024), seed=180), fp16_exact((1024, 64), seed=181)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    return Case(
        "K = 1024: an fp32 accumulator is exact to within 64 times fp32's own rounding",
        (a.astype(np.float16), b.astype(np.float16)),
        **accumulation_tolerance(fp32_matmul(a, b), exact),
    )


# ---------------------------------------------------------------- the compiled kernel


def compiled(kernels) -> dict[str, str]:
    """What the GPU compiler makes of the student's dot (no GPU needed).

    Runs with the student's code: returns plain strings, the dot's operand
    types and, per arch, the accumulator layout in the ttgir ("" for FMA).
    """
    from minitriton.backend.build import compile_ir
    from minitriton.compiler import compile_kernel
    from minitriton.jit import base_jit_function
    from minitriton.signature import kernel_params, parse_signature

    jit = base_jit_function(kernels.matmul_kernel)
    blocks = f"{kernels.BLOCK_M}, {kernels.BLOCK_N}, {kernels.BLOCK_K}"
    sig = "*fp16:16, *fp16:16, *fp32:16, i32, i32, i32, " + "i32, i32:1, " * 3 + blocks
    module = compile_kernel(jit.source, parse_signature(sig, kernel_params(jit.fn))).module
    dots = [op for op in module.walk() if op.name == "tt.dot"]
    if not dots:
        return {"error": "the kernel has no tl.dot"}
    info = {"a": str(dots[0].operands[0].type), "b": str(dots[0].operands[1].type)}
    for arch in ARCHS:
        ttgir = compile_ir(module, arch, NUM_WARPS).ttgir
        line = next((ln for ln in ttgir.splitlines() if "tt.dot(" in ln), "")
        m = re.search(r'layout = "(nvidia_mma<[^"]*)"', line)
        info[arch] = m.group(1) if m else ""
    return info


def check_compiled(info: dict[str, str]) -> list[tuple[str, bool, str]]:
    """The tensor-core checks: (name, passed, why), from what :func:`compiled` found."""
    if info.get("error"):
        return [("tensor cores: the kernel compiles for the GPU", False, info["error"])]
    a, b = info.get("a", ""), info.get("b", "")
    results = [("tensor cores: the dot's operands are fp16", *_operands_ok(a, b))]
    for arch, version in ARCHS.items():
        layout = info.get(arch, "")
        ok = f"versionMajor={version}" in layout
        why = "" if ok else _why_not(arch, version, layout, a, b)
        results.append((f"tensor cores: on {arch} the dot gets nvidia_mma v{version}", ok, why))
    return results


def _operands_ok(a: str, b: str) -> tuple[bool, str]:
    if a.endswith("xf16>") and b.endswith("xf16>"):
        return True, ""
    return False, (
        f"tl.dot gets {a} and {b}: keep the loaded fp16 tiles fp16 up to the dot "
        "(the fp32 accumulator is tl.dot's third argument); an fp32 dot reads twice "
        "the bytes and runs as TF32 or FMAs"
    )


def _why_not(arch: str, version: int, layout: str, a: str, b: str) -> str:
    got = f"got {layout}" if layout else "the dot falls back to FMAs"
    m, k = _dims(a)
    n = _dims(b)[1]
    if version == 3 and m % 64:
        reason = f"wgmma takes BLOCK_M in multiples of 64 (one warpgroup: 4 warps), got {m}"
    elif k % 16:
        reason = f"fp16 tensor-core instructions take K in steps of 16, BLOCK_K = {k}"
    elif m % 16 or n % 8:
        reason = f"mma.sync takes M in 16s and N in 8s, got {m} x {n}"
    else:
        reason = f"look at the tt.dot line of the ttgir: operands {a} and {b}"
    return f"{arch}: {got}: {reason}"


def _dims(t: str) -> tuple[int, int]:
    m = re.search(r"<(\d+)x(\d+)x", t)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
