"""The language gaps that real kernels hit, on both backends, against NumPy.

``tl.assume``; Python functions called on compile-time values (and the
located error for a run-time argument); ``tl.pointer_type`` casts of int64
addresses (tables of addresses, Triton's grouped-GEMM tutorial) and
pointer -> int64 casts; early ``return`` that does not merge variables; a
``for`` loop's variable after the loop; ``tl.standard._log2``;
``logical_and`` / ``logical_or``. Each kernel is also compiled to PTX and
assembled with ``ptxas`` for sm_90a and sm_80.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minitriton.diagnostics import CompileError, UserError
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import language_gaps as K
from tests.kernels.grouped_gemm import group_gemm, grouped_matmul_kernel

# ---------------------------------------------------------------- tl.assume


def test_assume_is_a_hint(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal(100).astype(np.float32)
    y = np.zeros(200, np.float32)
    K.assume_scale_kernel[(4,)](x, y, 100, 2, BLOCK=32, backend=backend)
    np.testing.assert_array_equal(y[::2], 2 * x)
    np.testing.assert_array_equal(y[1::2], 0)


def test_assume_is_checked_in_debug_mode() -> None:
    x = np.ones(32, np.float32)
    y = np.zeros(64, np.float32)
    K.assume_scale_kernel[(1,)](x, y, 32, 1, BLOCK=32, debug=True)  # holds: no error
    with pytest.raises(UserError) as info:
        K.assume_scale_kernel[(1,)](x, y, 32, -1, BLOCK=32, debug=True)
    text = str(info.value)
    assert "the condition of tl.assume() does not hold" in text
    assert "language_gaps.py:" in text and "tl.assume(stride > 0)" in text
    assert "lhs (stride): -1" in text


def test_assume_is_not_checked_without_debug_mode() -> None:
    # A false assumption is undefined behaviour, as in Triton; the emulator does not check it.
    x = np.ones(32, np.float32)
    y = np.zeros(32, np.float32)
    K.assume_scale_kernel[(1,)](x, y, 1, 0, BLOCK=32)
    assert y[0] == 2 and not y[1:].any()


def test_assume_of_a_false_constant_is_a_compile_error(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(
        "import minitriton as triton\nimport minitriton.language as tl\n\n"
        "@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    tl.assume(B > 8)\n"
        "    tl.store(x_ptr, 1.0)\n"
    )
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)  # noqa: S102 - a test kernel
    with pytest.raises(CompileError, match=r"k.py:6:5: error: tl.assume\(\) of a condition"):
        ns["k"][(1,)](np.zeros(1, np.float32), B=4)


# ---------------------------------------------------------------- Python functions


def test_python_functions_run_at_compile_time(backend: str) -> None:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    K.compile_time_calls_kernel[(1,)](x, y, BLOCK=16, backend=backend)
    log = 4 + 4  # _log2(16) + ceil(log2(15))
    np.testing.assert_array_equal(y, x * log + 8)


def test_python_function_of_a_run_time_value_is_a_located_error() -> None:
    with pytest.raises(CompileError) as info:
        K.run_time_python_call_kernel[(1,)](np.zeros(16, np.float32), BLOCK=16)
    text = str(info.value)
    lines = Path(K.__file__).read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "next_pow2_log(x))" in t)
    assert f"language_gaps.py:{line}:" in text
    assert "the Python function 'next_pow2_log' runs at compile time" in text
    assert "argument 1 ('n') is a run-time tensor<16xf32>" in text
    assert "decorate 'next_pow2_log' with @triton.jit" in text


def test_failing_python_function_says_why(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(
        "import minitriton as triton\nimport minitriton.language as tl\n\n"
        "def half(n):\n    return n // 0\n\n"
        "@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    H: tl.constexpr = half(B)\n"
        "    tl.store(x_ptr, H)\n"
    )
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)  # noqa: S102 - a test kernel
    with pytest.raises(CompileError) as info:
        ns["k"][(1,)](np.zeros(1, np.float32), B=4)
    text = str(info.value)
    assert "k.py:9:23: error: calling the Python function 'half' at compile time failed" in text
    assert "ZeroDivisionError" in text


def test_standard_log2_is_triton_s() -> None:
    from minitriton.language.standard import _is_power_of_two, _log2

    assert [_log2(n) for n in (1, 2, 3, 4, 1023, 1024)] == [0, 1, 1, 2, 9, 10]
    assert [_is_power_of_two(n) for n in (0, 1, 6, 64)] == [False, True, False, True]


# ---------------------------------------------------------------- pointers from integers


def test_table_of_host_addresses() -> None:
    # Host addresses of NumPy arrays mean something to the emulator only.
    x = np.arange(40, dtype=np.float32)
    table = np.array([x.ctypes.data + 4 * 10, x.ctypes.data, x.ctypes.data + 4 * 33], np.int64)
    out = np.zeros((3, 7), np.float32)
    K.gather_rows_kernel[(3,)](table, out, 7, BLOCK=8)
    np.testing.assert_array_equal(out, np.stack([x[10:17], x[0:7], x[33:40]]))


def test_addresses_of_arrays_not_passed_are_found() -> None:
    rows = [np.full(5, i, np.float32) for i in range(3)]
    table = np.array([r.ctypes.data for r in rows[::-1]], np.int64)
    out = np.zeros((3, 5), np.float32)
    K.gather_rows_kernel[(3,)](table, out, 5, BLOCK=8)
    np.testing.assert_array_equal(out[:, 0], [2, 1, 0])


def test_pointer_to_int_and_back(backend: str) -> None:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    K.pointer_round_trip_kernel[(1,)](x, y, BLOCK=16, backend=backend)
    np.testing.assert_array_equal(y, x[::-1])


def test_unknown_address_is_a_located_error() -> None:
    table = np.array([64], np.int64)  # no array lives there
    with pytest.raises(UserError) as info:
        K.gather_rows_kernel[(1,)](table, np.zeros(4, np.float32), 4, BLOCK=4)
    text = str(info.value)
    # The cast keeps the raw address; the load that uses it is where it fails.
    assert "language_gaps.py:" in text and "tl.load(src + cols, mask=mask)" in text
    assert "the address 0x40 cast to a pointer is not inside any array" in text
    assert "keep the arrays whose data_ptr() you pass alive" in text


def test_misaligned_address_is_a_located_error() -> None:
    x = np.zeros(8, np.float32)
    table = np.array([x.ctypes.data + 2], np.int64)
    with pytest.raises(UserError, match="is not a multiple of 4 bytes from the start"):
        K.gather_rows_kernel[(1,)](table, np.zeros(4, np.float32), 4, BLOCK=4)


def test_a_past_the_end_address_is_bounds_checked() -> None:
    x = np.zeros(8, np.float32)
    table = np.array([x.ctypes.data + 4 * 6], np.int64)
    with pytest.raises(UserError, match="out of bounds|outside"):
        K.gather_rows_kernel[(1,)](table, np.zeros(4, np.float32), 4, BLOCK=4)


def test_dead_array_is_not_followed() -> None:
    table = np.array([np.ones(1 << 16, np.float32).ctypes.data], np.int64)  # freed at once
    with pytest.raises(UserError):
        K.gather_rows_kernel[(1,)](table, np.zeros(4, np.float32), 4, BLOCK=4)


def test_stores_through_addresses() -> None:
    # Programs write to different arrays: the emulator runs them one at a time.
    rows = [np.zeros(6, np.float32) for _ in range(3)]
    table = np.array([r.ctypes.data + 4 for r in rows], np.int64)
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    K.scatter_rows_kernel[(3,)](table, x, 5, BLOCK=8)
    for r, expected in zip(rows, x, strict=True):
        np.testing.assert_array_equal(r, [0, *expected])


def test_store_to_a_read_only_array_found_by_address() -> None:
    target = np.zeros(8, np.float32)
    target.flags.writeable = False
    table = np.array([target.ctypes.data], np.int64)
    with pytest.raises(UserError) as info:
        K.scatter_rows_kernel[(1,)](table, np.ones(5, np.float32), 5, BLOCK=8)
    text = str(info.value)
    assert "the kernel writes to 'target', which is read-only" in text
    assert "tl.store(dst + cols" in text


def test_grouped_gemm_on_the_emulator(rng: np.random.Generator) -> None:
    shapes = [(64, 32, 96), (32, 64, 32), (96, 96, 64)]  # (M, N, K)
    group_a = [rng.standard_normal((m, k)).astype(np.float16) for m, _, k in shapes]
    group_b = [rng.standard_normal((k, n)).astype(np.float16) for _, n, k in shapes]
    group_c = group_gemm(group_a, group_b, num_sm=4, backend="emulator")
    for a, b, c in zip(group_a, group_b, group_c, strict=True):
        ref = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_allclose(c.astype(np.float32), ref, atol=2e-2, rtol=2e-3)


# ---------------------------------------------------------------- control flow


def test_early_return_does_not_merge_variables(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 10)).astype(np.float32)
    y = np.zeros_like(x)
    K.early_return_kernel[(5,)](x, y, 3, 10, BLOCK=16, backend=backend)
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.parametrize("limit", [0, 3])
def test_helper_with_early_return(backend: str, limit: int) -> None:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    K.early_return_helper_kernel[(1,)](x, y, limit, BLOCK=16, backend=backend)
    np.testing.assert_array_equal(y, x * 0 if limit <= 0 else x * 2 + limit)


def _python_loop_variables(n: int, step_down: int) -> list[int]:
    """What Python gives for loop_variable_kernel (i defaults to 0 when the loop is empty)."""
    acc, i = 0, 0
    for i in range(n):  # noqa: B007 - the variable is what is tested
        acc += i
    j = 0
    for j in range(n + 5, 0, -step_down):  # noqa: B007
        pass
    k = n * 100
    for k in range(n, 3):  # noqa: B007
        pass
    return [acc, i, j, k]


@pytest.mark.parametrize("n, step_down", [(7, 2), (1, 3), (0, 1), (4, 4)])
def test_loop_variable_after_the_loop(backend: str, n: int, step_down: int) -> None:
    out = np.zeros(4, np.int32)
    K.loop_variable_kernel[(1,)](out, n, step_down, backend=backend)
    assert out.tolist() == _python_loop_variables(n, step_down)


def test_logical_methods(backend: str) -> None:
    x = np.array([-3, -1, 0, 1, 2, 5, 7, 9] * 2, np.float32)
    y = np.zeros(16, np.int32)
    K.logical_methods_kernel[(1,)](x, y, 0.5, 6.0, BLOCK=16, backend=backend)
    np.testing.assert_array_equal(y, ((x > 0.5) & (x < 6.0) | (x == 0)).astype(np.int32))


# ---------------------------------------------------------------- PTX for both archs

PTX_CASES = {
    "assume": (K.assume_scale_kernel, "*fp32:16, *fp32:16, i32, i32, 128"),
    "compile_time_calls": (K.compile_time_calls_kernel, "*fp32:16, *fp32:16, 64"),
    "gather_rows": (K.gather_rows_kernel, "*i64, *fp32, i32, 64"),
    "round_trip": (K.pointer_round_trip_kernel, "*fp32:16, *fp32:16, 64"),
    "early_return": (K.early_return_kernel, "*fp32, *fp32, i32, i32, 64"),
    "loop_variable": (K.loop_variable_kernel, "*i32, i32, 2"),
    "logical": (K.logical_methods_kernel, "*fp32, *i32, fp32, fp32, 64"),
    "grouped_gemm": (grouped_matmul_kernel, "*i64, *i64, *i64, *i32, *i32, i32, 4, 64, 64, 32"),
}


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("case", sorted(PTX_CASES))
def test_ptx_assembles(case: str, arch: str, tmp_path: Path) -> None:
    k = assemble(*PTX_CASES[case], arch, tmp_path)
    if case == "assume":
        assert "llvm.assume" in k.llir  # the hint reaches LLVM
        assert "__assertfail" not in k.ptx  # and is not a check


def test_checks_follow_arrays_found_by_address(monkeypatch: pytest.MonkeyPatch) -> None:
    # minitriton check's race and initialization tracking covers the arrays found mid-launch.
    monkeypatch.setenv("MINITRITON_CHECKS", "all")
    rows = [np.full(5, i, np.float32) for i in range(3)]
    table = np.array([r.ctypes.data for r in rows], np.int64)
    out = np.zeros((3, 5), np.float32)
    K.gather_rows_kernel[(3,)](table, out, 5, BLOCK=8)
    np.testing.assert_array_equal(out[:, 0], [0, 1, 2])


# ---------------------------------------------------------------- max_num_imprecise_acc

#: e4m3 codes of -2, -1, 0, 1 and 2.
_E4M3 = {-2: 0xC0, -1: 0xB8, 0: 0x00, 1: 0x38, 2: 0x40}


def _fp8(values: np.ndarray) -> object:
    import minitriton as triton
    import minitriton.language as tl

    codes = np.vectorize(_E4M3.__getitem__)(values).astype(np.uint8)
    return triton.reinterpret(codes, tl.float8e4nv)


def test_an_fp8_dot_takes_max_num_imprecise_acc_up_to_k() -> None:
    a = (np.arange(16 * 32) % 5 - 2).reshape(16, 32)
    b = (np.arange(32 * 16) % 3 - 1).reshape(32, 16)
    c = np.zeros((16, 16), np.float32)
    K.fp8_dot_kernel[(1,)](_fp8(a), _fp8(b), c, LIMIT=32)
    np.testing.assert_array_equal(c, (a @ b).astype(np.float32))


def test_max_num_imprecise_acc_above_k_is_refused_for_fp8() -> None:
    zeros = np.zeros((16, 32), np.int64)
    with pytest.raises(CompileError) as info:
        K.fp8_dot_kernel[(1,)](_fp8(zeros), _fp8(zeros.T), np.zeros((16, 16), np.float32), LIMIT=64)
    assert "max_num_imprecise_acc (64) must be <= K (32)" in str(info.value)
    assert "language_gaps.py:" in str(info.value)


def test_integers_cast_to_pointers_and_back_need_no_array(rng: np.random.Generator) -> None:
    """Triton's ``test_where`` selects between random integers cast to pointers."""
    a = rng.integers(-(2**62), 2**62, 64, dtype=np.int64)
    b = rng.integers(-(2**62), 2**62, 64, dtype=np.int64)
    cond = rng.random(64) < 0.5
    out = np.zeros(64, np.int64)
    K.select_addresses_kernel[(1,)](cond, a, b, out, BLOCK=64)
    np.testing.assert_array_equal(out, np.where(cond, a, b))


