"""Kernels inside PyTorch programs on the GPU: streams, CUDA graphs, resource limits, bad input.

* a launch with CUDA tensors runs on torch's current stream: CUDA graph capture
  records it (replay with new inputs equals eager), and ``with
  torch.cuda.stream(s):`` orders it with the rest of the work on ``s``;
* ``stream=`` (a ``torch.cuda.Stream`` or a handle) is honoured, on the fast path too;
* a configuration over the device's shared memory raises ``OutOfResources``
  before the driver is asked, and the autotuner skips it;
* pinned host tensors are read and written in place, as in Triton;
* CPU tensors, launches a capture cannot record: errors that say what to do.

Skipped without a GPU or PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.jit import gpu_available
from minitriton.launch_checks import LaunchError, LaunchTypeError
from minitriton.runtime import driver as runtime_driver
from minitriton.runtime.errors import OutOfResources

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.torch,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]

N = 1 << 16
BLOCK = 1024
#: Iterations of slow_fill's loop: tens of milliseconds on an H200.
SPINS = 20_000_000


@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def slow_fill(x_ptr, value, spins, n, BLOCK: tl.constexpr):
    # Stores value after spins dependent steps (acc reaches 2.0 exactly, then stays there).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(spins):
        acc = acc * 0.5 + 1.0
    tl.store(x_ptr + offs, value + (acc - 2.0), mask=offs < n)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b, allow_tf32=False)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


BIG = triton.Config({"BM": 256, "BN": 256, "BK": 128}, num_warps=8, num_stages=6)
SMALL = triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=2)


@pytest.fixture(autouse=True)
def gpu_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU backend is the default one (``driver.active`` answers for it)."""
    monkeypatch.setenv("MINITRITON_BACKEND", "gpu")


def grid(n: int = N) -> tuple[int]:
    return (triton.cdiv(n, BLOCK),)


def two_kernels(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, **options: object) -> None:
    scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="gpu")
    add_kernel[grid()](y, x, out, N, BLOCK=BLOCK, backend="gpu", **options)


# ---------------------------------------------------------------- CUDA graphs


def test_graph_capture_and_replay_with_new_inputs_equals_eager():
    x = torch.randn(N, device="cuda")
    y, out = torch.empty_like(x), torch.empty_like(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up (compile, load) off the default stream
        two_kernels(x, y, out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        # The first launch takes the fast path; num_warps=4 (the same compile) the full one.
        two_kernels(x, y, out, num_warps=4)
    for seed in range(3):
        new = torch.randn(N, device="cuda", generator=torch.Generator("cuda").manual_seed(seed))
        x.copy_(new)
        out.zero_()
        graph.replay()
        torch.cuda.synchronize()
        eager_y, eager_out = torch.empty_like(x), torch.empty_like(x)
        two_kernels(new, eager_y, eager_out)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, eager_out, rtol=0, atol=0)
        torch.testing.assert_close(out, 3 * new)


def test_capture_refuses_what_it_cannot_record_and_the_gpu_goes_on():
    x = torch.randn(N, device="cuda")
    y = torch.empty_like(x)
    host = np.zeros(N, np.float32)
    # Each launch once outside the capture: compiling and loading are not what is refused.
    scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="gpu", debug=True)
    scale_kernel[grid()](x, host, 2.0, N, BLOCK=BLOCK, backend="gpu")
    scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="emulator")
    scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="gpu")
    cases = [
        (lambda: scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="gpu", debug=True),
         "compiled with debug=True"),
        (lambda: scale_kernel[grid()](x, host, 2.0, N, BLOCK=BLOCK, backend="gpu"),
         "argument 'y_ptr' is a NumPy array"),
        (lambda: scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="emulator"),
         "runs on the emulator, which copies CUDA tensors"),
    ]  # fmt: skip
    torch.cuda.synchronize()
    for launch, message in cases:
        graph = torch.cuda.CUDAGraph()
        with pytest.raises(LaunchError, match=message), torch.cuda.graph(graph):
            launch()
    scale_kernel[grid()](x, y, 3.0, N, BLOCK=BLOCK, backend="gpu")
    torch.cuda.synchronize()
    torch.testing.assert_close(y, 3 * x)


# ---------------------------------------------------------------- streams


def test_a_side_stream_producer_and_a_consumer_are_ordered():
    produced, consumed = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
    ones = torch.ones(N, device="cuda")
    slow_fill[grid()](produced, 1.0, 16, N, BLOCK=BLOCK, backend="gpu")  # compile, load
    add_kernel[grid()](produced, ones, consumed, N, BLOCK=BLOCK, backend="gpu")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        slow_fill[grid()](produced, 41.0, SPINS, N, BLOCK=BLOCK, backend="gpu")
        assert runtime_driver.active.get_current_stream() == side.cuda_stream
    assert not side.query(), "the producer did not run on the side stream"
    torch.cuda.current_stream().wait_stream(side)
    add_kernel[grid()](produced, ones, consumed, N, BLOCK=BLOCK, backend="gpu")
    torch.cuda.synchronize()
    assert torch.all(consumed == 42.0)


