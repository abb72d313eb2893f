"""``triton.testing``: timing, benchmark tables and checks, as Triton's tutorials use them.

* :func:`do_bench` times a callable and returns milliseconds (or the
  requested quantiles). With the GPU backend it times the GPU (CUDA events
  through torch when torch sees the GPU, else a synchronize around each
  run); on the emulator it times the emulator, NumPy on the CPU, and warns
  once that it does (:class:`EmulatorTimingWarning`): such figures say
  nothing about a GPU.
* :func:`do_bench_cudagraph` times ``fn`` replayed from a CUDA graph, as
  Triton's does, where torch sees the GPU; elsewhere (the emulator, or the
  GPU backend without torch) it is :func:`do_bench`.
* :func:`perf_report` and :class:`Benchmark` make a benchmark whose
  ``.run(print_data=True)`` prints a table (one row per x value, one column
  per line). ``show_plots`` and ``save_path`` plot with matplotlib when it is
  installed. ``MINITRITON_BENCH_POINTS=N`` runs only the first ``N`` x
  values, and says so (the emulator is slow on GPU-sized inputs).
* :func:`assert_close` compares two arrays or tensors with NumPy.
* Triton's performance-model helpers: :func:`get_dram_gbps`,
  :func:`get_max_tensorcore_tflops` and :func:`get_max_simd_tflops` compute
  a GPU's peak figures from the driver's device properties (on the emulator,
  those of the emulated H200); :func:`nvsmi` queries ``nvidia-smi``;
  :func:`set_gpu_clock` locks the clocks for a ``with`` block and
  :func:`cuda_memcheck` reruns a test under ``cuda-memcheck``, as Triton's do.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BENCH_POINTS_ENV = "MINITRITON_BENCH_POINTS"


class EmulatorTimingWarning(UserWarning):
    """``do_bench`` timed the emulator, not a GPU."""


_warned = [False]


def _on_gpu() -> bool:
    from minitriton.runtime.driver import _on_gpu as on_gpu

    return on_gpu()


def do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    grad_to_none: Any = None,
    quantiles: Sequence[float] | None = None,
    return_mode: str = "mean",
) -> float | list[float]:
    """Run ``fn`` for about ``rep`` ms after about ``warmup`` ms; its time per run in ms.

    ``quantiles`` (e.g. ``[0.5, 0.2, 0.8]``) returns those quantiles instead;
    ``return_mode`` is ``"mean"``, ``"median"``, ``"min"``, ``"max"`` or ``"all"``.
    """
    if return_mode not in ("mean", "median", "min", "max", "all"):
        raise ValueError(f"return_mode must be mean, median, min, max or all, got {return_mode!r}")
    timer = _gpu_timer() if _on_gpu() else _host_timer()
    fn()  # compile, and a first estimate below
    estimate = max(timer(fn), 1e-3)
    for _ in range(max(0, min(1000, int(warmup / estimate)))):
        fn()
    runs = max(1, min(1000, int(rep / estimate)))
    times = []
    for _ in range(runs):
        _clear_grads(grad_to_none)
        times.append(timer(fn))
    return _summary(times, quantiles, return_mode)


def do_bench_cudagraph(
    fn: Callable[[], Any],
    rep: float = 20,
    grad_to_none: Any = None,
    quantiles: Sequence[float] | None = None,
    return_mode: str = "mean",
) -> float | list[float]:
    """``fn``'s time per run in ms, replayed from a CUDA graph of about ``rep`` ms.

    A graph holds many runs, so the figure leaves out the host's launch cost.
    Capture needs torch with a GPU (MiniTriton's launches go on torch's
    current stream, so they are captured); without one this is
    :func:`do_bench` with the same arguments.
    """
    if return_mode not in ("mean", "median", "min", "max", "all"):
        raise ValueError(f"return_mode must be mean, median, min, max or all, got {return_mode!r}")
    torch = _torch_with_gpu() if _on_gpu() else None
    if torch is None:
        return do_bench(
            fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles, return_mode=return_mode
        )
    with torch.cuda.stream(torch.cuda.Stream()):
        fn()  # compile and warm up outside the graph
        estimate = _event_timer(torch)(lambda: [fn() for _ in range(5)]) / 5
        repeat = max(1, int(rep / estimate)) if estimate > 0 else 1000
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(repeat):
                _clear_grads(grad_to_none)
                fn()
        torch.cuda.synchronize()
        times = [_event_timer(torch)(graph.replay) / repeat for _ in range(10)]
    return _summary(times, quantiles, return_mode)


def _torch_with_gpu() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _host_timer() -> Callable[[Callable[[], Any]], float]:
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "do_bench is timing MiniTriton's emulator (NumPy on the CPU), not a GPU",
            EmulatorTimingWarning,
            stacklevel=3,
        )

    def timer(fn: Callable[[], Any]) -> float:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3

    return timer


def _gpu_timer() -> Callable[[Callable[[], Any]], float]:
    torch = _torch_with_gpu()
    if torch is not None:
        return _event_timer(torch)
    from minitriton.backend.driver import synchronize

    def timer(fn: Callable[[], Any]) -> float:
        synchronize()
        start = time.perf_counter()
        fn()
        synchronize()
        return (time.perf_counter() - start) * 1e3

    return timer


def _event_timer(torch: Any) -> Callable[[Callable[[], Any]], float]:
    def timer(fn: Callable[[], Any]) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        return float(start.elapsed_time(end))

    return timer


def _clear_grads(grad_to_none: Any) -> None:
    for x in grad_to_none or ():
        x.grad = None


def _summary(
    times: list[float], quantiles: Sequence[float] | None, return_mode: str
) -> float | list[float]:
    if quantiles is not None:
        values = np.quantile(np.array(times), list(quantiles)).tolist()
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return times
    pick: dict[str, Callable[[list[float]], float]] = {
        "mean": statistics.fmean,
        "median": statistics.median,
        "min": min,
        "max": max,
    }
    return float(pick[return_mode](times))


def assert_close(
    x: Any, y: Any, atol: float | None = None, rtol: float | None = None, err_msg: str = ""
) -> None:
    """Assert ``x`` and ``y`` are equal within ``atol`` (default 1e-2) and ``rtol`` (default 0)."""
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    np.testing.assert_allclose(_numpy(x), _numpy(y), atol=atol, rtol=rtol, err_msg=err_msg)


def _numpy(x: Any) -> Any:
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        return x.float().numpy() if str(x.dtype) == "torch.bfloat16" else x.numpy()
    return np.asarray(x)


# ---------------------------------------------------------------- benchmarks


@dataclass
class Benchmark:
    """One benchmark table: ``x_names`` over ``x_vals``, one line per ``line_vals`` entry."""

    x_names: list[str]
    x_vals: list[Any]
    line_arg: str
    line_vals: list[Any]
    line_names: list[str]
    plot_name: str
    args: dict[str, Any] = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    x_log: bool = False
    y_log: bool = False
    styles: Any = None


class Mark:
    """A benchmark function with its :class:`Benchmark` (what :func:`perf_report` returns)."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | list[Benchmark]) -> None:
        self.fn = fn
        self.benchmarks = benchmarks

    def run(
        self,
        show_plots: bool = False,
        print_data: bool = False,
        save_path: str = "",
        return_df: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Run every benchmark; print, plot or save its table as asked."""
        benches = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        tables = [self._run(b, show_plots, print_data, save_path, **kwargs) for b in benches]
        if return_df:
            return tables[0] if len(tables) == 1 else tables
        return None

    def _run(
        self, bench: Benchmark, show_plots: bool, print_data: bool, save_path: str, **kwargs: Any
    ) -> Any:
        x_vals = _points(bench)
        rows = [self._row(bench, x, kwargs) for x in x_vals]
        if print_data:
            print(f"{bench.plot_name}:")
            print(_table(bench, rows))
        if show_plots or save_path:
            _plot(bench, rows, show_plots, save_path)
        return _frame(bench, rows)

    def _row(self, bench: Benchmark, x: Any, kwargs: dict[str, Any]) -> list[Any]:
        xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
        x_args = dict(zip(bench.x_names, xs))
        row = list(xs)
        for line in bench.line_vals:
            value = self.fn(**x_args, **{bench.line_arg: line}, **bench.args, **kwargs)
            row.append(value[0] if isinstance(value, (list, tuple)) else value)
        return row


def _points(bench: Benchmark) -> list[Any]:
    limit = os.environ.get(BENCH_POINTS_ENV, "")
    if not limit or int(limit) >= len(bench.x_vals):
        return list(bench.x_vals)
    n = max(1, int(limit))
    print(f"{bench.plot_name}: running {n} of {len(bench.x_vals)} points ({BENCH_POINTS_ENV})")
    return list(bench.x_vals)[:n]


def _table(bench: Benchmark, rows: list[list[Any]]) -> str:
    header = [*bench.x_names, *bench.line_names]
    cells = [header] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(str(c).rjust(w) for c, w in zip(r, widths)) for r in cells)


def _cell(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _frame(bench: Benchmark, rows: list[list[Any]]) -> Any:
    columns = [*bench.x_names, *bench.line_names]
    try:
        import pandas as pd
    except ImportError:
        return [dict(zip(columns, row)) for row in rows]
    return pd.DataFrame(rows, columns=columns)


def _plot(bench: Benchmark, rows: list[list[Any]], show: bool, save_path: str) -> None:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots()
    xs = [r[0] for r in rows]
    for i, name in enumerate(bench.line_names):
        ax.plot(xs, [r[len(bench.x_names) + i] for r in rows], label=name)
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    if bench.x_log:
        ax.set_xscale("log")
    if bench.y_log:
        ax.set_yscale("log")
    ax.legend()
    if save_path:
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    if show:
        plt.show()
    plt.close(fig)


def perf_report(benchmarks: Benchmark | list[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """Decorator: ``@perf_report(Benchmark(...))`` turns a function into a :class:`Mark`."""
    return lambda fn: Mark(fn, benchmarks)


# -- Triton's performance-model helpers ---------------------------------------------


def nvsmi(attrs: Sequence[str]) -> list[int]:
    """``nvidia-smi``'s integer values of ``attrs`` for GPU 0 (Triton's helper)."""
    import subprocess
    import sys

    cmd = ["nvidia-smi", "-i", "0", "--query-gpu=" + ",".join(attrs),
           "--format=csv,noheader,nounits"]  # fmt: skip
    out = subprocess.check_output(cmd).decode(sys.stdout.encoding or "utf-8")
    return [int(x) for x in out.split(",")]


def _device_properties(device: Any) -> dict[str, Any]:
    from minitriton.runtime import driver

    if device is None:
        device = driver.active.get_device_interface().current_device()
    properties: dict[str, Any] = driver.active.utils.get_device_properties(device)
    return properties


def get_dram_gbps(device: Any = None) -> float:
    """The GPU's DRAM bandwidth in GB/s, from its memory clock and bus width."""
    props = _device_properties(device)
    return props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 1e6 / 8