def test_raw_addresses_resolve_on_the_lanes_a_load_enables() -> None:
    x = np.arange(8, dtype=np.float32)
    table = np.zeros(8, np.int64)
    table[:4] = x.ctypes.data + 4 * np.arange(3, -1, -1)  # x[3], x[2], x[1], x[0]
    table[4:] = table.ctypes.data  # another array: masked off below
    out = np.zeros(8, np.float32)
    K.masked_raw_addresses_kernel[(1,)](x, table, out, BLOCK=8)
    np.testing.assert_array_equal(out, [3, 2, 1, 0, -1, -1, -1, -1])


# ---------------------------------------------------------------- bitonic_merge, split


def _merge_network(x: np.ndarray, descending: bool) -> np.ndarray:
    """Triton's bitonic merge, element by element: a lane takes its partner's value where
    ``(x > partner) != (descending ^ is_right)``."""
    x = x.copy()
    n = x.shape[-1]
    distance = n // 2
    while distance:
        lanes = np.arange(n)
        partner = x[..., lanes ^ distance]
        is_right = (lanes & distance) != 0
        x = np.where((x > partner) != (descending ^ is_right), partner, x)
        distance //= 2
    return x


@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_merge_is_tritons_network(
    backend: str, rng: np.random.Generator, descending: bool
) -> None:
    rising = np.sort(rng.standard_normal((4, 16)), axis=1)
    bitonic = np.concatenate([rising, rising[:, ::-1] - 1], axis=1).astype(np.float32)
    noise = rng.standard_normal((4, 32)).astype(np.float32)
    noise[0, 3], noise[1, 7], noise[2, 0], noise[2, 16] = np.nan, np.nan, -0.0, 0.0
    for x in (bitonic, noise):
        y = np.zeros_like(x)
        K.bitonic_merge_kernel[(1,)](x, y, ROWS=4, N=32, DESC=descending, backend=backend)
        np.testing.assert_array_equal(
            y.view(np.uint32), _merge_network(x, descending).view(np.uint32)
        )
    y = np.zeros_like(bitonic)
    K.bitonic_merge_kernel[(1,)](bitonic, y, ROWS=4, N=32, DESC=descending, backend=backend)
    want = np.sort(bitonic, axis=1)
    np.testing.assert_array_equal(y, want[:, ::-1] if descending else want)


def test_split_keeps_negative_zero_and_nan_bits(backend: str) -> None:
    x = np.array([[-0.0, 1.0], [np.nan, -0.0], [-np.inf, 0.0], [2.5, -3.0]], np.float32)
    x[1, 0] = np.frombuffer(np.uint32(0xFFC00001).tobytes(), np.float32)[0]  # a NaN payload
    a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    K.split_kernel[(1,)](x, a, b, N=4, backend=backend)
    np.testing.assert_array_equal(a.view(np.uint32), x[:, 0].view(np.uint32))
    np.testing.assert_array_equal(b.view(np.uint32), x[:, 1].view(np.uint32))
