"""Debug mode on the GPU: out-of-bounds accesses and failed asserts, located; the process lives on.

Every buggy launch must raise the very error the emulator raises for it
(same text: location, source line, caret, program, offsets and lanes), and
is followed by a correct launch in the same process, which must give the
right answer. The correct-mask twins must raise nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minitriton.backend import DeviceArray, debug_mode, gpu_available, synchronize
from minitriton.emulator.errors import DeviceCheckError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.kernels import debug_mode as K  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]


def emulator_error(kernel, grid, *args, **meta) -> str:
    """The emulator's message for the same launch, its help line included.

    The emulator's out-of-bounds report ends with the mask that would have
    prevented it (``help: mask=offs < n``). The device records the addresses
    of the lanes out of bounds, so the GPU's report gives the same help
    where those tell it: an unnamed offset, or a named one added to a
    parameter's pointer itself (``x_ptr + offs``). For a named part of an
    offset (``cols`` in ``x_ptr + rows * N + cols``) its report is the rest
    (:func:`without_help`).
    """
    with pytest.raises(Exception) as info:
        kernel[grid](*args, backend="emulator", debug=True, **meta)
    assert type(info.value).__name__ == "EmulatorError"
    return str(info.value)


def _mask_help(line: str) -> bool:
    return line.startswith(("help: mask=", "help: the mask did not"))


def without_help(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _mask_help(line))


def with_note(text: str, note: str) -> str:
    """``text`` with the detail line ``note`` before its help line, as a deferred report has."""
    lines = text.splitlines()
    at = len(lines) - 1 if lines and lines[-1].startswith("help: ") else len(lines)
    return "\n".join([*lines[:at], "  " + note, *lines[at:]])


def gpu_error(kernel, grid, *args, **meta) -> str:
    with pytest.raises(DeviceCheckError) as info:
        kernel[grid](*args, backend="gpu", debug=True, **meta)
    return str(info.value)


def assert_lives_on() -> None:
    """A correct launch after the error gives the right answer."""
    rng = np.random.default_rng(7)
    n = 1000
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    K.add[(4,)](x, y, out, n, BLOCK=256, backend="gpu", debug=True)
    np.testing.assert_array_equal(out, x + y)
    out[:] = 0
    K.add[(4,)](x, y, out, n, BLOCK=256, backend="gpu")
    np.testing.assert_array_equal(out, x + y)


def test_unmasked_store_past_the_end():
    out = np.zeros(8, np.float32)
    got = gpu_error(K.store_past_end, (1,), out, 8, BLOCK=16, MASKED=False)
    assert got == emulator_error(K.store_past_end, (1,), out, 8, BLOCK=16, MASKED=False)
    assert (
        "error: out-of-bounds tt.store to 'out_ptr' (8 elements of fp32) in program (0, 0, 0)"
        in got
    )
    assert "offsets 8, 9, ... at lanes 8, 9, ... (8 lanes out of bounds)" in got
    assert "tl.store(out_ptr + offs, offs.to(tl.float32))\n" in got
    assert got.endswith("help: mask=offs < n")
    assert np.all(out == 0)  # NumPy arguments are left as they were before the launch
    assert_lives_on()


def test_store_at_a_negative_offset():
    out = np.zeros(8, np.float32)
    args = (out, 8)
    got = gpu_error(K.store_before_start, (1,), *args, BLOCK=16, SHIFT=3)
    assert got == emulator_error(K.store_before_start, (1,), *args, BLOCK=16, SHIFT=3)
    assert "offsets -3, -2, ... at lanes 0, 1, ... (3 lanes out of bounds)" in got
    assert got.endswith("help: the mask did not cover lane 0 (offset -3); use mask=offs >= 0")
    assert_lives_on()


def test_unmasked_load_past_the_end():
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(16, np.float32)
    got = gpu_error(K.load_past_end, (1,), x, out, 10, BLOCK=16, MASKED=False)
    assert got == emulator_error(K.load_past_end, (1,), x, out, 10, BLOCK=16, MASKED=False)
    assert got.endswith("help: mask=offs < n")  # the emulator's suggestion, from the record
    assert "out-of-bounds tt.load from 'x_ptr' (10 elements of fp32)" in got
    assert "offsets 10, 11, ... at lanes 10, 11, ... (6 lanes out of bounds)" in got
    assert_lives_on()


def test_tile_with_a_missing_column_mask():
    x = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    out = np.zeros((4, 8), np.float32)
    meta = dict(BM=4, BN=8, COLS=False)
    got = gpu_error(K.tile_copy, (1,), x, out, 4, 6, **meta)
    want = emulator_error(K.tile_copy, (1,), x, out, 4, 6, **meta)
    assert "help: " in want and got == without_help(want)  # cols is a part of the offset
    assert "offsets 24, 25 at lanes (3, 6), (3, 7) (2 lanes out of bounds)" in got
    assert_lives_on()


def test_pointer_moved_into_a_neighbouring_argument():
    base = DeviceArray.from_numpy(np.arange(24, dtype=np.float32))
    x = DeviceArray(base.ptr, (8,), np.float32, owner=False)
    y = DeviceArray(base.ptr + 8 * 4, (16,), np.float32, owner=False)
    got = gpu_error(K.copy_block, (1,), x, y, BLOCK=16)
    assert (
        "error: out-of-bounds tt.load from 'x_ptr' (8 elements of fp32) in program (0, 0, 0)" in got
    )
    assert "offsets 8, 9, ... at lanes 8, 9, ... (8 lanes out of bounds)" in got
    assert "tl.store(y_ptr + offs, tl.load(x_ptr + offs))" in got
    # Without debug mode the same launch reads y's memory silently (racing with its stores).
    K.copy_block[(1,)](x, y, BLOCK=16, backend="gpu")
    np.testing.assert_array_equal(base.to_numpy()[8:16], np.arange(8, dtype=np.float32))
    assert_lives_on()


def test_failing_device_assert():
    x = np.array([1, 2, -3, 4, 0, 6, -7, 8, 9, -1], np.float32)
    got = gpu_error(K.check_positive, (1,), x, 10, BLOCK=16)
    assert got == emulator_error(K.check_positive, (1,), x, 10, BLOCK=16)
    assert "error: device assertion failed: x must be positive in program (0, 0, 0)" in got
    assert "false at lanes 2, 4, 6, ... (4 lanes of 16)" in got
    assert "lhs (x): -3.0, 0.0, -7.0, ..." in got
    assert_lives_on()


def test_error_in_a_later_program():
    x = np.ones(900, np.float32)  # 100 elements short of n
    y = np.ones(1000, np.float32)
    out = np.zeros(1000, np.float32)
    got = gpu_error(K.add, (4,), x, y, out, 1000, BLOCK=256)
    assert got == emulator_error(K.add, (4,), x, y, out, 1000, BLOCK=256)
    assert "'x_ptr' (900 elements of fp32) in program (3, 0, 0)" in got
    assert "offsets 900, 901, ... at lanes 132, 133, ... (100 lanes out of bounds)" in got
    assert got.endswith("use mask=offs < N, N at most 900 (the length of 'x_ptr')")
    assert_lives_on()


@pytest.mark.parametrize(
    "launch",
    [
        lambda: K.store_past_end[(1,)](
            np.zeros(8, np.float32), 8, BLOCK=16, MASKED=True, backend="gpu", debug=True
        ),
        lambda: K.store_before_start[(1,)](
            np.zeros(16, np.float32), 8, BLOCK=16, SHIFT=0, backend="gpu", debug=True
        ),
        lambda: K.load_past_end[(1,)](
            np.ones(10, np.float32),
            np.zeros(16, np.float32),
            10,
            BLOCK=16,
            MASKED=True,
            backend="gpu",
            debug=True,
        ),
        lambda: K.tile_copy[(1,)](
            np.ones((4, 6), np.float32),
            np.zeros((4, 8), np.float32),
            4,
            6,
            BM=4,
            BN=8,
            COLS=True,
            backend="gpu",
            debug=True,
        ),
        lambda: K.check_positive[(1,)](
            np.ones(10, np.float32), 10, BLOCK=16, backend="gpu", debug=True
        ),
    ],
    ids=["store", "negative", "load", "tile", "assert"],
)
def test_correct_masks_raise_nothing(launch):
    launch()


def test_correct_tile_values():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.full((4, 8), -1, np.float32)
    K.tile_copy[(1,)](x, out, 4, 6, BM=4, BN=8, COLS=True, backend="gpu", debug=True)
    np.testing.assert_array_equal(out[:, :6], x)
    assert np.all(out[:, 6:] == 0)


def test_torch_tensor_extent_is_its_storage():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    from minitriton.backend.debug_mode import extent

    small = torch.zeros(8, device="cuda")
    assert extent(small, small.data_ptr()) == (small.data_ptr(), 32)
    base = torch.zeros(16, device="cuda")
    assert extent(base[4:], base.data_ptr() + 16) == (base.data_ptr(), 64)
    view = base[:8]  # the view's storage holds 16 elements: x + 8 .. x + 15 are inside it
    K.store_past_end[(1,)](view, 8, BLOCK=16, MASKED=False, backend="gpu", debug=True)
    torch.cuda.synchronize()
    assert base.cpu().tolist() == [float(i) for i in range(16)]
    got = gpu_error(K.store_past_end, (1,), small, 8, BLOCK=16, MASKED=False)
    assert "(8 elements of fp32)" in got and "offsets 8, 9, ..." in got


# ------------------------------------------------------------ deferred reports


@pytest.fixture
def deferred(monkeypatch):
    """``MINITRITON_DEBUG=async`` for one test; nothing may stay in flight after it."""
    monkeypatch.setenv("MINITRITON_DEBUG", "async")
    yield debug_mode
    monkeypatch.delenv("MINITRITON_DEBUG")
    synchronize()
    assert not debug_mode._in_flight


def device_add(n: int = 1000, short: int = 0):
    """Device arrays for ``K.add`` (``x`` ``short`` elements short) and the expected sum."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n - short, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    arrays = [DeviceArray.from_numpy(a) for a in (x, y, np.zeros(n, np.float32))]
    return arrays, x, y