def _ops_per_sub_core(dtype: Any, table: dict[str, int]) -> int:
    # A torch dtype (``torch.float16``) or a tl one (``tl.float8e4nv``, named ``fp8e4nv``).
    name = str(getattr(dtype, "triton_name", None) or dtype).split(".")[-1]
    for names, ops in table.items():
        if name in names.split():
            return ops
    raise RuntimeError("dtype not supported")


def get_max_tensorcore_tflops(dtype: Any, clock_rate: float, device: Any = None) -> float:
    """Peak tensor-core TFLOP/s at ``clock_rate`` (kHz), as Triton's model counts them
    (compute capability 8 and later)."""
    table = {"float32 int32 fp32 i32": 256, "float16 bfloat16 int16 fp16 bf16 i16": 512,
             "int8 i8 float8e4nv float8e4b15 float8e5 fp8e4nv fp8e4b15 fp8e5": 1024}  # fmt: skip
    sub_cores = _device_properties(device)["multiprocessor_count"] * 4
    return sub_cores * clock_rate * _ops_per_sub_core(dtype, table) * 1e-9


def get_max_simd_tflops(dtype: Any, clock_rate: float, device: Any = None) -> float:
    """Peak FMA-unit TFLOP/s at ``clock_rate`` (kHz), as Triton's model counts them."""
    table = {"float32 fp32": 32, "float16 bfloat16 fp16 bf16": 64}
    sub_cores = _device_properties(device)["multiprocessor_count"] * 4
    return sub_cores * clock_rate * _ops_per_sub_core(dtype, table) * 1e-9


