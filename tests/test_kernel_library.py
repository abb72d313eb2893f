"""One kernel library (``tests/kernels/``) for the tests and the benchmarks.

Every benchmark takes its kernels from the library
(``benchmarks/kernel_library.py``): the tests here check, file by file, that
the kernels a benchmark runs are the library's, and that no benchmark holds a
kernel of its own. Where a self-contained copy must stay (a gallery script
that runs alone, an exercise's reference solution, a docs page's example),
the copies listed in :data:`COPIES` must stay identical, comments and
docstrings aside. Each check is shown to find a changed copy.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import kernel_library  # noqa: E402 - found through the path set above

#: (kernel name, the files that each hold the very same kernel). A ``.md``
#: file holds it in one of its ```` ```python ```` blocks.
COPIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("add_kernel", ("tests/kernels/vector_add.py", "examples/vector_add.py")),
    (
        "add_kernel",
        (
            "exercises/kernels/02_vector_add/solution.py",
            "docs/getting-started.md",
            "docs/guides/emulator.md",
        ),
    ),
    ("assign_kernel", ("examples/plot_kmeans.py", "exercises/kernels/13_kmeans/solution.py")),
    ("accumulate_kernel", ("examples/plot_kmeans.py", "exercises/kernels/13_kmeans/solution.py")),
    (
        "grad_kernel",
        ("examples/plot_sgd_atomics.py", "exercises/kernels/11_sgd_atomics/solution.py"),
    ),
    (
        "sgd_update_kernel",
        ("examples/plot_sgd_atomics.py", "exercises/kernels/11_sgd_atomics/solution.py"),
    ),
    (
        "prefix_sum_kernel",
        ("examples/plot_moving_average.py", "exercises/kernels/12_moving_average/solution.py"),
    ),
    (
        "moving_average_kernel",
        ("examples/plot_moving_average.py", "exercises/kernels/12_moving_average/solution.py"),
    ),
    ("spmv_csr_kernel", ("examples/plot_spmv_csr.py", "exercises/kernels/17_spmv_csr/solution.py")),
)

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_text(path: str, text: str) -> str:
    """The Python in ``text``: the file itself, or a Markdown file's ```` ```python ```` blocks."""
    if not path.endswith(".md"):
        return text
    return "\n".join(_PYTHON_BLOCK.findall(text))


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
    code = {f: python_text(f, t) for f, t in texts.items()}
    want = function_dump(code[first], name)
    return [f for f in others if function_dump(code[f], name) != want]


def kernels_in(text: str) -> list[str]:
    """The names of the ``@...jit`` functions defined at the top of ``text``."""
    return [
        node.name
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef)
        and any("jit" in ast.unparse(d) for d in node.decorator_list)
    ]


def not_the_librarys(source: str, module: str) -> list[str]:
    """The kernels of ``source`` that are not, to the byte, library ``module``'s."""
    library = kernel_library.library_source(module)
    own = set(kernels_in(library))
    return [
        name
        for name in kernels_in(source)
        if name not in own or kernel_library.kernel_text(module, name) not in source
    ]


