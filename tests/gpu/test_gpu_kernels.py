"""End-to-end GPU tests: the hand-written kernels of tests/backend/kernels against NumPy.

Each test compiles an IR file with the real PTX path, launches it through
cuda-python with NumPy arguments (copied to the device and back) or device
arrays, and compares with a NumPy reference. Skipped without a GPU.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from minitriton.backend import DeviceArray, compile_module, gpu_available
from minitriton.ir.parser import parse_module

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]

KERNELS = Path(__file__).resolve().parents[1] / "backend" / "kernels"
ROOT = Path(__file__).resolve().parents[2]


def kernel(name: str):
    """Compile ``kernels/<name>.ir`` with the warps its header asks for."""
    text = (KERNELS / f"{name}.ir").read_text()
    m = re.search(r"//\s*num_warps:\s*(\d+)", text)
    return compile_module(
        parse_module(text, str(KERNELS / f"{name}.ir")), num_warps=int(m.group(1)) if m else 4
    )


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def test_vector_add_numpy_args(rng):
    n = 1024 * 37 + 16 * 5  # a partial last block; n stays divisible by 16 as specialized
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.full(n + 64, np.nan, np.float32)  # poisoned, with a tail that must stay untouched
    kernel("vector_add").launch(((n + 1023) // 1024, 1, 1), [x, y, out, n])
    np.testing.assert_array_equal(out[:n], x + y)
    assert np.isnan(out[n:]).all()


def test_vector_add_device_arrays(rng):
    n = 4096
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    dx, dy, dout = (
        DeviceArray.from_numpy(x),
        DeviceArray.from_numpy(y),
        DeviceArray.empty(n, np.float32),
    )
    kernel("vector_add").launch((4, 1, 1), [dx, dy, dout, n])
    np.testing.assert_array_equal(dout.to_numpy(), x + y)
    assert dout.__cuda_array_interface__["data"][0] == dout.ptr


def test_vector_add_torch_and_dlpack(rng):
    torch = pytest.importorskip("torch")
    n = 8192
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")

    class OnlyDLPack:  # exercises the DLPack path (no __cuda_array_interface__)
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    kernel("vector_add").launch((8, 1, 1), [x, OnlyDLPack(y), out, n])
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_softmax(rng):
    rows, cols = 64, 1008
    x = rng.standard_normal((rows, 4096), dtype=np.float32) * 3
    out = np.full_like(x, np.nan)
    kernel("softmax").launch((rows, 1, 1), [out, x, 4096, 4096, cols])
    ref = np.exp(x[:, :cols] - x[:, :cols].max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out[:, :cols], ref, rtol=2e-5, atol=1e-7)
    assert np.isnan(out[:, cols:]).all()


def test_layer_norm(rng):
    rows, n = 32, 2000
    x = rng.standard_normal((rows, 4096), dtype=np.float32) * 2 + 1
    w = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    y = np.full_like(x, np.nan)
    mean = np.zeros(rows, np.float32)
    rstd = np.zeros(rows, np.float32)
    kernel("layer_norm").launch((rows, 1, 1), [x, y, w, b, mean, rstd, 4096, n, np.float32(1e-5)])
    xs = x[:, :n].astype(np.float64)
    m = xs.mean(1)
    r = 1 / np.sqrt(xs.var(1) + 1e-5)
    np.testing.assert_allclose(mean, m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, r, rtol=1e-5)
    np.testing.assert_allclose(
        y[:, :n], (xs - m[:, None]) * r[:, None] * w + b, rtol=1e-4, atol=1e-5
    )
    assert np.isnan(y[:, n:]).all()


def test_matmul(rng):
    m, n, k = 64, 96, 64
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.full((m, n), np.nan, np.float32)
    kernel("matmul").launch((m // 32, n // 32, 1), [a, b, c, m, n, k, k, n, n])
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_reductions(rng):
    x = rng.integers(-50, 50, (64, 32)).astype(np.float32)  # integers: exact sums, many ties
    s0 = np.zeros(32, np.float32)
    m1 = np.zeros(64, np.float32)
    a1 = np.zeros(64, np.int32)
    kernel("reduce2d").launch((1, 1, 1), [x, s0, m1, a1])
    np.testing.assert_array_equal(s0, x.sum(0))
    np.testing.assert_array_equal(m1, x.max(1))
    np.testing.assert_array_equal(a1, x.argmax(1))  # ties: first index, as Triton


def test_scan_sort(rng):
    x = rng.standard_normal(256, dtype=np.float32)
    iv = rng.integers(-100, 100, (16, 16)).astype(np.int32)
    outs = [np.zeros(256, np.float32) for _ in range(4)]
    icum = np.zeros((16, 16), np.int32)
    kernel("scan_sort").launch((1, 1, 1), [x, *outs, iv, icum])
    cumsum, rcummax, srt, srt_desc = outs
    np.testing.assert_allclose(cumsum, np.cumsum(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(rcummax, np.maximum.accumulate(x[::-1])[::-1])
    np.testing.assert_array_equal(srt, np.sort(x))
    np.testing.assert_array_equal(srt_desc, np.sort(x)[::-1])
    np.testing.assert_array_equal(icum, np.cumsum(iv, axis=1))


def test_histogram(rng):
    x = rng.integers(-4, 20, 512).astype(np.int32)  # some values outside the 16 bins
    out = np.full(16, -1, np.int32)
    kernel("histogram").launch((1, 1, 1), [x, out, 300])
    kept = x[:300][(x[:300] >= 0) & (x[:300] < 16)]
    np.testing.assert_array_equal(out, np.bincount(kept, minlength=16))


def test_atomics(rng):
    n, programs = 1000, 4
    bins = rng.integers(0, 10, n).astype(np.int32)
    vals = rng.standard_normal(n, dtype=np.float32)
    hist = np.zeros(10, np.int32)
    fmax = np.full(1, -np.inf, np.float32)
    ticket = np.zeros(1, np.int32)
    tickets = np.full(programs, -1, np.int32)
    lock = np.zeros(1, np.int32)
    counter = np.zeros(1, np.int32)
    kernel("atomics").launch(
        (programs, 1, 1), [hist, bins, vals, n, fmax, ticket, tickets, lock, counter]
    )
    np.testing.assert_array_equal(hist, np.bincount(bins, minlength=10))
    assert fmax[0] == vals.max()
    assert ticket[0] == programs
    assert sorted(tickets.tolist()) == list(range(programs))
    assert counter[0] == programs and lock[0] == 0


def test_control_flow(rng):
    programs, n = 3, 5
    x = rng.standard_normal(128 * programs, dtype=np.float32)
    out = np.zeros_like(x)
    steps = np.zeros(programs, np.int32)
    nprog = np.zeros(1, np.int32)
    kernel("control").launch((programs, 1, 1), [x, out, steps, n, nprog])
    assert nprog[0] == programs
    acc = x * (1 + sum(range(n)))
    ref = acc - n
    ref[:128] = acc[:128] * 2
    np.testing.assert_allclose(out, ref, rtol=1e-6)

    def collatz(v: int) -> int:
        s = 0
        while v != 1:
            v, s = (3 * v + 1 if v % 2 else v // 2), s + 1
        return s

    assert steps.tolist() == [collatz(p + 7) for p in range(programs)]


def _load_cases():
    spec = importlib.util.spec_from_file_location(
        "elementwise_cases", KERNELS / "elementwise_cases.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_elementwise_ops(rng):
    cases = _load_cases()
    x = rng.uniform(0.5, 2.0, 256).astype(np.float32)
    i = rng.integers(-1000, 1001, 256).astype(np.int32)
    fo = np.full((len(cases.FLOAT_CASES), 256), np.nan, np.float32)
    io = np.zeros((len(cases.INT_CASES), 256), np.int32)
    kernel("elementwise").launch((1, 1, 1), [x, i, fo, io])
    failed = []
    for k, (name, _, ref, rtol) in enumerate(cases.FLOAT_CASES):
        want = cases.erf_reference(x) if name == "erf" else ref(x)
        if not np.allclose(fo[k], want, rtol=rtol, atol=1e-7 if rtol else 0):
            failed.append(f"{name}: max rel err {np.max(np.abs(fo[k] - want) / np.abs(want))}")
    for k, (name, _, ref) in enumerate(cases.INT_CASES):
        want = x.view(np.int32) if name == "bitcast" else ref(i)
        if not np.array_equal(io[k], want):
            failed.append(f"{name}: {io[k][:4]} != {np.asarray(want)[:4]}")
    assert not failed, "\n".join(failed)


def test_trans_reshape_f16_bool(rng):
    x = rng.standard_normal((16, 32), dtype=np.float32)
    h = rng.standard_normal(512).astype(np.float16)
    t = np.zeros((32, 16), np.float32)
    rs = np.zeros((32, 16), np.float32)
    h_out = np.zeros(512, np.float16)
    b_out = np.zeros(512, np.bool_)
    kernel("trans_reshape").launch((1, 1, 1), [x, t, rs, h, h_out, b_out])
    np.testing.assert_array_equal(t, x.T)
    np.testing.assert_array_equal(rs, x.reshape(32, 16))
    np.testing.assert_array_equal(h_out[:300], (h * h)[:300])
    assert (h_out[300:] == 0).all()
    np.testing.assert_array_equal(b_out, h > 0)


def test_print_once_per_program(capfd):
    x = np.arange(8, dtype=np.int32) * 3
    kernel("print_assert").launch((2, 1, 1), [x, 1000])
    ctypes.CDLL(None).fflush(None)  # the driver prints through C stdio
    out = capfd.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("pid")]
    assert len([ln for ln in lines if "x: " in ln]) == 16  # 8 elements x 2 programs, once each
    assert "pid (1, 0, 0) idx (7) x: 21" in out
    assert "pid (0, 0, 0) pid: 0" in out


_CHILD = """
import numpy as np, sys
sys.path.append({root!r})
from minitriton.backend import compile_module, CUDAError
from minitriton.ir.parser import parse_module
text = open({path!r}).read()
k = compile_module(parse_module(text, {path!r}))
try:
    k.launch((1, 1, 1), {args})
except CUDAError as e:
    print("ERROR", e.code, e.context_usable, e.kernel)
    print(e)
"""


def _child(name: str, args: str) -> str:
    code = textwrap.dedent(_CHILD).format(
        root=str(ROOT), path=str(KERNELS / f"{name}.ir"), args=args
    )
    env = dict(os.environ, MINITRITON_CACHE="0")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tempfile.gettempdir(),  # not the repo: the child imports minitriton via sys.path
    )
    return proc.stdout + proc.stderr


def test_failed_assert_is_reported():
    out = _child("print_assert", "[np.arange(8, dtype=np.int32), 5]")
    assert "ERROR CUDA_ERROR_ASSERT False print_assert" in out, out
    assert "x < limit" in out  # the device prints the assertion message


def test_illegal_address_is_reported():
    out = _child("vector_add", "[16, 16, np.zeros(1024, np.float32), 1024]")
    assert "ERROR CUDA_ERROR_ILLEGAL_ADDRESS False add_kernel" in out, out
    assert "no longer usable" in out
