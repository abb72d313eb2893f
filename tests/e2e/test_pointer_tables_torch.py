"""Tables of ``tensor.data_ptr()`` addresses (Triton's grouped-GEMM tutorial) with torch.

On the GPU the addresses are device addresses of CUDA tensors; on the
emulator, host addresses of CPU tensors that the kernel never gets as
arguments: the emulator finds the live tensor that holds each address.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from minitriton.diagnostics import UserError
from tests.kernels import language_gaps as K
from tests.kernels.grouped_gemm import group_gemm

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _device(backend: str) -> str:
    return "cuda" if backend == "gpu" else "cpu"


@pytest.mark.parametrize("shapes", [[(64, 32, 96), (32, 64, 32), (96, 96, 64)], [(128,) * 3]])
def test_grouped_gemm(backend: str, shapes: list[tuple[int, int, int]]) -> None:
    gen = torch.Generator().manual_seed(8)
    device = _device(backend)
    group_a = [torch.randn((m, k), generator=gen).half().to(device) for m, _, k in shapes]
    group_b = [torch.randn((k, n), generator=gen).half().to(device) for _, n, k in shapes]
    group_c = group_gemm(group_a, group_b, num_sm=4, backend=backend)
    for a, b, c in zip(group_a, group_b, group_c, strict=True):
        ref = a.float() @ b.float()
        torch.testing.assert_close(c.float(), ref, atol=2e-2, rtol=2e-3)


def test_tensors_in_a_list_only() -> None:
    # The tensors live only inside a list; the table holds views' addresses.
    rows = [torch.arange(8, dtype=torch.float32) * (i + 1) for i in range(3)]
    table = torch.tensor([rows[2][3:].data_ptr(), rows[0].data_ptr()], dtype=torch.int64)
    out = torch.zeros((2, 5))
    K.gather_rows_kernel[(2,)](table, out, 5, BLOCK=8, backend="emulator")
    assert torch.equal(out[0], rows[2][3:8]) and torch.equal(out[1], rows[0][:5])


def test_cuda_address_on_the_emulator_is_a_located_error() -> None:
    table = torch.tensor([0x7F0000000000], dtype=torch.int64)  # no live CPU array there
    with pytest.raises(UserError, match="is not inside any array"):
        K.gather_rows_kernel[(1,)](table, torch.zeros(4), 4, BLOCK=4, backend="emulator")


def test_standard_module_under_the_import_swap() -> None:
    code = (
        "from minitriton.compat import alias_triton; alias_triton()\n"
        "from triton.language.standard import _log2\n"
        "import triton.language as tl\n"
        "print(_log2(1024), tl.standard._log2(8), tl.core.get_int_dtype(16, True) == tl.int16)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["10", "3", "True"]


def test_zero_matrices_give_zero_products() -> None:
    # Two problems in one launch of two programs, with a K block of 16.
    a = [torch.zeros((32, 16), dtype=torch.float16) for _ in range(2)]
    b = [torch.zeros((16, 32), dtype=torch.float16) for _ in range(2)]
    c = group_gemm(a, b, num_sm=2, block=(32, 32, 16), backend="emulator")
    assert all(np.array_equal(x.numpy(), np.zeros((32, 32), np.float16)) for x in c)
