"""Repeated pure builtin calls are lowered once (:mod:`minitriton.frontend.purecalls`).

A chain of ``tl.rand(seed, offs)`` with the same arguments used to build one
Philox network per call (seconds for 400 calls), and a chain of the same
``tl.sum(x, axis=0)`` one reduction per call, all the way to PTX. The tests
count ops, not seconds, and check that merging changes no result.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitriton.compiler import compile_kernel

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, seed, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    BODY
"""


def load(tmp_path: Path, body: str, name: str) -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE.replace("BODY", body.replace("\n", "\n    ")))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kernel


def args(block: int = 16) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(-1.0, 1.0, block, dtype=np.float32)
    return x, np.zeros(block, np.float32)


def lowered_ops(tmp_path: Path, body: str, name: str, stage: str = "ir") -> list[str]:
    """The names of the kernel's ops after ``stage`` (lowering, or the pass pipeline)."""
    fn = load(tmp_path, body, name)
    x, out = args()
    specs = fn.specialize(fn.bind((x, out, 7, 1), {"BLOCK": 16}))
    module = compile_kernel(fn.source, specs, stop_after=stage).module
    return [op.name for op in module.walk()]


def chain(call: str, terms: int) -> str:
    return f"tl.store(out_ptr + offs, ({' + '.join([call] * terms)}).to(tl.float32))"


def test_a_chain_of_the_same_rand_call_builds_one_philox_network(tmp_path: Path) -> None:
    one = len(lowered_ops(tmp_path, chain("tl.rand(seed, offs)", 1), "one"))
    many = len(lowered_ops(tmp_path, chain("tl.rand(seed, offs)", 40), "many"))
    # Each further term adds one add; a Philox network is over a hundred ops.
    assert one > 100, one
    assert many - one < 2 * 40, (one, many)


def test_different_arguments_are_not_merged(tmp_path: Path) -> None:
    one = len(lowered_ops(tmp_path, chain("tl.rand(seed, offs)", 1), "one"))
    two = len(lowered_ops(tmp_path, "tl.store(out_ptr + offs, tl.rand(seed, offs) "
                                    "+ tl.rand(seed + 1, offs))", "two"))  # fmt: skip
    rounds = len(lowered_ops(tmp_path, "tl.store(out_ptr + offs, tl.rand(seed, offs) "
                                       "+ tl.rand(seed, offs, 7))", "rounds"))  # fmt: skip
    assert two > 2 * one - 20, (one, two)
    assert rounds > 1.5 * one, (one, rounds)


def test_a_chain_of_the_same_sum_keeps_one_reduction(tmp_path: Path) -> None:
    ops = lowered_ops(tmp_path, chain("tl.sum(x, axis=0)", 30), "sums", stage="ir-opt")
    assert ops.count("tt.reduce") == 1, ops
    other = lowered_ops(tmp_path, "tl.store(out_ptr + offs, tl.sum(x, axis=0) "
                                  "+ tl.max(x, axis=0) + tl.sum(x * 2, axis=0))", "mixed",
                        stage="ir-opt")  # fmt: skip
    assert other.count("tt.reduce") == 3, other


def test_arguments_built_twice_from_the_same_values_are_merged(tmp_path: Path) -> None:
    """``x * 2`` written in each term is a new IR value each time, of the same value number."""
    ops = lowered_ops(tmp_path, chain("tl.sum(x * 2, axis=0)", 20), "scaled", stage="ir-opt")
    assert ops.count("tt.reduce") == 1, ops
    one = len(lowered_ops(tmp_path, chain("tl.rand(seed, offs + 1)", 1), "shifted1"))
    many = len(lowered_ops(tmp_path, chain("tl.rand(seed, offs + 1)", 30), "shifted30"))
    assert many - one < 4 * 30, (one, many)
    # 0.0 and -0.0 are different constants: x * 0.0 and x * -0.0 differ in sign.
    signs = lowered_ops(tmp_path, "tl.store(out_ptr + offs, tl.sum(x * 0.0, axis=0) "
                                  "+ tl.sum(x * -0.0, axis=0) + tl.sum(x * 3, axis=0))", "signs",
                        stage="ir-opt")  # fmt: skip
    assert signs.count("tt.reduce") == 3, signs


def run(tmp_path: Path, body: str, name: str, flag: int = 1) -> np.ndarray:
    fn = load(tmp_path, body, name)
    x, out = args()
    fn[(1,)](x, out, 7, flag, BLOCK=16)
    return out


def test_merged_calls_give_the_same_numbers(tmp_path: Path) -> None:
    single = run(tmp_path, "tl.store(out_ptr + offs, tl.rand(seed, offs))", "single")
    assert np.all((single >= 0) & (single < 1)) and len(set(single.tolist())) > 1
    merged = run(tmp_path, chain("tl.rand(seed, offs)", 3), "triple")
    np.testing.assert_array_equal(merged, single + single + single)
    sums = run(tmp_path, chain("tl.sum(x, axis=0)", 4), "sums")
    x, _ = args()
    np.testing.assert_allclose(sums, np.full(16, 4 * x.sum(), np.float32), atol=1e-5)


@pytest.mark.parametrize("flag", [0, 1])
def test_a_call_in_a_branch_is_not_reused_outside_it(tmp_path: Path, flag: int) -> None:
    body = (
        "r = tl.zeros((BLOCK,), tl.float32)\n"
        "if flag > 0:\n"
        "    r = tl.rand(seed, offs)\n"
        "tl.store(out_ptr + offs, r + tl.rand(seed, offs) + tl.sum(x, axis=0))"
    )
    out = run(tmp_path, body, f"branch{flag}", flag)
    single = run(tmp_path, "tl.store(out_ptr + offs, tl.rand(seed, offs))", f"single{flag}")
    x, _ = args()
    np.testing.assert_allclose(out, (1 + flag) * single + x.sum(), rtol=1e-6, atol=1e-6)
