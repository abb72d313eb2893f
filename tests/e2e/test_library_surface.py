"""Triton's surface that libraries reach for, on both backends (see the kernels' module)."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
from minitriton.launch_checks import LaunchError
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import library_surface as K


@pytest.mark.parametrize("warps", [4, 8])
def test_num_warps_and_num_threads_are_the_launchs(backend: str, warps: int) -> None:
    y = np.zeros(32 * warps, np.int32)
    K.threads_kernel[(1,)](y, num_warps=warps, backend=backend)
    np.testing.assert_array_equal(y, warps)


@pytest.mark.parametrize("pdl", [False, True])
def test_grid_dependency_control_changes_no_result(backend: str, pdl: bool) -> None:
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    K.dependent_launch_kernel[(1,)](x, y, N=8, PDL=pdl, backend=backend)
    np.testing.assert_array_equal(y, 2 * x)


def test_tritons_cuda_launch_options_are_accepted(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    options = {
        "launch_pdl": True,
        "enable_fp_fusion": False,
        "enable_reflect_ftz": True,
        "cluster_dims": (1, 1, 1),
        "warp_size": 32,
        "default_dot_input_precision": "ieee",
    }
    K.dependent_launch_kernel[(1,)](x, y, N=8, PDL=True, backend=backend, **options)  # fmt: skip
    np.testing.assert_array_equal(y, 2 * x)
    with pytest.raises(LaunchError, match="default_dot_input_precision='fp16': expected one of"):
        K.dependent_launch_kernel[(1,)](x, y, N=8, PDL=True, default_dot_input_precision="fp16")


@needs_ptxas
@pytest.mark.parametrize(("arch", "count"), [("sm_90a", 1), ("sm_80", 0)])
def test_griddepcontrol_on_sm_90_only(arch: str, count: int, tmp_path: Path) -> None:
    ptx = assemble(K.dependent_launch_kernel, "*fp32, *fp32, 8, True", arch, tmp_path).ptx
    assert ptx.count("griddepcontrol.wait;") == count
    assert ptx.count("griddepcontrol.launch_dependents;") == count


def test_constexpr_zero_and_the_standard_log2(backend: str) -> None:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros_like(x)
    K.defaults_kernel[(1,)](x, y, N=16, backend=backend)
    np.testing.assert_array_equal(y, x + 4)
    K.defaults_kernel[(1,)](x, y, N=16, DESC=1, backend=backend)
    np.testing.assert_array_equal(y, x + 5)


def test_shapes_join_with_lists_as_triton_shapes_do(backend: str) -> None:
    x = np.arange(32, dtype=np.int32)
    y = np.zeros_like(x)
    K.list_shape_kernel[(1,)](x, y, N=8, backend=backend)
    np.testing.assert_array_equal(y, x)


def test_a_32_bit_pattern_stored_into_int32_is_its_bits(backend: str) -> None:
    y = np.zeros(8, np.int32)
    K.pattern_store_kernel[(1,)](y, N=8, backend=backend)
    np.testing.assert_array_equal(y, -1)


def test_target_info_is_the_compiled_arch() -> None:
    y = np.zeros(1, np.int32)
    K.capability_kernel[(1,)](y, backend="emulator")  # the emulator compiles for sm_90
    assert y[0] == 90


def test_jit_functions_carry_tritons_constructor_arguments() -> None:
    params = list(inspect.signature(triton.runtime.jit.JITFunction.__init__).parameters)
    assert params[2:] == ["version", "do_not_specialize", "do_not_specialize_on_alignment",
                          "debug", "noinline", "repr", "launch_metadata"]  # fmt: skip
    fn = K.threads_kernel
    attrs = {name: getattr(fn, name) for name in params[2:]}
    assert attrs["repr"](None) == "threads_kernel"
    again = triton.runtime.jit.JITFunction(fn.fn, **attrs)
    y = np.zeros(128, np.int32)
    again[(1,)](y)
    np.testing.assert_array_equal(y, 4)


def test_capture_scope_holds_globals_and_closure_variables() -> None:
    scale = 3

    @triton.jit
    def kernel(x_ptr):
        triton.language.store(x_ptr, scale)

    scope = kernel.get_capture_scope()
    assert scope["scale"] == 3 and scope["triton"] is triton


def test_while_on_tl_condition_through_a_const_pointer(backend: str) -> None:
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(1, np.float32)
    K.condition_kernel[(1,)](x, y, 7, backend=backend)
    assert y[0] == x[:7].sum()


def test_a_pointer_as_a_condition_is_not_null(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    dw = np.zeros_like(x)
    K.optional_output_kernel[(1,)](x, dw, 8, BLOCK=8, backend=backend)
    np.testing.assert_array_equal(dw, 2 * x)


@needs_ptxas
def test_a_pointer_condition_assembles(tmp_path: Path) -> None:
    ptx = assemble(K.optional_output_kernel, "*fp32, *fp32, i32, 8", "sm_90a", tmp_path).ptx
    assert "setp.eq.b64" in ptx  # the null test of the 64-bit address, then the branch


def test_jit_functions_carry_tritons_params_signature_and_src() -> None:
    fn = K.decorated_kernel
    params = [(p.name, p.is_constexpr, p.num, p.do_not_specialize) for p in fn.params]
    assert params == [("x_ptr", False, 0, False), ("n", False, 1, True), ("BLOCK", True, 2, False)]
    assert list(fn.signature.parameters) == ["x_ptr", "n", "BLOCK"]
    assert fn.src.startswith("def decorated_kernel(x_ptr, n, BLOCK: tl.constexpr):\n")
    y = np.zeros(4, np.int32)
    fn._unsafe_update_src(fn.src.replace("n)", "n + 1)"))  # Triton's patching hook
    fn[(1,)](y, 6, BLOCK=4)
    np.testing.assert_array_equal(y, 7)
