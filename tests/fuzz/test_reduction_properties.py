"""Property: reductions and scans of every shape Inductor writes run right, on both backends.

Hypothesis draws a case: a 1-D ``[N]`` or 2-D ``[M, N]`` block per program
(sizes 1 to 64, a size-1 axis included), the axis (0, 1 or ``None``),
``keep_dims``, the combiner (``tl.sum``, ``tl.max``, Inductor's ``max2``,
``max2_strict`` and ``min2`` with helper calls in the combiner, ``prod``,
``any``, ``tl.argmax``, ``tl.reduce`` of ``(value, index)`` pairs and of
Welford's triples, the online softmax's max and sum together), what is done
with the result (broadcast back over the block, a splat of a scalar, a
``tl.where`` against it), and for scans ``tl.cumsum``, ``tl.cumprod`` and
``tl.associative_scan`` of one value or of ``(value, index)`` pairs, forward
or reversed. Several programs run at once, so the emulator's batches are
exercised too.

Each case runs on the emulator against NumPy, and compiles to PTX for sm_90a
or sm_80, assembled by ``ptxas`` when it is on ``PATH``: an internal error
anywhere fails the test. The ``gpu`` variant runs the same cases on the device.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from minitriton.compiler import CompileOptions, compile_kernel  # noqa: E402
from tests.kernels.inductor_reductions import reduce_case_kernel, scan_case_kernel  # noqa: E402

PTXAS = shutil.which("ptxas")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))

REDUCE_OPS = [
    "sum", "max", "max2", "max2_strict", "min2", "prod", "any", "argmax", "max_with_index",
    "welford", "softmax",
]  # fmt: skip
FLOAT_ONLY = {"welford", "softmax"}
SCAN_OPS = ["cumsum", "cumprod", "scan_add", "cummax"]
SIZES = [1, 2, 4, 8, 16, 32, 64]


@dataclass(frozen=True)
class Case:
    """One drawn kernel specialization and its input."""

    kernel: Any
    programs: int
    dtype: str
    consts: dict[str, Any]
    seed: int

    @property
    def shape(self) -> tuple[int, ...]:
        m, n = self.consts["M"], self.consts["N"]
        return (m, n) if self.consts["TWO_D"] else (n,)

    def inputs(self) -> np.ndarray:
        """Values that keep products finite and make ties likely (argmax's first index)."""
        rng = np.random.default_rng(self.seed)
        shape = (self.programs, *self.shape)
        op = self.consts["OP"]
        if op in ("prod", "cumprod"):
            if self.dtype == "int32":
                return rng.integers(-3, 4, shape).astype(np.int32)
            return rng.uniform(0.8, 1.25, shape).astype(self.dtype)
        if self.dtype == "int32":
            return rng.integers(-20, 21, shape).astype(np.int32)
        return (rng.integers(-40, 41, shape) / 8).astype(self.dtype)  # ties, exact sums


@st.composite
def reduce_cases(draw: st.DrawFn) -> Case:
    op = draw(st.sampled_from(REDUCE_OPS))
    two_d = draw(st.booleans())
    m = draw(st.sampled_from(SIZES)) if two_d else 1
    n = draw(st.sampled_from(SIZES))
    axes = [0, 1] if two_d else [0]
    if op != "softmax":  # Inductor's online softmax reduces over one axis
        axes.append(None)
    consts = {
        "M": m,
        "N": n,
        "TWO_D": two_d,
        "AXIS": draw(st.sampled_from(axes)),
        "KEEP": draw(st.booleans()),
        "OP": op,
        "POST": draw(st.sampled_from(["bcast", "where"])),
    }
    dtype = "float32" if op in FLOAT_ONLY else draw(st.sampled_from(["float32", "int32"]))
    programs, seed = draw(st.integers(1, 3)), draw(st.integers(0, 99))
    return Case(reduce_case_kernel, programs, dtype, consts, seed)


@st.composite
def scan_cases(draw: st.DrawFn) -> Case:
    two_d = draw(st.booleans())
    m = draw(st.sampled_from(SIZES)) if two_d else 1
    consts = {
        "M": m,
        "N": draw(st.sampled_from(SIZES)),
        "TWO_D": two_d,
        "AXIS": draw(st.sampled_from([0, 1] if two_d else [0])),
        "REVERSE": draw(st.booleans()),
        "OP": draw(st.sampled_from(SCAN_OPS)),
    }
    dtype = draw(st.sampled_from(["float32", "int32"]))
    programs, seed = draw(st.integers(1, 3)), draw(st.integers(0, 99))
    return Case(scan_case_kernel, programs, dtype, consts, seed)


# ---------------------------------------------------------------- NumPy references


def _reduce_block(x: np.ndarray, op: str, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``(r, r2)`` of one program's block, with the reduced axis kept (size 1)."""
    keep = {"axis": axis, "keepdims": True}
    r2 = x
    if op == "sum":
        r = x.sum(**keep, dtype=x.dtype)
    elif op in ("max", "max2", "max2_strict"):
        r = x.max(**keep)
    elif op == "min2":
        r = x.min(**keep)
    elif op == "prod":
        r = x.prod(**keep, dtype=x.dtype)
    elif op == "any":
        r = (x > 0).any(**keep).astype(x.dtype)
    elif op in ("argmax", "max_with_index"):
        r = _first_argmax(x, axis).astype(x.dtype)
        r2 = x.max(**keep)
    elif op == "welford":
        r = x.mean(**keep)
        r2 = x.var(**keep)
    else:  # softmax: max and the sum of exp(x - max)
        r = x.max(**keep)
        r2 = np.exp(x.astype(np.float64) - r).sum(**keep).astype(x.dtype)
    return r, r2


def _first_argmax(x: np.ndarray, axis: int | None) -> np.ndarray:
    if axis is None:
        return np.array(np.argmax(x)).reshape((1,) * x.ndim)
    return np.expand_dims(np.argmax(x, axis=axis), axis)


def reduce_reference(case: Case, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """What ``out`` and ``out2`` hold after ``reduce_case_kernel``."""
    c = case.consts
    outs, outs2 = [], []
    for block in x:
        r, r2 = _reduce_block(block, c["OP"], c["AXIS"])
        full = np.broadcast_to(r, block.shape)
        if c["POST"] == "where":
            full = np.where(block > full, block, full)
        outs.append(full)
        outs2.append(np.broadcast_to(r2, block.shape))
    two = c["OP"] in ("max_with_index", "welford", "softmax")
    return np.stack(outs), (np.stack(outs2) if two else None)


def scan_reference(case: Case, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What ``out`` and ``out2`` hold after ``scan_case_kernel``."""
    c = case.consts
    axis = c["AXIS"] + 1  # after the program axis
    if c["REVERSE"]:
        x = np.flip(x, axis)
    n = x.shape[axis]
    positions = np.arange(n).reshape([n if d == axis else 1 for d in range(x.ndim)])
    idx = np.broadcast_to(positions, x.shape)
    if c["REVERSE"]:
        idx = np.flip(idx, axis)  # positions are the block's own, not the flipped ones
    op = c["OP"]
    if op in ("cumsum", "scan_add"):
        out, out2 = np.cumsum(x, axis, dtype=x.dtype), idx
    elif op == "cumprod":
        out, out2 = np.cumprod(x, axis, dtype=x.dtype), idx
    else:
        out, out2 = _cummax(x, idx, axis)
    if c["REVERSE"]:
        out, out2 = np.flip(out, axis), np.flip(out2, axis)
    return out, out2


def _cummax(x: np.ndarray, idx: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Running (max, index of the max), the lower index winning ties."""
    xs, ids = np.moveaxis(x, axis, -1).copy(), np.moveaxis(idx, axis, -1).copy()
    for k in range(1, xs.shape[-1]):
        a, ai, b, bi = xs[..., k - 1], ids[..., k - 1], xs[..., k], ids[..., k]
        take_a = (a > b) | ((a == b) & (ai < bi))
        xs[..., k], ids[..., k] = np.where(take_a, a, b), np.where(take_a, ai, bi)
    return np.moveaxis(xs, -1, axis), np.moveaxis(ids, -1, axis)


# ---------------------------------------------------------------- running a case


def run_case(case: Case, backend: str) -> None:
    """Launch ``case`` on ``backend`` and compare with NumPy."""
    x = case.inputs()
    out = np.full_like(x, 7)
    out2 = np.full(x.shape, 7, dtype=np.int32 if case.kernel is scan_case_kernel else x.dtype)
    case.kernel[(case.programs,)](x, out, out2, **case.consts, backend=backend)
    if case.kernel is scan_case_kernel:
        want, want2 = scan_reference(case, x)
    else:
        want, want2 = reduce_reference(case, x)
    _close(out, want, case)
    if want2 is not None:
        _close(out2, want2, case)


def _close(got: np.ndarray, want: np.ndarray, case: Case) -> None:
    msg = f"{case.kernel.__name__} {case.dtype} x{case.programs} {case.consts}"
    if got.dtype.kind == "f" and case.consts["OP"] in ("prod", "cumprod", "welford", "softmax"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=msg)
    else:  # sums of multiples of 1/8 are exact in any order
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=msg)


def compile_case(case: Case, arch: str, tmp_path: Path) -> None:
    """Compile ``case`` to PTX for ``arch`` and assemble it (when ptxas is there)."""
    x = case.inputs()
    fn = case.kernel
    specs = fn.specialize(fn.bind((x, x, x), case.consts))
    options = CompileOptions(arch=arch.rstrip("a"))
    ptx = compile_kernel(fn.source, specs, options, stop_after="ptx").asm["ptx"]
    if PTXAS is None:
        return
    source = tmp_path / "case.ptx"
    source.write_text(ptx)
    proc = subprocess.run(
        [PTXAS, f"-arch={arch}", str(source), "-o", str(tmp_path / "case.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"{case.consts}\n{proc.stderr}"


# ---------------------------------------------------------------- the properties

cases = st.one_of(reduce_cases(), scan_cases())


@SETTINGS
@given(case=cases)
def test_reductions_and_scans_match_numpy_on_the_emulator(case: Case) -> None:
    run_case(case, "emulator")


@SETTINGS
@given(case=cases, arch=st.sampled_from(["sm_90a", "sm_80"]))
def test_reductions_and_scans_compile_and_assemble(case: Case, arch: str, tmp_path_factory) -> None:
    compile_case(case, arch, tmp_path_factory.mktemp("ptx"))


@pytest.mark.gpu
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases)
def test_reductions_and_scans_match_numpy_on_the_gpu(case: Case) -> None:
    run_case(case, "gpu")
