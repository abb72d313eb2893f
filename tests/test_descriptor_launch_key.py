"""The launch fast path's key for host tensor descriptors (no GPU needed).

A launch with a descriptor reuses a cached kernel when its key equals an
earlier one's: the key must separate every pair of descriptors that compile
or check differently, and nothing else.
"""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.jit import _FullPath, descriptor_key
from minitriton.signature import descriptor_spec, parse_signature
from minitriton.tools.tensor_descriptor import TensorDescriptor

torch = pytest.importorskip("torch")
jit_module = importlib.import_module("minitriton.jit")

pytestmark = pytest.mark.torch  # CI runs these in its torch step


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


@triton.jit
def _scale_kernel(in_desc, out_desc, factor, BM: tl.constexpr, BN: tl.constexpr):
    tile = in_desc.load([tl.program_id(0) * BM, 0])
    out_desc.store([tl.program_id(0) * BM, 0], tile * factor)


def test_a_fast_entry_fills_the_slots_the_full_path_fills() -> None:
    # The fast path reads each kernel argument out of the Python arguments (a descriptor's
    # base, sizes and strides); it must give what the full path's kernel_args gives.
    x = torch.randn(64, 96)
    descs = [TensorDescriptor.from_tensor(t, [32, 64]) for t in (x, torch.empty_like(x))]
    names = ["in_desc", "out_desc"]
    specs = [descriptor_spec(n, d) for n, d in zip(names, descs)]
    specs += parse_signature("fp32, 32, 64", _scale_kernel.params[2:])
    options = CompileOptions(num_warps=4, arch="sm_90a")
    compiled = compile_kernel(_scale_kernel.source, specs, options, stop_after="ptx")
    values = (*descs, 2.0, 32, 64)
    bound = dict(zip(_scale_kernel.arg_names, values))
    take, fields = jit_module._slot_sources(compiled, bound, _scale_kernel.arg_names)
    got = [values[i] if f is None else f(values[i]) for i, f in zip(take, fields)]
    want = [value for _, value in jit_module.kernel_args(compiled, bound)]
    assert len(got) == len(want) == 9  # two descriptors of rank 2, and the factor
    assert all(g is w for g, w in zip(got, want) if hasattr(w, "data_ptr"))
    assert [g for g in got if not hasattr(g, "data_ptr")] == [
        w for w in want if not hasattr(w, "data_ptr")
    ]