def cuda_memcheck(**target_kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Triton's decorator that reruns a pytest test under ``cuda-memcheck`` when its
    parameters include ``target_kwargs`` (it needs the tool, psutil and a GPU)."""
    import functools

    def decorator(test_fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test_fn)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            import importlib
            import subprocess

            psutil = importlib.import_module("psutil")  # needed only where this decorator runs

            parent = psutil.Process(os.getppid()).name()
            if target_kwargs.items() <= kwargs.items() and parent != "cuda-memcheck":
                path = os.path.realpath(test_fn.__globals__["__file__"])
                test_id = kwargs["request"].node.callspec.id
                cmd = ["cuda-memcheck", "pytest", "-vs", f"{path}::{test_fn.__name__}[{test_id}]"]
                env = {"PATH": os.environ["PATH"], "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
                out = subprocess.run(cmd, capture_output=True, env=env)
                assert out.returncode == 0 and "ERROR SUMMARY: 0 errors" in str(out.stdout)
            else:
                test_fn(*args, **kwargs)

        return wrapper

    return decorator


@contextlib.contextmanager
def set_gpu_clock(ref_sm_clock: int = 1350, ref_mem_clock: int = 1215) -> Any:
    """Lock GPU 0's clocks with ``nvidia-smi`` for a ``with`` block, yielding the peak
    (TFLOP/s, GB/s) Triton's helper estimates at those clocks; unlocked afterwards."""
    import subprocess

    def smi(*args: str) -> None:
        subprocess.check_output(["nvidia-smi", "-i", "0", *args])

    try:
        smi("-pm", "1")
        smi(f"--lock-gpu-clocks={ref_sm_clock},{ref_sm_clock}")
        smi(f"--lock-memory-clocks={ref_mem_clock},{ref_mem_clock}")
        sm_clock, mem_clock = nvsmi(["clocks.current.sm"])[0], nvsmi(["clocks.current.memory"])[0]
        assert abs(sm_clock - ref_sm_clock) < 10, f"GPU SMs must run at {ref_sm_clock} MHz"
        assert abs(mem_clock - ref_mem_clock) < 10, f"GPU memory must run at {ref_mem_clock} MHz"
        yield 1e-6 * 2 * 108 * 4 * 256 * ref_sm_clock, 640 * 2 * ref_mem_clock * 1e-3
    finally:
        smi("-pm", "0")
        smi("-rgc")
        smi("-rmc")
