"""``minitriton._internal_testing``: the helpers Triton's test suite imports, with its behaviour."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.torch  # CI runs these in its torch step
torch = pytest.importorskip("torch")

import minitriton as triton  # noqa: E402 - after the skip: the module needs torch
import minitriton.language as tl  # noqa: E402
from minitriton import _internal_testing as T  # noqa: E402


def test_the_emulator_answers_as_tritons_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    assert T.is_interpreter() and T.get_current_target() is None
    assert not T.is_cuda() and not T.is_hip() and not T.is_hopper() and T.get_arch() == ""
    assert T.supports_tma() and T.supports_ws()


def test_numpy_random_is_seeded_and_never_zero_for_integers() -> None:
    a = T.numpy_random(1000, "int8")
    assert a.dtype == np.int8 and (a != 0).all()
    np.testing.assert_array_equal(a, T.numpy_random(1000, "int8"))  # seed 17 by default
    b = T.numpy_random((4, 8), "uint16", low=0, high=3)
    assert b.shape == (4, 8) and set(np.unique(b)) <= {1, 2}
    bf16 = T.numpy_random(64, "bfloat16")
    assert bf16.dtype == np.float32 and not (bf16.view(np.uint32) & 0xFFFF).any()
    assert T.numpy_random(64, "bool").dtype == np.bool_
    with pytest.raises(RuntimeError, match="Unknown dtype"):
        T.numpy_random(4, "complex64")


def test_to_triton_and_back() -> None:
    x = np.array([1, 200, 255], np.uint8)
    wrapped = T.to_triton(x, device="cpu")
    assert isinstance(wrapped, triton.TensorWrapper) and wrapped.dtype == tl.uint8
    np.testing.assert_array_equal(T.to_numpy(wrapped), x)
    f = np.array([1.5, -2.0], np.float32)
    assert T.to_triton(f, device="cpu", dst_type="bfloat16").dtype == torch.bfloat16
    np.testing.assert_array_equal(T.to_numpy(T.to_triton(f, device="cpu")), f)


def test_dtype_names() -> None:
    assert T.torch_dtype_name(tl.float32) == "float32" and T.torch_dtype_name(tl.uint8) == "uint8"
    assert T.torch_dtype_name(torch.int64) == "int64"
    assert T.str_to_triton_dtype("bool") == tl.int1
    assert T.str_to_triton_dtype("float8_e5m2") == tl.float8e5
    with pytest.raises(TypeError):
        T.torch_dtype_name(np.float32)


def test_a_kernel_runs_with_the_helpers() -> None:
    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = T.numpy_random(16, "uint32", low=0, high=100)
    x_tri = T.to_triton(x, device="cpu")
    add_one[(1,)](x_tri, 16, BLOCK=16, backend="emulator")  # CPU tensors
    np.testing.assert_array_equal(T.to_numpy(x_tri), x + 1)


def test_newer_helpers() -> None:
    torch.manual_seed(0)
    draws = {T.random_int(3, 7) for _ in range(200)}
    assert draws == {3, 4, 5, 6}
    assert all(0 <= T.random_float() < 1 for _ in range(50))
    assert not T.is_compile_warmup()
    assert not T.is_hip_rdna4m() and not T.is_hip_gfx1250()
