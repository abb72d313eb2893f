"""MiniTriton's stand-in for Inductor's heuristics, and Triton's host-side names, without torch.

A kernel decorated the way Inductor decorates its kernels launches with
Inductor's calling convention (``kernel.run(*args, stream=...)``) on NumPy
arrays; the grids of Inductor's grid types; the backend registry, options
and version key that libraries built on Triton read.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backends import backends, make_backend
from minitriton.compiler.compiler import triton_key
from minitriton.inductor import heuristics, is_inductor_file
from minitriton.runtime.driver import GPUTarget, driver


class Device:
    """What Inductor's ``DeviceProperties`` offers the heuristics."""

    major = 9
    multi_processor_count = 132


META = {"signature": {}, "device": Device(), "constants": {}}


@triton.jit
def add_one(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xmask) + 1.0, xmask)


@triton.jit
def row_sum(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    acc = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + tl.arange(0, R0_BLOCK)[None, :]
        mask = (r0_index < r0_numel) & xmask
        acc += tl.load(in_ptr0 + r0_index + r0_numel * xindex, mask, other=0.0)
    tl.store(out_ptr0 + xindex, tl.sum(acc, 1)[:, None], xmask)


def test_pointwise_launches_with_inductors_calling_convention() -> None:
    kernel = heuristics.pointwise(
        {"x": 1024}, META, inductor_meta={"grid_type": "Grid1D"}
    )(add_one)  # fmt: skip
    assert kernel.config.kwargs == {"XBLOCK": 256} and kernel.config.num_warps == 4
    x = np.arange(1000, dtype=np.float32)
    y = np.zeros_like(x)
    kernel.run(x, y, 1000, stream=0)
    np.testing.assert_array_equal(y, x + 1)


def test_reduction_loops_over_the_row_with_its_first_config() -> None:
    kernel = heuristics.reduction(
        {"x": 8, "r0_": 4096}, "INNER", META, inductor_meta={"grid_type": "Grid1D"}
    )(row_sum)  # fmt: skip
    assert kernel.config.kwargs == {"XBLOCK": 1, "R0_BLOCK": 2048}
    assert kernel.config.num_warps == 16
    x = np.random.default_rng(0).standard_normal((5, 3000)).astype(np.float32)
    out = np.zeros(5, dtype=np.float32)
    kernel.run(x, out, 5, 3000, stream=None)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5, atol=1e-4)


def test_an_older_file_passes_the_grid() -> None:
    """torch before 2.7 wrote ``kernel.run(*args, grid=grid(xnumel), stream=...)``."""
    kernel = heuristics.pointwise([1024], META)(add_one)
    x = np.arange(600, dtype=np.float32)
    y = np.zeros_like(x)
    kernel.run(x, y, 600, grid=heuristics.grid(600), stream=0)
    np.testing.assert_array_equal(y, x + 1)


def test_wrong_argument_count_names_the_arguments() -> None:
    kernel = heuristics.pointwise({"x": 64}, META, inductor_meta={"grid_type": "Grid1D"})(add_one)
    with pytest.raises(TypeError, match=r"takes 3 arguments \(in_ptr0, out_ptr0, xnumel\), not 2"):
        kernel.run(np.zeros(4), np.zeros(4), stream=0)


@pytest.mark.parametrize(
    ("grid_type", "named", "expected"),
    [
        ("Grid1D", {"xnumel": 1000, "XBLOCK": 256}, (4, 1, 1)),
        ("Grid2D", {"xnumel": 100, "XBLOCK": 32, "ynumel": 70, "YBLOCK": 16}, (4, 5, 1)),
        ("SplitScanGrid", {"xnumel": 3, "r0_numel": 3000, "R0_BLOCK": 1024}, (3, 3, 1)),
        ("CooperativeReductionGrid", {"xnumel": 10, "XBLOCK": 4, "RSPLIT": 8}, (8, 3, 1)),
        ("Grid2DWithYZOverflow", {"xnumel": 1, "XBLOCK": 1, "ynumel": 70000, "YBLOCK": 1},
         (1, 35000, 2)),
    ],
)  # fmt: skip
def test_grid_types(grid_type: str, named: dict, expected: tuple) -> None:
    assert heuristics.launch_grid(grid_type, named, {}) == expected


def test_combo_and_fixed_grids() -> None:
    combo = {"num_kernels": 2, "min_blocks": 0, "default_config": {"XBLOCK": 1024},
             "no_x_dim_0": False, "xnumel_0": 3000,
             "no_x_dim_1": False, "xnumel_1": None}  # fmt: skip
    meta = {"combo_grid_meta": combo}
    assert heuristics.launch_grid("SequentialComboKernelGrid", {"xnumel_1": 37}, meta) == (4, 1, 1)
    assert heuristics.launch_grid("RoundRobinComboKernelGrid", {"xnumel_1": 37}, meta) == (6, 1, 1)
    fixed = {"fixed_grid": ["_grid_0", "_grid_1", 1]}
    assert heuristics.launch_grid("FixedGrid", {"_grid_0": 4, "_grid_1": 2}, fixed) == (4, 2, 1)
    with pytest.raises(NotImplementedError, match="no grid of type 'Mystery'"):
        heuristics.launch_grid("Mystery", {}, {})


def test_tiled_reductions_say_they_are_not_covered() -> None:
    with pytest.raises(NotImplementedError, match="tiled reductions"):
        heuristics.reduction({"y": 16, "x": 16, "r0_": 64}, "INNER", META)(row_sum)


def test_inductor_files_are_told_apart(tmp_path) -> None:
    ordinary = tmp_path / "script.py"
    ordinary.write_text("import triton\n@triton.jit\ndef k(x):\n    pass\n")
    assert not is_inductor_file(ordinary) and not is_inductor_file(tmp_path / "missing.py")
    inductor = tmp_path / "kernel.py"
    inductor.write_text(
        "from torch._inductor.runtime import triton_helpers, triton_heuristics\n"
        "@triton_heuristics.pointwise(size_hints={'x': 8}, triton_meta={})\n"
    )
    assert is_inductor_file(inductor)


def test_backend_registry_options_and_key() -> None:
    backend = make_backend(GPUTarget("cuda", 90, 32))
    assert isinstance(backend, backends["nvidia"].compiler)
    assert backends["nvidia"].driver.is_active()
    options = backend.parse_options({"num_warps": 8, "not_an_option": 1})
    assert (options.num_warps, options.arch) == (8, "sm_90")
    assert backend.hash() == f"{triton_key()}-sm_90"
    with pytest.raises(RuntimeError, match="no backend for target"):
        make_backend(GPUTarget("hip", "gfx942", 64))


def test_triton_key_follows_the_compiler_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    from minitriton import ircache

    before = triton_key()
    monkeypatch.setattr(ircache, "compiler_digest", lambda: "another-digest")
    assert triton_key() != before and triton_key().endswith("another-digest")


def test_driver_set_active_and_reset() -> None:
    from minitriton.runtime import driver as driver_module

    first = driver.active
    other = driver_module.ActiveDriver()
    driver.set_active(other)
    try:
        assert driver.active is other and driver_module.active is other
    finally:
        driver.reset_active()
    assert driver.active is first is driver.default