@pytest.mark.parametrize("as_handle", [False, True])
def test_an_explicit_stream_is_honoured_on_both_paths(as_handle: bool):
    x = torch.zeros(N, device="cuda")
    side = torch.cuda.Stream()
    stream = side.cuda_stream if as_handle else side
    torch.cuda.synchronize()  # the zeros are written before the side stream starts
    for value in (5.0, 7.0):  # the full path, then the fast path
        slow_fill[grid()](x, value, SPINS, N, BLOCK=BLOCK, backend="gpu", stream=stream)
        assert not side.query(), "the launch did not go to stream="
        side.synchronize()
        assert torch.all(x == value)


def test_numpy_arguments_on_a_side_stream_are_copied_in_order():
    x = torch.randn(N, device="cuda")
    host_out = np.zeros(N, np.float32)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        scale_kernel[grid()](x, host_out, -1.0, N, BLOCK=BLOCK, backend="gpu")
    np.testing.assert_array_equal(host_out, -x.cpu().numpy())


# ---------------------------------------------------------------- resource limits


def _matmul_inputs(size: int = 512) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator("cuda").manual_seed(0)
    a = torch.randn(size, size, device="cuda", generator=gen)
    b = torch.randn(size, size, device="cuda", generator=gen)
    return a, b, torch.zeros(size, size, device="cuda")


def test_an_oversized_config_raises_out_of_resources_before_the_driver_fails():
    from minitriton.backend.driver import device_limits

    a, b, c = _matmul_inputs()
    with pytest.raises(OutOfResources) as info:
        matmul_kernel[(2, 2)](a, b, c, 512, 512, 512, backend="gpu", **BIG.all_kwargs())
    e = info.value
    assert (e.name, e.limit, e.kernel) == ("shared memory", device_limits().shared, "matmul_kernel")
    assert e.required > e.limit
    assert str(e).startswith(
        "kernel 'matmul_kernel' (num_warps=8, num_stages=6, BM=256, BN=256, BK=128): out of "
        f"resource: shared memory, Required: {e.required}, Hardware limit: {e.limit}."
    )
    matmul_kernel[(8, 8)](a, b, c, 512, 512, 512, backend="gpu", **SMALL.all_kwargs())
    torch.cuda.synchronize()  # the context is fine
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)


def test_the_autotuner_skips_the_oversized_config(capsys: pytest.CaptureFixture[str]):
    tuned = triton.autotune(configs=[BIG, SMALL], key=["M"], warmup=1, rep=5)(matmul_kernel)
    a, b, c = _matmul_inputs()

    def tuned_grid(meta: dict) -> tuple[int, int]:
        return (512 // meta["BM"], 512 // meta["BN"])

    tuned[tuned_grid](a, b, c, 512, 512, 512, backend="gpu")
    torch.cuda.synchronize()
    assert tuned.best_config is SMALL
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)
    err = capsys.readouterr().err
    assert "config 1/2: BM: 256, BN: 256, BK: 128" in err
    assert "skipped (kernel 'matmul_kernel' (num_warps=8, num_stages=6," in err


# ---------------------------------------------------------------- bad input


def test_a_cpu_tensor_on_the_gpu_backend_names_the_argument_and_the_fix():
    x, y = torch.randn(N, device="cuda"), torch.empty(N, device="cuda")
    scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="gpu")  # an entry on the fast path
    with pytest.raises(LaunchTypeError, match=r"argument 'y_ptr' is a tensor on the cpu device"):
        scale_kernel[grid()](x, torch.empty(N), 2.0, N, BLOCK=BLOCK, backend="gpu")
    with pytest.raises(LaunchTypeError, match=r"pass x_ptr.cuda\(\)"):
        scale_kernel[grid()](torch.randn(N), y, 2.0, N, BLOCK=BLOCK, backend="gpu")


def test_pinned_host_tensors_are_read_and_written_in_place():
    # Triton passes pinned host memory as it is: the GPU reaches it at the same address.
    x = torch.randn(N).pin_memory()
    y = torch.zeros(N).pin_memory()
    on_gpu = torch.empty(N, device="cuda")
    scale_kernel[grid()](x, y, 3.0, N, BLOCK=BLOCK, backend="gpu")  # host -> host
    scale_kernel[grid()](x, on_gpu, 2.0, N, BLOCK=BLOCK, backend="gpu")  # host -> device
    torch.cuda.synchronize()
    torch.testing.assert_close(y, 3 * x)
    torch.testing.assert_close(on_gpu.cpu(), 2 * x)
    with pytest.raises(ValueError, match=r"x_ptr.pin_memory\(\)"):
        scale_kernel[grid()](x.clone(), y, 2.0, N, BLOCK=BLOCK, backend="gpu")  # not pinned


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_tensors_on_two_devices_are_named():
    x, y = torch.randn(N, device="cuda:0"), torch.empty(N, device="cuda:1")
    with pytest.raises(LaunchError, match="'x_ptr' on cuda:0, 'y_ptr' on cuda:1"):
        scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="gpu")


def test_the_emulator_copies_cuda_tensors_to_the_host_and_back():
    x = torch.randn(N, device="cuda")
    y = torch.empty_like(x)
    scale_kernel[grid()](x, y, 2.0, N, BLOCK=BLOCK, backend="emulator")
    torch.testing.assert_close(y, 2 * x)
