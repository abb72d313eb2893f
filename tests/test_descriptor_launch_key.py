"""The launch fast path's key for host tensor descriptors (no GPU needed).

A launch with a descriptor reuses a cached kernel when its key equals an
earlier one's: the key must separate every pair of descriptors that compile
or check differently, and nothing else.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from minitriton.jit import _FullPath, descriptor_key
from minitriton.signature import descriptor_spec
from minitriton.tools.tensor_descriptor import TensorDescriptor

torch = pytest.importorskip("torch")


def _desc(rows: int, cols: int, block: list[int], dtype=torch.float16, cut: int = 0):  # noqa: ANN001, ANN202
    base = torch.zeros(rows, cols + cut, dtype=dtype)[:, :cols]  # cut: a wider row stride
    return TensorDescriptor.from_tensor(base, block)


LAYOUTS = [
    (64, 128, [32, 64], torch.float16, 0),
    (96, 64, [32, 64], torch.float16, 0),  # other sizes, the same multiples of 16
    (50, 72, [32, 64], torch.float16, 0),  # sizes and stride not multiples of 16
    (64, 128, [32, 32], torch.float16, 0),  # another block shape
    (64, 128, [32, 64], torch.bfloat16, 0),  # another element type
    (64, 120, [32, 64], torch.float16, 8),  # row stride 128, size 120
    (64, 64, [32, 64], torch.float32, 4),  # row stride 68 floats: 272 bytes
]


def test_equal_keys_mean_the_same_specialization() -> None:
    descs = [_desc(*layout) for layout in LAYOUTS]
    for a, b in itertools.combinations(descs, 2):
        same_spec = (descriptor_spec("d", a).value, a.base.dtype) == (
            descriptor_spec("d", b).value, b.base.dtype)  # fmt: skip
        if descriptor_key(a) == descriptor_key(b):
            assert same_spec, (a, b)


def test_the_key_separates_what_specializes_differently() -> None:
    keys = [descriptor_key(_desc(*layout)) for layout in LAYOUTS]
    assert keys[0] == keys[1]  # only the sizes' values differ: one kernel for both
    assert len(set(keys)) == len(keys) - 1


def test_numpy_descriptors_take_the_full_path() -> None:
    desc = TensorDescriptor.from_tensor(np.zeros((64, 64), np.float16), [32, 32])
    with pytest.raises(_FullPath):
        descriptor_key(desc)