def test_deferred_error_raises_at_the_next_launch(deferred):
    out = np.zeros(8, np.float32)
    want = emulator_error(K.store_past_end, (1,), out, 8, BLOCK=16, MASKED=False)
    dev = DeviceArray.from_numpy(out)
    K.store_past_end[(1,)](dev, 8, BLOCK=16, MASKED=False, backend="gpu", debug=True)  # returns
    (x, y, o), hx, hy = device_add()
    with pytest.raises(DeviceCheckError) as info:
        K.add[(4,)](x, y, o, 1000, BLOCK=256, backend="gpu", debug=True)
    assert str(info.value) == with_note(want, deferred.DEFERRED_NOTE)
    assert np.all(o.to_numpy() == 0)  # the launch that raised did not run
    K.add[(4,)](x, y, o, 1000, BLOCK=256, backend="gpu", debug=True)
    synchronize()
    np.testing.assert_array_equal(o.to_numpy(), hx + hy)


def test_deferred_error_raises_at_synchronize(deferred):
    (x, y, o), _, _ = device_add(short=100)
    want = emulator_error(K.add, (4,), x.to_numpy(), y.to_numpy(), o.to_numpy(), 1000, BLOCK=256)
    K.add[(4,)](x, y, o, 1000, BLOCK=256, backend="gpu", debug=True)
    with pytest.raises(DeviceCheckError) as info:
        synchronize()
    assert str(info.value) == with_note(want, deferred.DEFERRED_NOTE)
    synchronize()  # reported once
    assert_lives_on()


