"""``triton.reinterpret`` arguments on both backends, against NumPy.

The wrapper makes the kernel see another element type of the same size; the
launch passes the memory underneath: a CUDA tensor's address, or a NumPy
array copied to the device and back. ``dtype`` may be a ``tl``, torch or
NumPy dtype, as Triton takes either.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl


@triton.jit
def flip_sign_bits(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # x and out are 16-bit integers here: the sign bit of each fp16, flipped
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bits = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, bits ^ -32768, mask=offs < n)


def test_the_wrapper_of_a_wrapper_with_the_base_dtype_is_the_base():
    x = np.zeros(4, np.float16)
    assert triton.reinterpret(triton.reinterpret(x, tl.int16), np.dtype(np.float16)) is x


def test_an_unknown_dtype_is_refused():
    with pytest.raises(TypeError, match="reinterpret needs a dtype"):
        triton.reinterpret(np.zeros(4, np.float16), "fp16?")


def test_numpy_arrays_reinterpreted(backend):
    x = np.linspace(-3, 3, 300).astype(np.float16)
    out = np.zeros_like(x)
    args = (triton.reinterpret(x, tl.int16), triton.reinterpret(out, np.dtype(np.int16)))
    flip_sign_bits[(3,)](*args, x.size, BLOCK=128, backend=backend)
    np.testing.assert_array_equal(out, -x)


def test_torch_tensors_reinterpreted_with_torch_dtypes(backend):
    torch = pytest.importorskip("torch")
    device = "cuda" if backend == "gpu" else "cpu"
    x = torch.linspace(-3, 3, 300, dtype=torch.float16, device=device)
    out = torch.zeros_like(x)
    args = (triton.reinterpret(x, torch.int16), triton.reinterpret(out, torch.int16))
    flip_sign_bits[(3,)](*args, x.numel(), BLOCK=128, backend=backend)
    np.testing.assert_array_equal(out.cpu().numpy(), -x.cpu().numpy())
