"""Triton's host-side API: ``triton.testing``, ``triton.runtime.driver`` and compiled kernels."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiled_api import EMULATOR_N_REGS, EMULATOR_SHARED
from minitriton.runtime.driver import EMULATED_PROPERTIES, GPUTarget
from minitriton.testing import EmulatorTimingWarning


@triton.jit
def scale(x_ptr, y_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


# ---------------------------------------------------------------- compiled kernels


def test_compiled_kernel_reports_emulator_stand_ins() -> None:
    x = np.ones(10, dtype=np.float32)
    kernel = scale.warmup(x, x, 10, FACTOR=2.0, BLOCK=16, grid=(1,), backend="emulator")
    kernel._init_handles()
    assert (kernel.n_regs, kernel.n_spills) == (EMULATOR_N_REGS, 0)
    assert kernel.metadata.shared == EMULATOR_SHARED
    assert kernel.metadata.num_warps == 4


def test_compiled_kernel_launches_with_all_parameters() -> None:
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, dtype=np.float32)
    kernel = scale.warmup(x, y, 100, FACTOR=3.0, BLOCK=32, grid=(1,), backend="emulator")
    kernel[(4, 1, 1)](x, y, 100, 3.0, 32)  # constexprs too, as tutorial 02 passes them
    np.testing.assert_array_equal(y, x * 3)


def test_compiled_kernel_rejects_another_constexpr() -> None:
    x = np.zeros(8, dtype=np.float32)
    kernel = scale.warmup(x, x, 8, FACTOR=3.0, BLOCK=8, grid=(1,), backend="emulator")
    with pytest.raises(ValueError, match="compiled for FACTOR=3.0, not 4.0"):
        kernel[(1,)](x, x, 8, 4.0, 8)


@pytest.mark.gpu
def test_compiled_kernel_reports_the_gpu_figures() -> None:
    x = np.ones(1024, dtype=np.float32)
    kernel = scale.warmup(x, x, 1024, FACTOR=2.0, BLOCK=1024, grid=(1,), backend="gpu")
    kernel._init_handles()
    assert 0 < kernel.n_regs <= 255
    assert kernel.n_spills >= 0
    assert kernel.metadata.shared == kernel.binary.shared


# ---------------------------------------------------------------- the driver


def test_driver_stand_ins_on_the_emulator() -> None:
    triton.set_backend("emulator")
    try:
        active = triton.runtime.driver.active
        assert active.get_current_target() == GPUTarget("cuda", 90, 32)
        props = active.utils.get_device_properties(0)
        assert props == EMULATED_PROPERTIES
        assert props["multiprocessor_count"] == 132
        active.get_device_interface().synchronize()
    finally:
        triton.set_backend(None)


def test_active_torch_device_is_the_host_on_the_emulator() -> None:
    torch = pytest.importorskip("torch")
    triton.set_backend("emulator")
    try:
        assert triton.runtime.driver.active.get_active_torch_device() == torch.device("cpu")
    finally:
        triton.set_backend(None)


@pytest.mark.gpu
def test_driver_reports_the_gpu() -> None:
    triton.set_backend("gpu")
    try:
        active = triton.runtime.driver.active
        target = active.get_current_target()
        assert target.backend == "cuda" and target.arch >= 80
        props = active.utils.get_device_properties(0)
        assert props["multiprocessor_count"] > 0 and props["warpSize"] == 32
    finally:
        triton.set_backend(None)


# ---------------------------------------------------------------- triton.testing


def test_do_bench_times_the_emulator_and_says_so() -> None:
    x = np.ones(64, dtype=np.float32)
    calls = []

    def run() -> None:
        calls.append(1)
        scale[(1,)](x, x, 64, FACTOR=1.0, BLOCK=64, backend="emulator")

    triton.testing._warned[0] = False
    with pytest.warns(EmulatorTimingWarning, match="timing MiniTriton's emulator"):
        ms = triton.testing.do_bench(run, warmup=1, rep=5)
    assert isinstance(ms, float) and ms > 0
    assert len(calls) >= 2  # the first call, then at least one timed run
    median, low, high = triton.testing.do_bench(run, warmup=1, rep=5, quantiles=[0.5, 0.2, 0.8])
    assert low <= median <= high


def test_do_bench_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="return_mode"):
        triton.testing.do_bench(lambda: None, return_mode="best")


def test_perf_report_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    @triton.testing.perf_report(
        triton.testing.Benchmark(
            x_names=["n"],
            x_vals=[1, 2, 3],
            line_arg="provider",
            line_vals=["a", "b"],
            line_names=["A", "B"],
            plot_name="toy",
            args={"k": 10},
        )
    )
    def bench(n: int, provider: str, k: int) -> tuple[float, float, float]:
        value = float(n * k if provider == "a" else -n)
        return value, value, value

    table = bench.run(print_data=True, return_df=True)
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == ["toy:", "n       A       B", "1  10.000  -1.000"]
    rows = table if isinstance(table, list) else table.to_dict("records")
    assert rows[2] == {"n": 3, "A": 30.0, "B": -3.0}


def test_bench_points_limits_the_x_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = []
    monkeypatch.setenv("MINITRITON_BENCH_POINTS", "1")
    mark = triton.testing.perf_report(
        triton.testing.Benchmark(["n"], [5, 6], "p", ["x"], ["X"], "lim")
    )(lambda n, p: seen.append(n) or 1.0)
    mark.run()
    assert seen == [5]
    assert "running 1 of 2 points" in capsys.readouterr().out


def test_assert_close() -> None:
    triton.testing.assert_close(np.array([1.0, 2.0]), np.array([1.005, 2.0]))
    with pytest.raises(AssertionError):
        triton.testing.assert_close(np.array([1.0]), np.array([1.1]))
    triton.testing.assert_close(np.array([1.0]), np.array([1.1]), atol=0, rtol=0.2)


def test_host_tensor_descriptors_are_not_pointers() -> None:
    from minitriton.tools.tensor_descriptor import TensorDescriptor

    x = np.zeros((4, 4), dtype=np.float32)
    desc = TensorDescriptor(x, [4, 4], [4, 1], [2, 2])
    # A descriptor is no pointer: `x_ptr + offs` on it is a located compile error.
    with pytest.raises(Exception, match="tensor descriptor") as info:
        scale[(1,)](desc, x, 16, FACTOR=1.0, BLOCK=16, backend="emulator")
    assert type(info.value).__name__ == "CompileError"
    assert "test_host_api.py:18:36: error: cannot use tensor descriptor" in str(info.value)


def test_metadata_reports_the_shared_memory_of_the_loaded_schedule() -> None:
    # A kernel compiled two ways keeps one at load; its shared memory is the one reported.
    from types import SimpleNamespace

    from minitriton.compiled_api import CompiledKernelAPI

    launcher = SimpleNamespace(shared=73728)
    binary = SimpleNamespace(_launcher=launcher, shared=98304, load=lambda: launcher)
    kernel = CompiledKernelAPI()
    kernel.binary, kernel.name = binary, "k"
    kernel.options = SimpleNamespace(num_warps=8, num_stages=3)
    assert kernel.metadata.shared == 73728
    assert kernel.metadata.num_warps == 8 and kernel.metadata.name == "k"


def test_perf_model_peaks_follow_the_device_properties() -> None:
    from minitriton import testing

    props = EMULATED_PROPERTIES
    assert testing.get_dram_gbps() == pytest.approx(
        props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 1e6 / 8
    )
    clock = props["sm_clock_rate"]
    sub_cores = props["multiprocessor_count"] * 4
    # Triton's model: 512 fp16 (or 1024 fp8) tensor-core ops, 32 fp32 FMA ops per sub-core
    assert testing.get_max_tensorcore_tflops("float16", clock) == pytest.approx(
        sub_cores * clock * 512 * 1e-9
    )
    assert testing.get_max_tensorcore_tflops(tl.float8e4nv, clock) == pytest.approx(
        2 * testing.get_max_tensorcore_tflops("bfloat16", clock)
    )
    assert testing.get_max_simd_tflops("float32", clock) == pytest.approx(
        sub_cores * clock * 32 * 1e-9
    )
    with pytest.raises(RuntimeError, match="dtype not supported"):
        testing.get_max_simd_tflops("int8", clock)