def inline_kernels(text: str) -> list[str]:
    """Kernels a benchmark file writes itself: in its code or in a string of source text."""
    tree = ast.parse(text)
    found = kernels_in(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "jit" in node.value:
            try:
                found += kernels_in(node.value)
            except SyntaxError:  # prose, or a fragment that is not a module
                continue
    return found


# ------------------------------------------------------------ self-contained copies


@pytest.mark.parametrize(
    ("name", "files"), COPIES, ids=[f"{n}-{Path(fs[0]).stem}" for n, fs in COPIES]
)
def test_self_contained_copies_are_identical(name: str, files: tuple[str, ...]) -> None:
    texts = {f: (ROOT / f).read_text(encoding="utf-8") for f in files}
    assert differing_copies(name, texts) == []


def test_the_copy_check_finds_a_changed_copy() -> None:
    original = "@jit\ndef k(x):\n    # a comment\n    return x + 1\n"
    texts = {
        "a.py": original,
        "b.py": '@jit\ndef k(x):\n    """Add one."""\n    return x + 1  # moved\n',
        "c.py": original.replace("x + 1", "x + 2"),
    }
    assert differing_copies("k", texts) == ["c.py"]


def test_the_copy_check_reads_the_python_blocks_of_a_docs_page() -> None:
    def page(code: str) -> str:
        return f"# Title\n\nSome `k`:\n\n```python\n{code}```\n\n```text\nk(x) = x + 2\n```\n"

    original = "@jit\ndef k(x):\n    return x + 1\n"
    texts = {
        "k.py": original,
        "same.md": page(original),
        "changed.md": page(original.replace("x + 1", "x + 2")),
    }
    assert differing_copies("k", texts) == ["changed.md"]
    with pytest.raises(KeyError):  # the text block is not read as Python
        function_dump(python_text("none.md", page("x = 1\n")), "k")


# ------------------------------------------------------------ the benchmarks' kernels


def benchmark_files() -> list[Path]:
    """Every Python file under ``benchmarks/`` (the library loader aside)."""
    return sorted(
        p
        for p in BENCHMARKS.rglob("*.py")
        if p.name != "kernel_library.py" and "triton_cpu" not in p.parts
    )


@pytest.mark.parametrize("path", benchmark_files(), ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_no_benchmark_writes_a_kernel_of_its_own(path: Path) -> None:
    assert inline_kernels(path.read_text(encoding="utf-8")) == []


def test_the_inline_kernel_check_finds_a_kernel_in_a_source_string() -> None:
    text = 'X = 1\nSOURCE = """\n@triton.jit\ndef k(x_ptr):\n    pass\n"""\n'
    assert inline_kernels(text) == ["k"]
    assert inline_kernels("@triton.jit\ndef k(x_ptr):\n    pass\n") == ["k"]
    assert inline_kernels('"""A docstring that says @triton.jit."""\n') == []


def test_gpu_bench_runs_the_librarys_kernels() -> None:
    import gpu_bench

    source = gpu_bench.KERNEL_SOURCE
    assert kernels_in(source) == ["add_kernel", "softmax_kernel", "_layer_norm_fwd_fused"]
    assert not_the_librarys(source, "vector_add") == ["softmax_kernel", "_layer_norm_fwd_fused"]
    assert not_the_librarys(source, "fused_softmax") == ["add_kernel", "_layer_norm_fwd_fused"]
    assert not_the_librarys(source, "layer_norm") == ["add_kernel", "softmax_kernel"]


def test_gpu_bench_tc_runs_the_librarys_kernels() -> None:
    import gpu_bench_tc

    assert kernels_in(gpu_bench_tc.TC_SOURCE) == ["matmul_kernel", "_attn_fwd_inner", "_attn_fwd"]
    assert kernels_in(gpu_bench_tc.DESC_SOURCE) == ["matmul_kernel_tma"]
    for source in (gpu_bench_tc.TC_SOURCE, gpu_bench_tc.DESC_SOURCE):
        assert not_the_librarys(source, "tc_kernels") == []


def test_gpu_bench_tma_runs_the_librarys_kernels() -> None:
    import gpu_bench_tma

    assert kernels_in(gpu_bench_tma.BP_SOURCE) == ["bp_matmul_kernel"]
    assert not_the_librarys(gpu_bench_tma.BP_SOURCE, "tma_matmul") == []


def test_gpu_debug_cost_runs_the_gpu_benchmarks_kernels() -> None:
    import gpu_bench
    import gpu_debug_cost

    # It times the kernels gpu_bench and gpu_bench_tc load (checked above).
    assert gpu_debug_cost.gpu_bench is gpu_bench
    text = (BENCHMARKS / "gpu_debug_cost.py").read_text(encoding="utf-8")
    assert "gpu_bench.load_kernels(" in text and "gpu_bench_tc.load(" in text


def test_the_library_check_finds_a_changed_kernel() -> None:
    import gpu_bench_tc

    changed = gpu_bench_tc.TC_SOURCE.replace("tl.math.exp2(qk)", "tl.math.exp2(qk * 1.0)")
    assert not_the_librarys(changed, "tc_kernels") == ["_attn_fwd_inner"]
    # Layout counts too: the benchmark must run the library's text, to the byte.
    relaid = gpu_bench_tc.DESC_SOURCE.replace("M, N, K, BLOCK_SIZE_M", "M, N, K,\n BLOCK_SIZE_M")
    assert not_the_librarys(relaid, "tc_kernels") == ["matmul_kernel_tma"]
    assert not_the_librarys("@triton.jit\ndef unknown(x):\n    pass\n", "tc_kernels") == ["unknown"]


def test_compile_time_compiles_the_librarys_vector_add() -> None:
    import compile_time

    assert compile_time.KERNEL_FILE == kernel_library.LIBRARY / "vector_add.py"


def _library_kernels(module: ModuleType) -> dict[str, Path]:
    """The kernels a ``kernels_src`` module holds -> the file each was defined in."""
    from minitriton.jit import JITFunction

    return {
        name: Path(value.fn.__code__.co_filename)
        for name, value in vars(module).items()
        if isinstance(value, JITFunction)
    }


@pytest.mark.parametrize(
    ("row", "library"),
    [
        ("vector_add", "vector_add"),
        ("softmax", "fused_softmax"),
        ("matmul", "tc_kernels"),
        ("layer_norm", "layer_norm"),
        ("attention", "attention_masked"),
        ("elementwise", "silu_mul"),
    ],
)
def test_the_emulator_benchmark_rows_run_library_kernels(row: str, library: str) -> None:
    import importlib

    from kernels_src import ROWS

    assert row in {r.module for r in ROWS}
    kernels = _library_kernels(importlib.import_module(f"kernels_src.{row}"))
    assert kernels and set(kernels.values()) == {kernel_library.LIBRARY / f"{library}.py"}


def test_the_row_check_finds_a_kernel_defined_elsewhere() -> None:
    import minitriton as triton

    @triton.jit
    def own_kernel(x_ptr):  # noqa: ANN001, ANN202
        pass

    fake = ModuleType("fake_row")
    fake.own_kernel = own_kernel  # type: ignore[attr-defined]
    assert _library_kernels(fake) == {"own_kernel": Path(__file__)}


# ------------------------------------------------------------ the loader


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
