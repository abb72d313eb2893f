"""The frontend rules of Triton's ``test_frontend.py``, on both backends.

``:=``, comprehension filters, ``.type`` of compile-time values
(``tl.constexpr_type``, ``tl.tuple_type``), tuples of Python ints carried
through loops, pointer/int64 bitcasts, fp8 division promoting to fp32,
compile-time ``min``/``max`` refusing NaN and -0.0, a library's own
``@tl.core.builtin``, compile-time results of helpers, an aggregate's
``@jit __getitem__``, host-side aggregates (generated ``__init__``,
inheritance, defaults, immutability, ``aggregate_replace``), fp16
accumulators, ``add_pre_run_hook``, ``MockTensor`` and ``triton._filecheck``.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import _filecheck
from minitriton.diagnostics import CompileError
from minitriton.runtime.jit import MockTensor
from tests.kernels import frontend_rules as K


def test_walrus_and_comprehension_filters(backend: str) -> None:
    out = np.zeros(5, np.int32)
    K.walrus_and_filters[(1,)](out, backend=backend)
    np.testing.assert_array_equal(out, [21, 30 + 40 + 200 + 4000, 0, 2, 4])


def test_a_tuple_of_python_ints_is_carried_through_a_loop(backend: str) -> None:
    out = np.zeros(2, np.int32)
    K.tuple_of_scalars_in_a_loop[(1,)](out, 3, backend=backend)
    np.testing.assert_array_equal(out, [4, 7])


def test_int64_bits_as_a_pointer(backend: str) -> None:
    x = np.arange(10, 14, dtype=np.int32)
    out = np.zeros(1, np.int32)
    K.int_bits_as_pointer[(1,)](x, out, backend=backend)
    assert out[0] == 11


def test_helpers_return_compile_time_values(backend: str) -> None:
    out = np.zeros(1, np.int32)
    K.constexpr_returns[(1,)](out, backend=backend)
    assert out[0] == 41


def test_jit_getitem_and_a_python_factory_of_an_aggregate(backend: str) -> None:
    out = np.zeros(4, np.int32)
    K.aggregate_indexing[(1,)](out, backend=backend)
    np.testing.assert_array_equal(out, np.arange(4) * 3 + 10)


def test_an_fp16_accumulator_accumulates_in_fp16(backend: str) -> None:
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((16, 16)).astype(np.float16) for _ in range(2))
    out = np.zeros((16, 16), np.float16)
    K.fp16_accumulator[(1,)](a, b, out, backend=backend)
    ref = a.astype(np.float32) @ b.astype(np.float32) + 1
    np.testing.assert_allclose(out.astype(np.float32), ref, atol=0.05, rtol=0.02)


def test_types_of_values_and_narrow_float_division() -> None:
    _filecheck.run_parser(K.types_of_values)
    _filecheck.run_parser(K.narrow_float_division)
    assert tl.constexpr_type(3) == tl.constexpr_type(3) != tl.constexpr_type(4)
    assert tl.tuple_type([tl.int32]) != tl.tuple_type([tl.int64])


@pytest.mark.parametrize(("a", "b", "words"), [
    (1.0, float("nan"), "does not support NaN"), (1.0, -0.0, "does not support negative zero"),
])  # fmt: skip
def test_constexpr_min_refuses_nan_and_negative_zero(a: float, b: float, words: str) -> None:
    out = np.zeros(1, np.float32)
    with pytest.raises(CompileError, match=words):
        K.constexpr_min[(1,)](a, b, out)
    K.constexpr_min[(1,)](1.0, 0.5, out)
    assert out[0] == 0.5


def test_a_library_builtin_runs_at_compile_time() -> None:
    out = np.zeros(1, np.int32)
    K.library_builtin[(1,)](out)
    assert out[0] == 8
    assert "make_list" not in tl.core.BUILTINS  # it did not replace a tl builtin


@pytest.mark.parametrize(("kernel", "words"), [
    (K.unpack_too_many, "too many values to unpack (expected 2)"),
    (K.unpack_too_few, "not enough values to unpack (expected 3, got 2)"),
    (K.return_in_loop, "Cannot have `return` statements inside `while` or `for`"),
])  # fmt: skip
def test_pythons_words_for_bad_assignments(kernel: triton.JITFunction, words: str) -> None:
    args = (3,) if kernel is K.return_in_loop else ()
    with pytest.raises(triton.CompilationError) as err:
        _filecheck.run_parser(kernel, args=args)
    assert words in str(err.value)


# -- host-side aggregates ------------------------------------------------------


@triton.aggregate
class Base:
    x: tl.constexpr = tl.constexpr(100)

    @triton.constexpr_function
    def get_x(self):
        return self.x


@triton.aggregate
class Child(Base):
    y: tl.constexpr
    z: tl.constexpr = 7


def test_an_aggregate_built_in_python_gets_triton_init() -> None:
    child = Child(1, 2)
    assert (child.x.value, child.y.value, child.z.value) == (1, 2, 7)
    assert isinstance(child.x, tl.constexpr) and isinstance(child.z, tl.constexpr)
    assert Child(y=5).x.value == 100  # the base's default
    assert child.get_x() == 1
    with pytest.raises(TypeError, match="missing required argument: 'y'"):
        Child()
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        Child(1, 2, w=3)


def test_an_aggregate_holds_tuples_as_tl_tuples() -> None:
    from typing import NamedTuple

    class Shape(NamedTuple):
        x: int
        y: int

    @triton.aggregate
    class Layout:
        shape: tl.tuple
        strides: tl.tuple

    layout = Layout(Shape(3, 7), (7, 1))
    assert isinstance(layout.shape, tl.tuple) and isinstance(layout.strides, tl.tuple)
    assert layout.shape.x.value == 3 and layout.shape[1].value == 7
    assert [s.value for s in layout.strides] == [7, 1]
    with pytest.raises(AttributeError, match="no field 'z'"):
        _ = layout.shape.z
    assert not isinstance((1, 2), tl.tuple)


def test_an_aggregate_is_immutable_and_replace_copies_it() -> None:
    child = Child(1, 2)
    with pytest.raises(AttributeError, match="cannot assign to field 'x' on immutable aggregate"):
        child.x = tl.constexpr(9)
    new = tl.aggregate_replace(child, x=30)
    assert (new.x.value, new.y.value, child.x.value) == (30, 2, 1)
    with pytest.raises(TypeError, match="has no field 'q'"):
        tl.aggregate_replace(child, q=1)
    with pytest.raises(TypeError, match="expects an aggregate instance"):
        tl.aggregate_replace(42, x=1)


def test_an_aggregate_inherits_only_from_aggregates() -> None:
    class Plain:
        pass

    with pytest.raises(TypeError, match="Aggregates can only inherit from other aggregates"):

        @triton.aggregate
        class Bad(Plain):
            x: tl.constexpr


# -- host API ------------------------------------------------------------------


def test_pre_run_hooks_run_before_every_launch() -> None:
    K.add_two.pre_run_hooks.clear()
    calls: list[int] = []

    def zero_first(a: np.ndarray, *args: object, **kwargs: object) -> None:
        calls.append(len(args))
        a[:] = 0

    K.add_two.add_pre_run_hook(zero_first)
    try:
        a = np.ones(4, np.int32)
        K.add_two[(1,)](a, 4)
        np.testing.assert_array_equal(a, 2)
        a = np.ones(4, np.int32)
        K.add_two.run(a, 4, grid=(1,), warmup=False)
        np.testing.assert_array_equal(a, 2)
        assert calls == [1, 1]
        with pytest.raises(TypeError, match="callable"):
            K.add_two.add_pre_run_hook(3)
    finally:
        K.add_two.pre_run_hooks.clear()
    a = np.ones(4, np.int32)
    K.add_two[(1,)](a, 4)
    np.testing.assert_array_equal(a, 3)  # no hook any more


def test_warmup_takes_torch_dtypes_as_mock_tensors() -> None:
    torch = pytest.importorskip("torch")
    compiled = K.fp16_accumulator.warmup(torch.float16, torch.float16, torch.float16, grid=(1,))
    kinds = [(s.kind, str(s.type), s.divisible_by_16) for s in compiled.arg_specs]
    assert kinds == [("pointer", "ptr<f16>", True)] * 3
    mock = MockTensor(torch.float32, [4, 8])
    assert mock.stride() == (8, 1) and mock.data_ptr() == 0
    assert MockTensor.wrap_dtype(3) == 3


def test_autotuned_and_heuristic_warmups_take_torch_dtypes_too() -> None:
    torch = pytest.importorskip("torch")
    configs = [triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)]
    tuned = triton.autotune(configs=configs, key=[])(K.fp16_accumulator)
    compiled = tuned.warmup(torch.float16, torch.float16, torch.float16, grid=(1,))
    assert len(compiled) == 2  # one per config, as Triton's Autotuner.warmup
    for c in compiled:
        assert [(s.kind, str(s.type)) for s in c.arg_specs] == [("pointer", "ptr<f16>")] * 3
    # the heuristic sees a_ptr as the mock tensor, and gives it to b_ptr
    with_heuristic = triton.heuristics({"b_ptr": lambda args: args["a_ptr"]})(K.fp16_accumulator)
    one = with_heuristic.warmup(torch.float16, out_ptr=torch.float16, grid=(1,))
    assert [str(s.type) for s in one.arg_specs] == ["ptr<f16>"] * 3


def test_filecheck_tests_compile_then_skip() -> None:
    module = _filecheck.run_parser(K.types_of_values)
    text = module.str_nodebug()
    assert "tt.func @types_of_values" in text and "loc(" not in text
    with pytest.raises(pytest.skip.Exception, match="MLIR"):
        _filecheck.filecheck_test(K.types_of_values)()
    with pytest.raises(triton.CompilationError):  # a kernel that does not compile still fails
        _filecheck.filecheck_test(K.unpack_too_many)()


def test_varargs_helpers(backend: str) -> None:
    out = np.zeros(2, np.int32)
    K.varargs_helper[(1,)](out, backend=backend)
    np.testing.assert_array_equal(out, [43, 71])
    with pytest.raises(triton.CompilationError, match=r"a kernel cannot take '\*args'"):
        _filecheck.run_parser(K.varargs_kernel, args=(out,))


def test_dtype_annotations_type_scalar_arguments(backend: str) -> None:
    out = np.zeros(4, np.float32)
    K.typed_scalars[(1,)](out, 1.0 / 3, 1, 2**40, 5, backend=backend)
    np.testing.assert_array_equal(out, [np.float16(1.0 / 3), 1, 2.0**41, 5])
    K.typed_scalars[(1,)](out, float("inf"), 100, 16, 1, backend=backend)
    np.testing.assert_array_equal(out, [np.inf, 100, 32, 1])


def test_device_assert_checks_the_lanes_its_mask_enables(backend: str) -> None:
    from minitriton.runtime.errors import InterpreterError

    x = np.array([1, 2, 3, 4, -5, -6, -7, -8], np.float32)
    K.masked_assert[(1,)](x, 8, debug=True, backend=backend)  # the negatives are masked off
    x[2] = -3
    with pytest.raises(InterpreterError, match="x must be positive") as info:
        K.masked_assert[(1,)](x, 8, debug=True, backend=backend)
    # On the GPU it is also a RuntimeError, as Triton's failed device assertion is.
    assert backend == "emulator" or isinstance(info.value, RuntimeError)


@pytest.mark.parametrize(("op", "x", "y"), [
    ("add", 2**31 - 1, 1), ("sub", -(2**31), 1), ("mul", 2**30, 2),
])  # fmt: skip
def test_debug_mode_reports_signed_overflow(backend: str, op: str, x: int, y: int) -> None:
    from minitriton.runtime.errors import InterpreterError

    xs, ys = np.array([1, 2, x, 3], np.int32), np.array([1, 1, y, 1], np.int32)
    out = np.zeros(4, np.int32)
    K.int_ops[(1,)](xs, ys, out, OP=op, backend=backend)  # wraps around, unchecked
    wide = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](xs.astype(np.int64), ys)
    np.testing.assert_array_equal(out, wide.astype(np.int32))
    with pytest.raises(InterpreterError, match=f"int32 overflow detected for operation {op}"):
        K.int_ops[(1,)](xs, ys, out, OP=op, backend=backend, debug=True)
    ok = np.array([5, -7, 9, 11], np.int32)
    K.int_ops[(1,)](ok, ys, out, OP=op, backend=backend, debug=True)  # no overflow: no error


def test_tl_standard_and_target_info_are_attributes_in_a_fresh_process() -> None:
    import subprocess
    import sys

    code = (
        "import minitriton.language as tl; "
        "print(tl.target_info.current_target().arch, tl.standard.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["90", "minitriton.language.standard"]


def test_the_interpreters_rewriter_names_the_def_line() -> None:
    import inspect

    lines, first = inspect.getsourcelines(K.add_two.fn)
    def_line = first + next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    assert K.add_two.rewrite() is K.add_two.fn
    assert K.add_two.rewriter.def_file_lineno == def_line == first + 1  # after @triton.jit
    assert K.add_two.rewriter.filename == inspect.getsourcefile(K.add_two.fn)


def _mul_add_inputs() -> list[np.ndarray]:
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: an FMA keeps the 2^-24 that a rounded product drops
    a = np.full(16, 1 + 2.0**-12, np.float32)
    return [a, a.copy(), np.full(16, -(1 + 2.0**-11), np.float32), np.zeros(16, np.float32)]


def test_enable_fp_fusion_false_keeps_multiply_and_add_apart() -> None:
    from minitriton.compiler import CompileOptions, compile_kernel

    fn = K.mul_add
    specs = fn.specialize(fn.bind(_mul_add_inputs(), {}))
    fused = compile_kernel(fn.source, specs, CompileOptions(), stop_after="ptx")
    apart = compile_kernel(
        fn.source, specs, CompileOptions(enable_fp_fusion=False), stop_after="ptx"
    )
    assert "fma.rn.f32" in fused.asm["ptx"]
    assert "fma.rn.f32" not in apart.asm["ptx"] and "mul.rn.f32" in apart.asm["ptx"]
    assert "attributes {fp_fusion = false}" in apart.asm["ir-opt"]  # so caches tell them apart


def test_the_default_fp_fusion_comes_from_tritons_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from minitriton.compiler import CompileOptions

    assert CompileOptions().enable_fp_fusion
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert not CompileOptions().enable_fp_fusion


@pytest.mark.gpu
def test_enable_fp_fusion_changes_the_gpus_rounding() -> None:
    *inputs, out = _mul_add_inputs()
    K.mul_add[(1,)](*inputs, out, backend="gpu")
    np.testing.assert_array_equal(out, 2.0**-24)  # one rounding: the FMA
    K.mul_add[(1,)](*inputs, out, backend="gpu", enable_fp_fusion=False)
    np.testing.assert_array_equal(out, 0.0)  # the product rounded first, as NumPy does
    K.mul_add[(1,)](*inputs, out, backend="emulator")
    np.testing.assert_array_equal(out, 0.0)  # the emulator never fuses
