"""One kernel library (``tests/kernels/``) for the tests and the benchmarks.

The benchmarks take the kernels the library holds from it
(``benchmarks/kernel_library.py``). Where a self-contained copy must stay
(a gallery script that runs alone, an exercise's reference solution), the
copies listed in :data:`COPIES` must stay identical, comments and
docstrings aside.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import kernel_library  # noqa: E402 - found through the path set above

#: Kernel name -> the files that each hold the very same kernel.
COPIES: dict[str, tuple[str, ...]] = {
    "add_kernel": ("tests/kernels/vector_add.py", "examples/vector_add.py"),
    "assign_kernel": ("examples/plot_kmeans.py", "exercises/kernels/13_kmeans/solution.py"),
    "accumulate_kernel": ("examples/plot_kmeans.py", "exercises/kernels/13_kmeans/solution.py"),
    "grad_kernel": ("examples/plot_sgd_atomics.py", "exercises/kernels/11_sgd_atomics/solution.py"),
    "sgd_update_kernel": (
        "examples/plot_sgd_atomics.py",
        "exercises/kernels/11_sgd_atomics/solution.py",
    ),
    "prefix_sum_kernel": (
        "examples/plot_moving_average.py",
        "exercises/kernels/12_moving_average/solution.py",
    ),
    "moving_average_kernel": (
        "examples/plot_moving_average.py",
        "exercises/kernels/12_moving_average/solution.py",
    ),
    "spmv_csr_kernel": ("examples/plot_spmv_csr.py", "exercises/kernels/17_spmv_csr/solution.py"),
}


def function_dump(text: str, name: str) -> str:
    """The code of top-level function ``name`` in ``text``: comments, layout and docstring aside."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            if ast.get_docstring(node) is not None:
                node.body = node.body[1:]
            return ast.dump(node)
    raise KeyError(name)


def differing_copies(name: str, texts: dict[str, str]) -> list[str]:
    """The files (of ``texts``: file -> source) whose ``name`` differs from the first file's."""
    first, *others = texts
    want = function_dump(texts[first], name)
    return [f for f in others if function_dump(texts[f], name) != want]


@pytest.mark.parametrize("name", sorted(COPIES))
def test_self_contained_copies_are_identical(name: str) -> None:
    texts = {f: (ROOT / f).read_text(encoding="utf-8") for f in COPIES[name]}
    assert differing_copies(name, texts) == []


def test_the_copy_check_finds_a_changed_copy() -> None:
    original = "@jit\ndef k(x):\n    # a comment\n    return x + 1\n"
    texts = {
        "a.py": original,
        "b.py": '@jit\ndef k(x):\n    """Add one."""\n    return x + 1  # moved\n',
        "c.py": original.replace("x + 1", "x + 2"),
    }
    assert differing_copies("k", texts) == ["c.py"]


def test_the_gpu_benchmark_kernels_are_the_librarys() -> None:
    import gpu_bench

    names = {"vector_add": "add_kernel", "fused_softmax": "softmax_kernel"}
    names["layer_norm"] = "_layer_norm_fwd_fused"
    for module, name in names.items():
        library = kernel_library.library_source(module)
        assert function_dump(gpu_bench.KERNEL_SOURCE, name) == function_dump(library, name)
        assert kernel_library.kernel_text(module, name) in gpu_bench.KERNEL_SOURCE


def test_the_emulator_benchmark_kernels_are_the_librarys() -> None:
    from kernels_src import layer_norm, vector_add

    from tests.kernels import layer_norm as library_layer_norm
    from tests.kernels import vector_add as library_vector_add

    assert vector_add.add_kernel.src == library_vector_add.add_kernel.src
    assert layer_norm._layer_norm_fwd_fused.src == library_layer_norm._layer_norm_fwd_fused.src


def test_a_loaded_library_kernel_runs() -> None:
    module = kernel_library.load_library("vector_add", "minitriton")
    x, y = np.arange(300, dtype=np.float32), np.full(300, 0.5, dtype=np.float32)
    out = np.zeros_like(x)
    module.add_kernel[(3,)](x, y, out, 300, BLOCK_SIZE=128, backend="emulator")
    np.testing.assert_array_equal(out, x + y)


def test_kernel_text_names_a_missing_kernel() -> None:
    with pytest.raises(KeyError, match="no function no_such_kernel"):
        kernel_library.kernel_text("vector_add", "add_kernel", "no_such_kernel")


def test_a_module_must_import_minitriton_with_the_two_lines() -> None:
    assert kernel_library.flavored(kernel_library.library_source("vector_add"), "triton")
    with pytest.raises(ValueError, match="exactly these lines"):
        kernel_library.flavored("import minitriton\n", "triton")
