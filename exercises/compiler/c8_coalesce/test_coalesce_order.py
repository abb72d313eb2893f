"""Tests for exercise c8: the blocked order of a load or a store, from its pointers' contiguity.

``memory_order(contig, shape)`` (in ``minitriton/backend/coalesce.py``)
gets, per dim of a block of pointers, how many consecutive elements along
that dim have consecutive addresses (the axis analysis's contiguity), and
the block's shape. It returns the ``order`` of the blocked layout that
loads the block coalesced, fastest dim first, or None where the default
layout serves. Golden orders worked out by hand, the properties of the
rule, and the PTX of a column-major copy compiled with it (no GPU needed).
"""

from __future__ import annotations

import importlib.util
import itertools
import re
from typing import Any

import numpy as np
import pytest

from minitriton.backend import clear_memory_cache, coalesce
from minitriton.compiler import CompileOptions, compile_kernel

pytestmark = pytest.mark.exercise("c8-coalesce")


def order(contig: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The order under test (looked up at each call: the grader may put it in place)."""
    got = coalesce.memory_order(contig, shape)
    return None if got is None else tuple(got)


# ---------------------------------------------------------------- golden orders


@pytest.mark.parametrize(
    "contig, shape, expected",
    [
        # x_ptr + m[:, None] * 1 + n[None, :] * 64: a column-major tile (a.T)
        pytest.param((64, 1), (64, 64), (0, 1), id="column-major"),
        # x_ptr + m[:, None] * 64 + n[None, :]: row-major, the default order
        pytest.param((1, 64), (64, 64), (1, 0), id="row-major"),
        # dim 0 is more contiguous than dim 1: it comes first
        pytest.param((8, 2), (8, 8), (0, 1), id="more-contiguous-first"),
        # a [64, 1] block: its only long dim is dim 0
        pytest.param((64, 1), (64, 1), (0, 1), id="64x1-block"),
        # a [1, 64] block: its only long dim is dim 1
        pytest.param((1, 64), (1, 64), (1, 0), id="1x64-block"),
        # rows gathered through an index array, each row contiguous
        pytest.param((1, 64), (64, 64), (1, 0), id="rows-through-an-index"),
        # nothing contiguous anywhere (a gather of single elements): the default serves
        pytest.param((1, 1), (64, 64), None, id="element-gather"),
        # a 1-D block: the default layout serves it
        pytest.param((64,), (64,), None, id="1d-block"),
        # 3-D: the contiguous dim first, then the others from last to first
        pytest.param((1, 8, 1), (8, 8, 8), (1, 2, 0), id="3d-middle-contiguous"),
        pytest.param((8, 1, 1), (8, 8, 8), (0, 2, 1), id="3d-first-contiguous"),
        pytest.param((1, 1, 8), (8, 8, 8), (2, 1, 0), id="3d-row-major"),
        pytest.param((8, 2, 1), (8, 8, 8), (0, 2, 1), id="3d-others-not-by-contiguity"),
        # ties go to the higher dim
        pytest.param((4, 4), (8, 8), (1, 0), id="tie"),
        pytest.param((4, 4, 1), (8, 8, 8), (1, 2, 0), id="3d-tie"),
        # a dim of size 1 never comes first, whatever its contiguity says
        pytest.param((8, 4), (1, 8), (1, 0), id="size_1-dim-first-in-contig"),
    ],
)
def test_golden_order(
    contig: tuple[int, ...], shape: tuple[int, ...], expected: tuple[int, ...] | None
) -> None:
    got = order(contig, shape)
    assert got == expected, f"memory_order({contig}, {shape}) is {got}, expected {expected}"


# ---------------------------------------------------------------- properties

SHAPES = [
    (8, 8),
    (64, 1),
    (1, 64),
    (1, 1),
    (8, 8, 8),
    (1, 8, 8),
    (8, 1, 8),
    (8, 8, 1),
    (4, 1, 1),
    (2, 4, 8),
    (2, 2, 2, 2),
]


def _ids(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _contigs(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every contiguity of 1, 2, 4 or 8 per dim (also on dims of size 1)."""
    return list(itertools.product((1, 2, 4, 8), repeat=len(shape)))


def _long(shape: tuple[int, ...]) -> list[int]:
    return [d for d in range(len(shape)) if shape[d] > 1]


def _orders(shape: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(contig, order) for each contiguity that gets an order."""
    out = []
    for contig in _contigs(shape):
        got = order(contig, shape)
        if got is not None:
            assert _long(shape), f"memory_order({contig}, {shape}) is {got}: a block of one element"
            out.append((contig, got))
    return out


@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_the_order_is_a_permutation_of_the_dims(shape: tuple[int, ...]) -> None:
    for contig, got in _orders(shape):
        assert sorted(got) == list(range(len(shape))), (
            f"memory_order({contig}, {shape}) is {got}: not each dim once"
        )


@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_the_fastest_dim_is_the_most_contiguous(shape: tuple[int, ...]) -> None:
    for contig, got in _orders(shape):
        best = max(contig[d] for d in _long(shape))
        assert contig[got[0]] == best, (
            f"memory_order({contig}, {shape}) is {got}: dim {got[0]} first has contiguity "
            f"{contig[got[0]]}, but a dim of more than one element has {best}"
        )


@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_dims_of_size_1_never_come_first(shape: tuple[int, ...]) -> None:
    for contig, got in _orders(shape):
        assert shape[got[0]] > 1, (
            f"memory_order({contig}, {shape}) is {got}: dim {got[0]} has one element"
        )


@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_a_tie_goes_to_the_higher_dim(shape: tuple[int, ...]) -> None:
    for contig, got in _orders(shape):
        best = max(contig[d] for d in _long(shape))
        ties = [d for d in _long(shape) if contig[d] == best]
        if len(ties) > 1:
            assert got[0] == ties[-1], (
                f"memory_order({contig}, {shape}) is {got}: dims {ties} tie, "
                "the highest comes first"
            )


@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_the_other_dims_run_last_to_first(shape: tuple[int, ...]) -> None:
    for contig, got in _orders(shape):
        rest = sorted((d for d in range(len(shape)) if d != got[0]), reverse=True)
        assert list(got[1:]) == rest, (
            f"memory_order({contig}, {shape}) is {got}: after dim {got[0]}, "
            f"the others go from the last to the first: {rest}"
        )


@pytest.mark.parametrize("shape", [*SHAPES, (64,), (1,)], ids=_ids)
def test_none_only_for_gathers_and_1d_blocks(shape: tuple[int, ...]) -> None:
    for contig in _contigs(shape):
        got = order(contig, shape)
        gather = all(contig[d] <= 1 for d in _long(shape))
        if len(shape) < 2 or gather:
            why = "a 1-D block" if len(shape) < 2 else "no dim of size > 1 is contiguous"
            assert got is None, f"memory_order({contig}, {shape}) is {got}, not None: {why}"
        else:
            assert got is not None, (
                f"memory_order({contig}, {shape}) is None: a dim of size > 1 is contiguous"
            )


# ---------------------------------------------------------------- the effect on the PTX

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def copy2d(x_ptr, y_ptr, sxm, sxn, sym, syn, M: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    x = tl.load(x_ptr + m[:, None] * sxm + n[None, :] * sxn)
    tl.store(y_ptr + m[:, None] * sym + n[None, :] * syn, x)
"""


@pytest.fixture(scope="module")
def copy2d(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("c8") / "c8_copy_kernels.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("c8_copy_kernels", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.copy2d


def _ptx(fn: Any, strides: tuple[int, int, int, int]) -> str:
    x = np.zeros((64, 64), np.float32)
    specs = fn.specialize(fn.bind((x, x, *strides), {"M": 64, "N": 64}))
    options = CompileOptions(arch="sm_90a", num_warps=4)
    return str(compile_kernel(fn.source, specs, options, stop_after="ptx").asm["ptx"])


@pytest.mark.parametrize(
    "layout, strides",
    [
        pytest.param("column-major", (1, 64, 1, 64), id="column-major"),
        pytest.param("row-major", (64, 1, 64, 1), id="row-major"),
    ],
)
def test_a_copy_loads_and_stores_16_byte_vectors(
    copy2d: Any, layout: str, strides: tuple[int, int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Compile afresh: no kernel cache may answer for the order under test.
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    clear_memory_cache()
    ptx = _ptx(copy2d, strides)
    clear_memory_cache()
    # 64 x 64 fp32 = 16 KiB, 128 threads, 16 bytes a vector: 8 vectors a thread each way.
    loads = len(re.findall(r"ld\.global(?:\.\w+)*\.v4", ptx))
    stores = len(re.findall(r"st\.global(?:\.\w+)*\.v4", ptx))
    assert (loads, stores) == (8, 8), (
        f"a {layout} 64x64 fp32 copy: {loads} ld.global.v4 and {stores} st.global.v4 "
        "a thread, expected 8 and 8 (16-byte vectors along the contiguous dim)"
    )