def test_deferred_launches_past_the_pool_report_the_one_that_failed(deferred):
    """More launches in flight than records: the clean ones give theirs back; one error."""
    (x, y, o), hx, hy = device_add()
    (bx, by, bo), _, _ = device_add(short=100)
    launches = 3 * deferred.POOL
    for i in range(launches):
        if i == deferred.POOL + 5:
            K.add[(4,)](bx, by, bo, 1000, BLOCK=256, backend="gpu", debug=True)
        try:
            K.add[(4,)](x, y, o, 1000, BLOCK=256, backend="gpu", debug=True)
        except Exception as e:  # the bad launch's error, raised by a later launch
            assert "'x_ptr' (900 elements of fp32) in program (3, 0, 0)" in str(e)
            break
    else:
        with pytest.raises(Exception, match=r"'x_ptr' \(900 elements of fp32\)"):
            synchronize()
    synchronize()
    np.testing.assert_array_equal(o.to_numpy(), hx + hy)


def test_deferred_error_is_printed_at_exit_if_nobody_asks(tmp_path):
    script = tmp_path / "late.py"
    script.write_text(
        "import sys\n"
        f"sys.path.append({str(Path(__file__).resolve().parents[2])!r})\n"
        "import numpy as np\n"
        "from minitriton.backend import DeviceArray\n"
        "from tests.kernels import debug_mode as K\n"
        "out = DeviceArray.from_numpy(np.zeros(8, np.float32))\n"
        "K.store_past_end[(1,)](out, 8, BLOCK=16, MASKED=False, backend='gpu', debug=True)\n"
        "print('returned')\n",
        encoding="utf-8",
    )
    env = dict(os.environ, MINITRITON_DEBUG="async")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    assert done.stdout == "returned\n"
    assert "minitriton: a deferred debug-mode launch failed:" in done.stderr
    assert "out-of-bounds tt.store to 'out_ptr' (8 elements of fp32)" in done.stderr
