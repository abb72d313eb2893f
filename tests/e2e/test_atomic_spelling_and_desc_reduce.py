"""Atomics in Triton's PTX spelling, and descriptor reductions with Triton's element types.

Triton writes a read-modify-write as ``atom.global.<scope>.<sem>.<op>``
and a compare-and-swap as ``atom.global.<sem>.<scope>.cas``; tests (and
people) grep for those words, so the GPU backend spells them the same.

``desc.atomic_<kind>`` takes the types of TMA's reductions: no fp32
min/max, no int64 add, no 8- or 16-bit integers; fp16/bf16 min/max only
when compiling for sm_90 or newer. The GPU runs those two with a
``cas.b16`` loop (PTX has no scalar 16-bit float ``atom.min``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature
from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.e2e.ptxas_check import assemble, needs_ptxas

M, N, BM, BN = 8, 32, 4, 16


@triton.jit
def rmw_kernel(p, v, out, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    i = tl.arange(0, 64)
    x = tl.load(v + i)
    if OP == "add":
        old = tl.atomic_add(p + i, x, sem=SEM, scope=SCOPE)
    elif OP == "max":
        old = tl.atomic_max(p + i, x, sem=SEM, scope=SCOPE)
    elif OP == "xchg":
        old = tl.atomic_xchg(p + i, x, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_cas(p + i, x, x + 1, sem=SEM, scope=SCOPE)
    tl.store(out + i, old)


@triton.jit
def reduce_kernel(desc, a_ptr, KIND: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Each program folds its own block of ``a`` into the same block of ``desc``."""
    m0 = tl.program_id(0) * BM
    n0 = tl.program_id(1) * BN
    rows = m0 + tl.arange(0, BM)[:, None]
    cols = n0 + tl.arange(0, BN)[None, :]
    val = tl.load(a_ptr + rows * desc.shape[1] + cols)
    if KIND == "add":
        desc.atomic_add([m0, n0], val)
    elif KIND == "min":
        desc.atomic_min([m0, n0], val)
    elif KIND == "max":
        desc.atomic_max([m0, n0], val)
    elif KIND == "and":
        desc.atomic_and([m0, n0], val)
    elif KIND == "or":
        desc.atomic_or([m0, n0], val)
    else:
        desc.atomic_xor([m0, n0], val)


_NP = {"float16": np.float16, "float32": np.float32, "int32": np.int32, "uint32": np.uint32,
       "int64": np.int64, "uint64": np.uint64}  # fmt: skip
