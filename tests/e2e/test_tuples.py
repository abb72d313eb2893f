"""Tuples in kernels, as Triton 3.x has them, on both backends against NumPy.

Tuple and ``NamedTuple`` arguments (each item specialized as an argument of
its own), ``t[i]`` with a compile-time index, ``len``, ``tl.tuple``,
comprehensions over a tuple, ``f(*t)``, tuples built inside a kernel and
passed to helpers; kernels without parameters; kernels that read their
enclosing function's variables; ``tl.random.philox``. Each kernel is also
assembled by ``ptxas`` for sm_90a and sm_80.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler.errors import CompilationError, CompileTimeAssertionFailure
from minitriton.diagnostics import CompileError
from minitriton.frontend.source import ArgSpec
from minitriton.signature import spec_for_value
from tests.e2e import philox_ref
from tests.e2e.ptxas_check import assemble_for_args, needs_ptxas
from tests.kernels import tuples as K

# -- arguments ------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 3])
def test_tuple_of_pointers_and_floats(backend: str, size: int) -> None:
    outs = tuple(np.zeros(1, np.float32) for _ in range(size))
    values = tuple(float(i) + 0.5 for i in range(size))
    K.store_incremented[(1,)](outs, values, backend=backend)
    assert [float(o[0]) for o in outs] == [v + 1 for v in values]


def test_nested_tuple_with_none_and_constexpr(backend: str) -> None:
    x, y = np.array([3], np.int32), np.array([10], np.int32)
    out = np.zeros(4, np.int32)
    K.nested_items[(1,)](out, (x, (7, None, y, tl.constexpr(4))), 2, backend=backend)
    np.testing.assert_array_equal(out, [6, 7, 14, 4])


def test_strides_in_a_tuple_and_a_constexpr_shape(backend: str) -> None:
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    view = x[:, ::2]  # strides (8, 2) in elements
    y = np.zeros((8, 4), np.float32)
    strides = tuple(s // x.itemsize for s in view.strides)
    K.strided_copy[(1,)](x, y, view.shape, strides, 3.0, backend=backend)
    np.testing.assert_array_equal(y, 3.0 * view)


def test_a_tuple_argument_is_specialized_item_by_item() -> None:
    spec = spec_for_value("t", (np.zeros(4, np.float32), (1, 17, None, 2.5)))
    assert spec.kind == "tuple"
    names = [p.name for p in spec.kernel_params()]
    assert names == ["t_0", "t_1_0", "t_1_1", "t_1_3"]  # None is a constexpr: no parameter
    kinds = [(p.kind, str(p.type), p.equal_to_1) for p in spec.kernel_params()]
    assert kinds == [("pointer", "ptr<f32>", False), ("scalar", "i32", True),
                     ("scalar", "i32", False), ("scalar", "f32", False)]  # fmt: skip
    # The specialization key sees every item: 1 (folded) and 2 are different kernels.
    other = spec_for_value("t", (np.zeros(4, np.float32), (2, 17, None, 2.5)))
    assert spec.key() != other.key()
    # A constexpr parameter keeps the whole tuple as one compile-time value.
    assert spec_for_value("t", (1, 2), is_constexpr=True) == ArgSpec("t", "constexpr",
                                                                     value=(1, 2))  # fmt: skip


def test_a_tuple_of_the_wrong_length_is_refused_at_launch() -> None:
    compiled = K.store_incremented.warmup((np.zeros(1, np.float32),), (1.0,), grid=(1,))
    with pytest.raises(TypeError, match="expected a tuple of 1 items"):
        compiled[(1,)]((np.zeros(1, np.float32), np.zeros(1, np.float32)), (1.0, 2.0))


# -- tuples inside kernels -------------------------------------------------------------


def test_star_args_and_tuple_concatenation(backend: str) -> None:
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(8, np.float32)
    K.star_args[(1,)](out, x, backend=backend)
    np.testing.assert_array_equal(out, x[:8] + x[8:] + 2.0)


def test_compile_time_tuples(backend: str) -> None:
    out = np.full(7, -1, np.int32)
    K.compile_time_tuples[(1,)](out, backend=backend)
    np.testing.assert_array_equal(out, [1, 0, 0, 10, 20, 30, 9])


def test_namedtuple_arguments_fields_and_helpers(backend: str) -> None:
    x = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    a = np.array([5.25], np.float32)
    op = K.Scaled(K.times_loaded, (a,))
    src = K.Matrix(x, x.shape, tuple(s // 4 for s in x.strides))
    dst = K.Matrix(y, y.shape, tuple(s // 4 for s in y.strides))
    K.apply_to_matrix[(1,)](op, src, dst, BLOCK=64, backend=backend)
    np.testing.assert_allclose(y, x[:16, :16] * a[0], rtol=1e-6)


def test_kernel_without_parameters(backend: str) -> None:
    K.no_parameters[(1,)](backend=backend)
    assert K.no_parameters.warmup(grid=(1,)).name == "no_parameters"


# -- closure variables ---------------------------------------------------------------


def _kernel_filling_with(value: int, block: int) -> triton.JITFunction:
    """A kernel defined in a function: it reads ``value`` and ``block`` from there
    (compile-time values, as Triton's rule for globals and closure variables asks)."""
    VALUE = tl.constexpr(value)
    BLOCK = tl.constexpr(block)

    @triton.jit
    def fill(out):
        offs = tl.arange(0, BLOCK)
        tl.store(out + offs, tl.full([BLOCK], VALUE, tl.int32))

    return fill


def test_kernels_read_their_enclosing_functions_variables(backend: str) -> None:
    # The same source twice with other values: neither cache may mix them up.
    for value, block in [(3, 8), (4, 16)]:
        out = np.zeros(16, np.int32)
        _kernel_filling_with(value, block)[(1,)](out, backend=backend)
        assert (out[:block] == value).all() and (out[block:] == 0).all()


def test_a_closure_variable_shadows_a_global() -> None:
    K = tl.constexpr(5)  # noqa: N806 - the global tests.kernels alias K is shadowed here

    @triton.jit
    def store_k(out):
        tl.store(out, K)

    out = np.zeros(1, np.int32)
    store_k[(1,)](out)
    assert out[0] == 5


# -- tl.random ----------------------------------------------------------------------


def test_philox_matches_tritons_stream(backend: str) -> None:
    n, seed, c0, c1 = 64, 0x1234_5678_9ABC, 7, 3
    out = np.zeros(4 * n, np.uint32)
    K.philox_words[(1,)](out, seed, c0, c1, N=n, backend=backend)
    counter = (c0 + np.arange(n)).astype(np.int32)
    words = philox_ref.philox(seed, counter, np.full(n, c1, np.int32),
                              np.zeros(n, np.int32), np.zeros(n, np.int32))  # fmt: skip
    np.testing.assert_array_equal(out.reshape(4, n), np.stack(words))


@pytest.mark.parametrize("rounds", [1, 10])
def test_philox_impl_on_64_bit_words(backend: str, rounds: int) -> None:
    n, c0, k0, k1 = 32, 2**40, 99, 2**33 + 5
    out = np.zeros(2 * n, np.uint64)
    K.philox_impl_words[(1,)](out, c0, k0, k1, N=n, ROUNDS=rounds, backend=backend)
    zero = np.zeros(n, np.uint64)
    counter = (c0 + np.arange(n)).astype(np.uint64)
    words = philox_ref.philox_impl(counter, zero, zero, zero, np.uint64(k0), np.uint64(k1), rounds)
    np.testing.assert_array_equal(out.reshape(2, n), np.stack(words[:2]))


# -- errors ---------------------------------------------------------------------------


@triton.jit
def _index_with_run_time_value(out, values, i):
    tl.store(out, values[i])


@triton.jit
def _index_a_block(out):
    x = tl.arange(0, 8)
    tl.store(out, x[0])  # <- block


@triton.jit
def _unpack_a_block(out):
    x = tl.arange(0, 8)
    tl.store(out, tl.maximum(*x))


@triton.jit
def _comprehension_over_a_block(out):
    x = tl.arange(0, 8)
    t = [v for v in x]
    tl.store(out, t[0])


@triton.jit
def _assign_to_an_item(out):
    t = tl.tuple([5, 6])
    t[0] = 0
    tl.store(out, t[0])


@triton.jit
def _static_assert_fails(N: tl.constexpr):
    tl.static_assert(N > 4, "N too small")


def _message(kernel: triton.JITFunction, *args: object) -> str:
    with pytest.raises(CompileError) as info:
        kernel[(1,)](*args)
    return info.value.first.message


def test_a_tuple_index_must_be_known_at_compile_time() -> None:
    msg = _message(_index_with_run_time_value, np.zeros(1, np.int32), (1, 2), 0)
    assert msg == "cannot index a tuple (int 1, i32) with i32"


def test_a_block_is_still_not_indexed_by_an_integer() -> None:
    msg = _message(_index_a_block, np.zeros(1, np.int32))
    assert msg == "unsupported construct: indexing a block or pointer with an integer '0'"


def test_star_args_and_comprehensions_need_tuples() -> None:
    assert _message(_unpack_a_block, np.zeros(1, np.int32)).startswith("'*' unpacks a tuple")
    msg = _message(_comprehension_over_a_block, np.zeros(1, np.int32))
    assert msg.startswith("a comprehension in a kernel iterates over a tuple")


def test_tuples_are_immutable() -> None:
    msg = _message(_assign_to_an_item, np.zeros(1, np.int32))
    assert msg == "unsupported construct: assignment to a subscript"


def test_tritons_error_names() -> None:
    assert triton.CompilationError is CompilationError is CompileError
    with pytest.raises(CompileTimeAssertionFailure, match="N too small"):
        _static_assert_fails[(1,)](N=2)


# -- the GPU path ------------------------------------------------------------------------

PTX_CASES = [
    (K.store_incremented, ((np.zeros(1, np.float32),) * 2, (1.0, 2.0))),
    (K.nested_items, (np.zeros(4, np.int32),
                      (np.zeros(1, np.int32), (7, None, np.zeros(1, np.int32), tl.constexpr(4))),
                      2)),
    (K.strided_copy, (np.zeros(64, np.float32), np.zeros(64, np.float32), (8, 4), (8, 2), 3.0)),
    (K.star_args, (np.zeros(8, np.float32), np.zeros(16, np.float32))),
    (K.philox_words, (np.zeros(64, np.uint32), 5, 1, 2, 16)),
]  # fmt: skip


@needs_ptxas
@pytest.mark.parametrize(("kernel", "args"), PTX_CASES, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_tuple_kernels_assemble(tmp_path, kernel, args, arch: str) -> None:
    assemble_for_args(kernel, args, arch, tmp_path)
