"""The launch API checks what it is given: each bad value names the kernel and the parameter."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.launch_checks import (
    LaunchError,
    LaunchTypeError,
    arch_problem,
    num_warps_problem,
    written_arguments,
)


@triton.jit
def copy_plus_one(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def store_in_loop(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = dst_ptr + offs
    for _ in range(0, n):
        tl.store(p, tl.load(src_ptr + offs))
        p += BLOCK


def launch(*args: Any, grid: Any = (1,), **kwargs: Any) -> None:
    kwargs.setdefault("BLOCK", 16)
    copy_plus_one[grid](*args, backend="emulator", **kwargs)


def _matrix(a: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix(a)


def arrays() -> tuple[np.ndarray, np.ndarray]:
    return np.arange(16, dtype=np.float32), np.zeros(16, np.float32)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda s, d: (s.astype(np.complex64), d, 16), LaunchTypeError,
         "argument 'src_ptr' has dtype complex64, which has no MiniTriton type"),
        (lambda s, d: (s, d, 2**64), LaunchError,
         "argument 'n': the integer 18446744073709551616 does not fit in 64 bits"),
        (lambda s, d: (s, d, -(2**63) - 1), LaunchError, "does not fit in 64 bits"),
        (lambda s, d: (s[::-1], d, 16), LaunchError, "argument 'src_ptr' has negative strides"),
        (lambda s, d: (_matrix(s), d, 16), LaunchTypeError, "argument 'src_ptr' is an np.matrix"),
        (lambda s, d: (list(s), d, 16), LaunchTypeError, "argument 'src_ptr' is a Python list"),
    ],
)  # fmt: skip
def test_bad_arguments(make: Any, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        launch(*make(*arrays()))
    assert str(info.value).startswith("kernel 'copy_plus_one': ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("grid", "error", "message"),
    [
        ((-1,), LaunchError, "grid dimension 0 is negative (-1)"),
        ((1.0,), LaunchTypeError, "grid dimension 0 must be an int, got float 1.0"),
        ((True,), LaunchTypeError, "grid dimension 0 must be an int, got bool True"),
        ((), LaunchError, "the grid must have 1 to 3 dimensions, got 0"),
        ((1, 1, 1, 1), LaunchError, "the grid must have 1 to 3 dimensions, got 4"),
        ((2**31,), LaunchError, "grid dimension 0 is 2147483648, more than CUDA's limit"),
        ((2**64,), LaunchError, "grid dimension 0 is 18446744073709551616, more than CUDA's"),
        ((1, 65536), LaunchError, "grid dimension 1 is 65536, more than CUDA's limit of 65535"),
        ((1, 1, 65536), LaunchError, "grid dimension 2 is 65536"),
        ("abc", LaunchTypeError, "the grid must be a tuple of ints, got str 'abc'"),
        (lambda meta: (meta["n"] / 16,), LaunchTypeError, "must be an int, got float 1.0"),
    ],
)
def test_bad_grids(grid: Any, error: type, message: str) -> None:
    src, dst = arrays()
    with pytest.raises(error) as info:
        launch(src, dst, 16, grid=grid)
    assert str(info.value) == f"kernel 'copy_plus_one': {message}" or message in str(info.value)
    assert not dst.any()


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"num_warps": 3}, LaunchError, "num_warps=3: must be a power of 2 in 1..32"),
        ({"num_warps": 0}, LaunchError, "num_warps=0"),
        ({"num_warps": 64}, LaunchError, "num_warps=64"),
        ({"num_warps": 4.0}, LaunchError, "num_warps=4.0"),
        ({"debug": "yes"}, LaunchTypeError, "debug='yes': expected True or False"),
        ({"num_stages": 0}, LaunchError, "num_stages=0: expected a positive int"),
    ],
)
def test_bad_options(options: dict[str, Any], error: type, message: str) -> None:
    src, dst = arrays()
    with pytest.raises(error) as info:
        launch(src, dst, 16, **options)
    assert str(info.value) == f"kernel 'copy_plus_one': {message}" or message in str(info.value)


def test_a_read_only_output_is_rejected_before_the_launch() -> None:
    src, dst = arrays()
    dst.flags.writeable = False
    with pytest.raises(LaunchError) as info:
        launch(src, dst, 16)
    assert "argument 'dst_ptr' is a read-only array, and the kernel stores to it" in str(info.value)


def test_a_read_only_input_is_fine() -> None:
    src, dst = arrays()
    src.flags.writeable = False
    launch(src, dst, 16)
    np.testing.assert_array_equal(dst, np.arange(16, dtype=np.float32) + 1)


def test_written_arguments_follow_loop_carried_pointers() -> None:
    src, dst = arrays()
    compiled = store_in_loop.warmup(src, dst, 1, BLOCK=16, grid=(1,), backend="emulator")
    assert written_arguments(compiled.module) == {"dst_ptr"}
    compiled = copy_plus_one.warmup(src, dst, 16, BLOCK=16, grid=(1,), backend="emulator")
    assert written_arguments(compiled.module) == {"dst_ptr"}


def test_valid_launches_still_run() -> None:
    src, dst = arrays()
    launch(src, dst, 16, grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),), num_warps=8)
    np.testing.assert_array_equal(dst, src + 1)
    launch(src, dst, 16, grid=(np.int64(1), 1, 1), debug=True)


def test_cli_option_checks() -> None:
    assert num_warps_problem(4) is None and num_warps_problem(3) is not None
    assert num_warps_problem(0) is not None
    assert arch_problem("sm_90") is None and arch_problem("sm_90a") is None
    assert "sm_75 to sm_121" in (arch_problem("sm_70") or "")
    assert "sm_75 to sm_121" in (arch_problem("sm_99999999") or "")
    assert "expected an architecture" in (arch_problem("gfx90a") or "")
    assert "expected an architecture" in (arch_problem("sm_") or "")


def test_an_unknown_check_name_is_a_launch_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_CHECKS", "bogus")
    src, dst = arrays()
    with pytest.raises(LaunchError) as info:
        launch(src, dst, 16)
    assert str(info.value).startswith("MINITRITON_CHECKS='bogus': unknown check 'bogus'")


@triton.jit
def double_bf16(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, (x.to(tl.float32) * 2).to(tl.bfloat16))


def test_uint16_data_passed_as_bf16() -> None:
    values = np.array([1.5, -2.0, 3.25, 0.0], np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)
    view = triton.bfloat16_view(bits)
    compiled = double_bf16.warmup(view, BLOCK=4, grid=(1,), backend="emulator")
    assert str(compiled.arg_specs[0].type) == "ptr<bf16>"
    double_bf16[(1,)](view, BLOCK=4, backend="emulator")
    np.testing.assert_array_equal((bits.astype(np.uint32) << 16).view(np.float32), values * 2)


def test_bfloat16_view_takes_only_uint16_arrays() -> None:
    with pytest.raises(LaunchTypeError, match="takes a uint16 NumPy array, got float32"):
        triton.bfloat16_view(np.zeros(4, np.float32))


@triton.jit
def fill_contiguously(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs.to(tl.float32) + 1)


@triton.jit
def fill_with_stride(x_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs * stride, offs.to(tl.float32) + 1)


def test_stores_between_the_elements_of_a_view_warn_once() -> None:
    base = np.zeros(16, np.float32)
    with pytest.warns(RuntimeWarning, match="changed memory between the elements of the strided"):
        fill_contiguously[(1,)](base[::2], BLOCK=8, backend="emulator")
    np.testing.assert_array_equal(base[:8], np.arange(1, 9))  # raw-pointer semantics, as Triton
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fill_contiguously[(1,)](base[::2], BLOCK=8, backend="emulator")  # once per parameter


def test_stores_that_follow_the_view_do_not_warn() -> None:
    base = np.zeros(16, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fill_with_stride[(1,)](base[::2], 2, BLOCK=8, backend="emulator")
    np.testing.assert_array_equal(base[::2], np.arange(1, 9))
    assert not base[1::2].any()


@triton.jit
def double_contiguously(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


@triton.jit
def double_with_stride(x_ptr, out_ptr, stride, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=offs < n) * 2, mask=offs < n)


LOAD_WARNING = "loads through argument 'x_ptr' read memory between the elements of the strided"


def test_loads_between_the_elements_of_a_view_warn_once() -> None:
    base = np.arange(16, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with pytest.warns(RuntimeWarning, match=LOAD_WARNING) as caught:
        double_contiguously[(1,)](base[::2], out, BLOCK=8, backend="emulator")
    assert [w.filename for w in caught] == [__file__]  # at the kernel[grid](...) line
    np.testing.assert_array_equal(out, base[:8] * 2)  # raw-pointer semantics, as Triton
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        double_contiguously[(1,)](base[::2], out, BLOCK=8, backend="emulator")  # once


def test_loads_that_follow_the_view_do_not_warn() -> None:
    base = np.arange(16, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        double_with_stride[(1,)](base[::2], out, 2, 8, BLOCK=8, backend="emulator")
        # Masked-off lanes would have read the gaps: they are not reads.
        double_with_stride[(1,)](base[::2], out, 1, 1, BLOCK=8, backend="emulator")
    np.testing.assert_array_equal(out, [0, 4, 8, 12, 16, 20, 24, 28])
    with pytest.warns(RuntimeWarning, match=LOAD_WARNING):  # the gap after element 0
        double_with_stride[(1,)](base[::2], out, 1, 2, BLOCK=8, backend="emulator")


@pytest.mark.torch
def test_loads_through_a_strided_torch_tensor_warn() -> None:
    torch = pytest.importorskip("torch")
    from minitriton import launch_checks

    launch_checks._WARNED_LOADS.discard(("double_contiguously", "x_ptr"))  # warned once already
    base = torch.arange(16, dtype=torch.float32)
    out = torch.zeros(8)
    with pytest.warns(RuntimeWarning, match=LOAD_WARNING):
        double_contiguously[(1,)](base.view(8, 2)[:, 0], out, BLOCK=8, backend="emulator")
    np.testing.assert_array_equal(out.numpy(), np.arange(8) * 2)


def test_minitriton_check_warns_about_loads_and_counts_it(tmp_path: Path) -> None:
    script = tmp_path / "strided.py"
    script.write_text(
        "import numpy as np\n"
        "from test_launch_checks import double_contiguously\n\n"
        "base = np.arange(16, dtype=np.float32)\n"
        "out = np.zeros(8, np.float32)\n"
        'double_contiguously[(1,)](base[::2], out, BLOCK=8, backend="emulator")\n'
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    command = [sys.executable, "-m", "minitriton", "check", str(script)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{script}:6: RuntimeWarning: kernel 'double_contiguously': " in done.stderr
    assert LOAD_WARNING in done.stderr
    assert done.stdout.endswith("no errors found; 1 warning (above)\n")
