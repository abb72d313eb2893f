"""How far a torch tensor argument reaches: from its first element to its storage's end.

On a GPU a tensor argument is its ``data_ptr()``, and a kernel may reach any
later byte of the allocation. FlagGems' ``gather`` relies on that: it passes
``inp.as_strided(index.shape, strides with 0 along dim)`` and indexes the
whole dimension through it. The emulator binds the same memory for a CPU
tensor; memory past the storage, or before the first element, stays out of
bounds, and NumPy arrays keep their first-through-last span.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator.errors import EmulatorError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@triton.jit
def gather_rows(inp, index, out, N: tl.constexpr, K: tl.constexpr, stride_dim):
    """``out[r, k] = inp[r, index[r, k]]`` through a row pointer of a restrided view."""
    r = tl.program_id(0)
    k = tl.arange(0, K)
    idx = tl.load(index + r * K + k)
    tl.store(out + r * K + k, tl.load(inp + r * N + idx * stride_dim))


def _restrided(x, k: int):  # noqa: ANN001, ANN202 - torch types
    """FlagGems' ``restride_dim``: ``x`` seen with ``k`` columns of stride 0."""
    return x.as_strided((x.shape[0], k), (x.stride(0), 0))


def test_a_restrided_view_reaches_its_whole_dimension(device: str) -> None:
    x = torch.randn(6, 40, device=device)
    index = torch.randint(0, 40, (6, 8), device=device)
    out = torch.empty(6, 8, device=device)
    # The emulator warns: the reads fall between the view's elements (meant here).
    expected = pytest.warns(RuntimeWarning, match="between the elements")
    with expected if device == "cpu" else contextlib.nullcontext():
        gather_rows[(6,)](_restrided(x, 8), index, out, 40, 8, 1)
    torch.testing.assert_close(out, torch.gather(x, 1, index), rtol=0, atol=0)


def test_a_slice_reaches_the_rest_of_its_base() -> None:
    base = torch.arange(64, dtype=torch.float32)
    out = torch.empty(16)
    gather_rows[(1,)](base[8:12], torch.arange(16) * 3, out, 0, 16, 1, backend="emulator")
    torch.testing.assert_close(out, base[8 + torch.arange(16) * 3])


def test_past_the_storage_is_out_of_bounds_and_says_how_long_it_is() -> None:
    x = torch.randn(4, 10)
    index = torch.full((4, 8), 9)
    out = torch.empty(4, 8)
    # From x[0, 2] to the storage's end: 38 elements; the last row reads x[3, 2 + 9].
    with pytest.raises(EmulatorError, match=r"out-of-bounds tt.load from 'inp' \(38 elements"):
        gather_rows[(4,)](x[:, 2:], index, out, 10, 8, 1, backend="emulator")
    # The same reads from the first column on stay inside the storage.
    gather_rows[(4,)](x, index, out, 10, 8, 1, backend="emulator")
    torch.testing.assert_close(out, x[:, 9:10].expand(4, 8))


def test_before_the_first_element_is_out_of_bounds() -> None:
    base = torch.arange(32, dtype=torch.float32)
    with pytest.raises(EmulatorError, match="out-of-bounds tt.load"):
        gather_rows[(1,)](base[8:], torch.full((16,), -1), torch.empty(16), 0, 16, 1,
                          backend="emulator")  # fmt: skip


def test_a_numpy_slice_keeps_its_span() -> None:
    base = np.arange(64, dtype=np.float32)
    with pytest.raises(EmulatorError, match=r"from 'inp' \(4 elements"):
        gather_rows[(1,)](base[8:12], np.arange(16, dtype=np.int32) * 3, np.empty(16, np.float32),
                          0, 16, 1, backend="emulator")  # fmt: skip


def test_a_failed_launch_restores_the_whole_reach() -> None:
    """Stores beyond the view but inside the storage are undone with the rest."""
    base = torch.zeros(64)

    @triton.jit
    def write_then_fail(x, n):
        offs = tl.arange(0, 16)
        tl.store(x + 20 + offs, 1.0)
        tl.store(x + n + offs, 2.0)  # out of bounds for n = 60

    with pytest.raises(EmulatorError):
        write_then_fail[(1,)](base[:4], 60, backend="emulator")
    assert (base == 0).all()
