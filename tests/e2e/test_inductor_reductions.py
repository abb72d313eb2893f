"""Inductor's reductions and scans (``tests/kernels/inductor_reductions.py``) against NumPy.

Each kernel runs on every backend (the ``backend`` fixture), with row counts
that are not a multiple of ``XBLOCK`` and row lengths that are not a multiple
of ``RBLOCK``, and compiles to PTX for sm_90a and sm_80, assembled by
``ptxas`` when it is on ``PATH``. They are the shapes behind the internal
errors once reported on Inductor's code: several combiners in one reduction
(the online softmax keeps max and sum together), helpers that build a block
inside a combiner (``is_floating``), reductions over a kept dimension, and
the reduced value put back with ``[:, None]``.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import numpy as np
import pytest

import minitriton as triton
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError
from tests.kernels import inductor_reductions as K

PTXAS = shutil.which("ptxas")
XNUMEL, RNUMEL = 13, 37


def grid(xblock: int) -> tuple[int]:
    return (triton.cdiv(XNUMEL, xblock),)


@pytest.fixture
def x(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((XNUMEL, RNUMEL)).astype(np.float32)


def test_amax(backend: str, x: np.ndarray) -> None:
    out = np.zeros(XNUMEL, np.float32)
    K.amax_kernel[grid(4)](x, out, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=64, backend=backend)
    np.testing.assert_array_equal(out, x.max(axis=1))


def test_persistent_softmax(backend: str, x: np.ndarray) -> None:
    out = np.zeros_like(x)
    K.softmax_persistent_kernel[grid(4)](
        x, out, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=64, backend=backend
    )
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("strict", [False, True])
def test_online_softmax_keeps_max_and_sum_together(
    backend: str, x: np.ndarray, strict: bool
) -> None:
    out_max = np.zeros(XNUMEL, np.float32)
    out_sum = np.zeros(XNUMEL, np.float32)
    K.online_softmax_kernel[grid(4)](
        x, out_max, out_sum, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=16, STRICT=strict, backend=backend
    )
    want_max = x.max(axis=1)
    np.testing.assert_array_equal(out_max, want_max)
    want_sum = np.exp(x.astype(np.float64) - want_max[:, None]).sum(axis=1)
    np.testing.assert_allclose(out_sum, want_sum, rtol=1e-5)


def test_welford(backend: str, x: np.ndarray) -> None:
    mean = np.zeros(XNUMEL, np.float32)
    var = np.zeros(XNUMEL, np.float32)
    K.welford_kernel[grid(4)](x, mean, var, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=16, backend=backend)
    np.testing.assert_allclose(mean, x.mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, x.var(axis=1), rtol=1e-5, atol=1e-6)


def test_max_with_index_takes_the_first_index(backend: str, x: np.ndarray) -> None:
    x = np.round(x * 2) / 2  # ties in every row
    out = np.zeros(XNUMEL, np.float32)
    idx = np.full(XNUMEL, -1, np.int32)
    K.argmax_kernel[grid(4)](x, out, idx, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=64, backend=backend)
    np.testing.assert_array_equal(out, x.max(axis=1))
    np.testing.assert_array_equal(idx, np.argmax(x, axis=1))


def test_any_and_prod(backend: str, x: np.ndarray) -> None:
    x = np.where(np.abs(x) < 1.0, -np.abs(x), 1.0 + x / 64).astype(np.float32)
    any_out = np.full(XNUMEL, 7, np.int8)
    prod_out = np.zeros(XNUMEL, np.float32)
    K.any_prod_kernel[grid(4)](
        x, any_out, prod_out, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=64, backend=backend
    )
    np.testing.assert_array_equal(any_out, (x > 0).any(axis=1))
    np.testing.assert_allclose(prod_out, x.astype(np.float64).prod(axis=1), rtol=1e-5)


def test_cumsum_and_cumprod(backend: str, x: np.ndarray) -> None:
    x = (1.0 + x / 32).astype(np.float32)
    sums, prods = np.zeros_like(x), np.zeros_like(x)
    K.scan_kernel[grid(4)](x, sums, prods, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=64, backend=backend)
    np.testing.assert_allclose(sums, np.cumsum(x.astype(np.float64), axis=1), rtol=1e-5)
    np.testing.assert_allclose(prods, np.cumprod(x.astype(np.float64), axis=1), rtol=1e-5)


def test_split_scan_carries_the_last_lane(backend: str, x: np.ndarray) -> None:
    out = np.zeros_like(x)
    K.split_scan_kernel[grid(4)](x, out, XNUMEL, RNUMEL, XBLOCK=4, RBLOCK=16, backend=backend)
    want = np.cumsum(x.astype(np.float64), axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_keep_dims_over_axis_0(backend: str, x: np.ndarray) -> None:
    out = np.zeros(XNUMEL, np.float32)
    K.keepdims_kernel[grid(8)](x, out, XNUMEL, RNUMEL, XBLOCK=8, RBLOCK=64, backend=backend)
    want = (x.astype(np.float64) - x.max(axis=1, keepdims=True)).sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_middle_axis_sums_put_back(backend: str) -> None:
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    K.pairs_sum_kernel[(1,)](x, out, N=64, backend=backend)
    want = x.reshape(8, 2, 4)[:, ::-1, :].reshape(64)  # each pair of 4-apart runs swapped
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- PTX, assembled

X2 = np.zeros((XNUMEL, RNUMEL), np.float32)
V = np.zeros(XNUMEL, np.float32)
BLOCKS = {"XBLOCK": 4, "RBLOCK": 64}
LOOPED = {"XBLOCK": 4, "RBLOCK": 16}
PTX_CASES: dict[str, tuple[Any, tuple, dict]] = {
    "amax": (K.amax_kernel, (X2, V, XNUMEL, RNUMEL), BLOCKS),
    "softmax": (K.softmax_persistent_kernel, (X2, X2, XNUMEL, RNUMEL), BLOCKS),
    "online_softmax": (K.online_softmax_kernel, (X2, V, V, XNUMEL, RNUMEL), LOOPED),
    "welford": (K.welford_kernel, (X2, V, V, XNUMEL, RNUMEL), LOOPED),
    "argmax": (K.argmax_kernel, (X2, V, V.view(np.int32), XNUMEL, RNUMEL), BLOCKS),
    "any_prod": (K.any_prod_kernel, (X2, V.view(np.int8), V, XNUMEL, RNUMEL), BLOCKS),
    "scan": (K.scan_kernel, (X2, X2, X2, XNUMEL, RNUMEL), BLOCKS),
    "split_scan": (K.split_scan_kernel, (X2, X2, XNUMEL, RNUMEL), LOOPED),
    "keepdims": (K.keepdims_kernel, (X2, V, XNUMEL, RNUMEL), {"XBLOCK": 8, "RBLOCK": 64}),
    "pairs": (K.pairs_sum_kernel, (V, V), {"N": 64}),
}


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("name", sorted(PTX_CASES))
def test_compiles_and_assembles(name: str, arch: str, tmp_path) -> None:
    fn, args, consts = PTX_CASES[name]
    if name == "online_softmax":
        consts = {**consts, "STRICT": True}  # the strict max: a helper call in the combiner
    specs = fn.specialize(fn.bind(args, consts))
    ptx = compile_kernel(fn.source, specs, CompileOptions(arch=arch.rstrip("a")), stop_after="ptx")
    if PTXAS is None:
        pytest.skip("ptxas not found")
    source = tmp_path / f"{name}.ptx"
    source.write_text(ptx.asm["ptx"])
    proc = subprocess.run(
        [PTXAS, f"-arch={arch}", str(source), "-o", str(tmp_path / "out.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_a_block_built_in_a_combine_function(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel runs on the emulator only, by design: it is not dumped for the PTX check.
    monkeypatch.delenv("MINITRITON_DUMP_DIR", raising=False)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    K.block_in_combiner_kernel[(1,)](x, out, BLOCK=8, backend="emulator")
    assert out[0] == x.sum()  # each pair: ((a + b) * 2) / 2
    specs = K.block_in_combiner_kernel.specialize(
        K.block_in_combiner_kernel.bind((x, out), {"BLOCK": 8})
    )
    with pytest.raises(CompileError) as info:
        compile_kernel(K.block_in_combiner_kernel.source, specs, stop_after="ptx")
    text = str(info.value)
    assert "inductor_reductions.py:" in text and "^" in text
    assert "the combine function of this tl.reduce builds a block (tensor<2xf32>)" in text
    assert "help: compute on the scalar arguments directly" in text
    assert "internal" not in text
