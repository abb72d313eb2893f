"""Ragged descriptors (``triton.tools.ragged_tma``) and descriptor atomics, against NumPy.

A ragged descriptor's coordinates wrap around 64 bits to the slice's rows;
its bounds check stops at the slice's end, not the tensor's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minitriton.tools.ragged_tma import create_ragged_descriptor
from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import ragged as K


def test_slices_of_unequal_sizes_are_read_and_written_within_their_rows(backend: str) -> None:
    sizes = np.array([5, 11, 0, 7, 16], np.int32)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    src = np.arange(sizes.sum() * 16, dtype=np.float32).reshape(-1, 16)
    dst = np.full_like(src, -1.0)
    acc = np.ones_like(src)
    descs = [create_ragged_descriptor(a, [8, 16]) for a in (src, dst, acc)]
    K.ragged_copy_kernel[(len(sizes),)](*descs, offsets, sizes, BM=8, backend=backend)
    np.testing.assert_array_equal(dst, 2 * src)
    np.testing.assert_array_equal(acc, src + 1)


def test_a_ragged_descriptor_refuses_a_ragged_last_dimension() -> None:
    with pytest.raises(ValueError, match="last dimension cannot be ragged"):
        create_ragged_descriptor(np.zeros((4, 16), np.float32), [4, 16], ragged_dim=1)


@pytest.mark.parametrize("kind", ["add", "max", "xor"])
def test_descriptor_atomics_combine_every_programs_block(backend: str, kind: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1000, (3, 4, 8)).astype(np.int32)
    out = np.zeros((8, 8), np.int32)  # the block at [2, 4] runs past the last column
    desc = TensorDescriptor.from_tensor(out, [4, 8])
    K.descriptor_atomics_kernel[(3,)](desc, x, KIND=kind, BM=4, BN=8, backend=backend)
    combine = {"add": np.add, "max": np.maximum, "xor": np.bitwise_xor}[kind]
    want = np.zeros((8, 8), np.int32)
    block = combine.reduce(x, axis=0)
    want[2:6, 4:8] = combine(want[2:6, 4:8], block[:, :4])
    np.testing.assert_array_equal(out, want)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_ragged_and_atomic_kernels_assemble(arch: str, tmp_path: Path) -> None:
    desc = "tensordesc<fp32[1, 1, 8, 16]>"
    assemble(K.ragged_copy_kernel, f"{desc}, {desc}, {desc}, *i32, *i32, 8", arch, tmp_path)
    ptx = assemble(K.descriptor_atomics_kernel, 'tensordesc<i32[4, 8]>, *i32, "add", 4, 8',
                   arch, tmp_path).ptx  # fmt: skip
    assert "atom.global.gpu.relaxed.add" in ptx