_REF = {"add": np.add, "min": np.minimum, "max": np.maximum,
        "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}  # fmt: skip


def _data(dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype.startswith("float"):
        return rng.uniform(-100, 100, (M, N)).astype(_NP[dtype])
    return rng.integers(0, 1 << 20, (M, N)).astype(_NP[dtype])


def _ptx(kernel, signature: str, arch: str = "sm_90a") -> str:
    jit = base_jit_function(kernel)
    specs = parse_signature(signature, kernel_params(jit.fn))
    options = CompileOptions(arch=arch)
    return compile_kernel(jit.source, specs, options, stop_after="ptx").asm["ptx"]


@pytest.mark.parametrize(
    ("op", "dtype", "sem", "scope", "want"),
    [
        ("add", "fp32", "acq_rel", "gpu", "atom.global.gpu.acq_rel.add.f32"),
        ("add", "fp32", "relaxed", "gpu", "atom.global.gpu.relaxed.add.f32"),
        ("add", "i32", "acquire", "cta", "atom.global.cta.acquire.add.u32"),
        ("add", "fp16", "release", "sys", "atom.global.sys.release.add.noftz.f16"),
        ("add", "bf16", "acq_rel", "gpu", "atom.global.gpu.acq_rel.add.noftz.bf16"),
        ("max", "fp32", "acq_rel", "gpu", "atom.global.gpu.acq_rel.min.u32"),
        ("max", "u64", "relaxed", "gpu", "atom.global.gpu.relaxed.max.u64"),
        ("xchg", "i64", "release", "gpu", "atom.global.gpu.release.exch.b64"),
        ("cas", "i32", "acquire", "gpu", "atom.global.acquire.gpu.cas.b32"),
        ("cas", "fp16", "relaxed", "cta", "atom.global.relaxed.cta.cas.b16"),
    ],
)
def test_atomics_are_spelled_as_triton_spells_them(op, dtype, sem, scope, want) -> None:
    ptx = _ptx(rmw_kernel, f'*{dtype}, *{dtype}, *{dtype}, "{op}", "{sem}", "{scope}"')
    assert want in ptx
    assert f"atom.{sem}." not in ptx  # the old order (semantics first) is gone


@pytest.mark.parametrize("kind", ["add", "min", "max", "and", "or", "xor"])
@pytest.mark.parametrize("dtype", ["uint32", "int32", "uint64", "int64", "float32", "float16"])
def test_descriptor_reductions_match_numpy_or_are_refused_as_triton_does(
    kind: str, dtype: str, backend: str, rng: np.random.Generator
) -> None:
    a, out = _data(dtype, rng), _data(dtype, rng)
    desc = TensorDescriptor.from_tensor(out, [BM, BN])
    allowed = {"add": {"uint32", "int32", "uint64", "float32", "float16"},
               "min": {"uint32", "int32", "uint64", "int64", "float16"},
               "max": {"uint32", "int32", "uint64", "int64", "float16"}}.get(
                   kind, {"uint32", "int32", "uint64", "int64"})  # fmt: skip
    if dtype not in allowed:
        with pytest.raises(CompileError, match=f"desc.atomic_{kind} does not support"):
            reduce_kernel[(M // BM, N // BN)](desc, a, KIND=kind, BM=BM, BN=BN, backend=backend)
        return
    want = _REF[kind](out, a)
    reduce_kernel[(M // BM, N // BN)](desc, a, KIND=kind, BM=BM, BN=BN, backend=backend)
    np.testing.assert_array_equal(out, want)


def test_the_refusal_is_located_and_names_the_types_taken() -> None:
    desc = TensorDescriptor.from_tensor(np.zeros((M, N), np.float32), [BM, BN])
    with pytest.raises(CompileError) as info:
        reduce_kernel[(2, 2)](desc, np.zeros((M, N), np.float32), KIND="max", BM=BM, BN=BN)
    text = str(info.value)
    assert "test_atomic_spelling_and_desc_reduce.py:" in text
    assert "desc.atomic_max([m0, n0], val)" in text
    assert "takes uint32, int32, uint64, int64, fp16, bf16" in text


@pytest.mark.parametrize("kind", ["min", "max"])
def test_half_min_max_needs_native_tma(kind: str) -> None:
    with pytest.raises(CompileError, match=f"desc.atomic_{kind} on bf16 needs native TMA"):
        _ptx(reduce_kernel, f'tensordesc<bf16[{BM}, {BN}]>, *bf16, "{kind}", {BM}, {BN}', "sm_80")


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80", "sm_75"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("kind", ["min", "max"])
def test_half_min_max_reductions_assemble(kind: str, dtype: str, arch: str, tmp_path: Path) -> None:
    # compared in fp32 inside a cas.b16 loop: min.f16 and .bf16 would need sm_80
    sig = f'tensordesc<{dtype}[{BM}, {BN}]>, *{dtype}, "{kind}", {BM}, {BN}'
    ptx = assemble(reduce_kernel, sig, arch, tmp_path).ptx
    assert f"{kind}.f32 " in ptx and "atom.global.relaxed.gpu.cas.b16" in ptx


@needs_ptxas
@pytest.mark.parametrize("op", ["add", "max", "xchg", "cas"])
def test_atomics_in_tritons_spelling_assemble(op: str, tmp_path: Path) -> None:
    assemble(rmw_kernel, f'*fp32, *fp32, *fp32, "{op}", "acq_rel", "gpu"', "sm_90a", tmp_path)
