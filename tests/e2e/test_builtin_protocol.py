"""Triton's builtin protocol on both backends: ``core.extern_elementwise`` over libdevice
symbols, ``_semantic`` handed on to ``tl`` builtins, and aggregates built with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minitriton.diagnostics import CompileError
from minitriton.frontend.libdevice import libdevice_function
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import builtin_protocol as K


def test_library_builtins_reach_libdevice_and_tl(backend: str) -> None:
    x = np.linspace(-3, 3, 16, dtype=np.float32)
    y = np.linspace(1, 4, 16, dtype=np.float32)
    t, d = np.zeros_like(x), np.zeros_like(x)
    c, w = np.zeros(16, np.int32), np.zeros(16, np.int32)
    K.extern_kernel[(1,)](x, y, t, d, c, w, BLOCK=16, backend=backend)
    np.testing.assert_allclose(t, np.tanh(x), rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(d, x / y)
    offs = np.arange(16) * 37
    np.testing.assert_array_equal(c, [bin(v).count("1") for v in offs])
    np.testing.assert_array_equal(w, 3 * np.arange(16))


def test_aggregates_built_by_builtins_and_constexpr_methods(backend: str) -> None:
    out = np.zeros(8, np.int32)
    K.aggregate_kernel[(1,)](out, SIDE=5, backend=backend)
    np.testing.assert_array_equal(out, np.arange(8) + 25)


@pytest.mark.parametrize(
    ("symbol", "function"),
    [("__nv_tanhf", "libdevice.tanh"), ("__nv_tanh", "libdevice.tanh"),
     ("__nv_fdiv_rn", "libdevice.div_rn"), ("__nv_ddiv_rz", "libdevice.div_rz"),
     ("__nv_fmaf_rn", "libdevice.fma_rn"), ("__nv_dsqrt_ru", "libdevice.sqrt_ru"),
     ("__nv_isnand", "libdevice.isnan"), ("__nv_popcll", "libdevice.popc"),
     ("__nv_umulhi", "libdevice.mulhi"), ("__nv_mul64hi", "libdevice.mulhi"),
     ("__nv_expf", "exp"), ("__nv_fabsf", "abs"), ("__nv_fast_expf", "libdevice.fast_expf"),
     ("__nv_float2int_rn", "libdevice.float2int_rn"), ("__nv_j0f", "libdevice.j0"),
     ("__nv_nosuchf", None), ("llvm.nvvm.read.ptx.sreg.smid", None)],
)  # fmt: skip
def test_libdevice_symbols_name_their_functions(symbol: str, function: str | None) -> None:
    assert libdevice_function(symbol) == function


def test_another_librarys_symbol_is_a_located_error() -> None:
    with pytest.raises(CompileError) as info:
        K.other_library_kernel[(1,)](np.ones(1, np.float32))
    text = str(info.value)
    assert "'mylib_fast_exp' of mylib cannot run here" in text
    assert "builtin_protocol.py:" in text


def test_argument_types_the_table_lacks_are_a_located_error() -> None:
    with pytest.raises(CompileError) as info:
        K.wrong_type_kernel[(1,)](np.ones(1, np.float32))
    assert "no function for arguments of types (fp16)" in str(info.value)
    assert "the table has (fp32), (fp64)" in str(info.value)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_library_builtins_assemble(arch: str, tmp_path: Path) -> None:
    signature = "*fp32, *fp32, *fp32, *fp32, *i32, *i32, 16"
    ptx = assemble(K.extern_kernel, signature, arch, tmp_path).ptx
    assert "div.rn.f32" in ptx and "popc.b32" in ptx


def test_aggregates_without_init_and_aggregate_replace(backend: str) -> None:
    out = np.zeros(4, np.int32)
    K.replace_kernel[(1,)](out, backend=backend)
    x = np.arange(4)
    np.testing.assert_array_equal(out, x * 3 + 5 + x * 10 + 7)


def test_aggregate_replace_of_an_unknown_field_is_a_located_error() -> None:
    with pytest.raises(CompileError) as info:
        K.replace_unknown_kernel[(1,)](np.zeros(4, np.int32))
    assert "Scaled has no field 'size'" in str(info.value)
    assert "builtin_protocol.py:" in str(info.value)
