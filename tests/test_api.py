"""The Triton-compatible API: @jit launches, specialization, caching, autotune, backends.

Launcher logic is tested with a fake compiler and a fake launch (``fake``
fixture) so that each test sees exactly what the launcher hands on; the
end-to-end tests run real kernels on the emulator against NumPy.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend.passes.gpu_pipeline import GPU_PIPELINE
from minitriton.compiler import CompiledKernel, CompileOptions
from minitriton.frontend.source import ArgSpec
from minitriton.ir import types as t
from minitriton.passes import DEFAULT_PIPELINE

# ``minitriton.jit`` and ``minitriton.autotune`` are the decorators; these are the modules.
jit_module = importlib.import_module("minitriton.jit")
autotune_module = importlib.import_module("minitriton.autotune")

# ---------------------------------------------------------------------------
# Kernels (module level: @jit reads their source from this file)
# ---------------------------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@triton.jit(debug=True, do_not_specialize=["n"])
def scale_kernel(x_ptr, n, alpha=2.0, ACT: tl.constexpr = None, BLOCK: tl.constexpr = 64):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(x_ptr + offsets, x * alpha, mask=mask)


# ---------------------------------------------------------------------------
# A fake compiler and launcher
# ---------------------------------------------------------------------------


@dataclass
class Fake:
    """Records what the launcher compiles and launches."""

    compiles: list[tuple[list[ArgSpec], CompileOptions]] = field(default_factory=list)
    launches: list[dict[str, Any]] = field(default_factory=list)

    def compile_kernel(self, src, specs, options, stop_after="ir-opt"):  # noqa: ANN001, ANN201
        self.compiles.append((list(specs), options))
        args = [SimpleNamespace(name_hint=s.name) for s in specs if s.kind != "constexpr"]
        module = SimpleNamespace(kernel=SimpleNamespace(body=SimpleNamespace(args=args)))
        return CompiledKernel(src.name, module, list(specs), {"stop_after": stop_after}, options)

    def launch(self, compiled, grid, args, backend, stream=None):  # noqa: ANN001, ANN201
        self.launches.append(
            {"grid": grid, "args": [v for _, v in args], "backend": backend, "compiled": compiled}
        )


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Fake:
    recorder = Fake()
    monkeypatch.setattr(jit_module, "compile_kernel", recorder.compile_kernel)
    monkeypatch.setattr(jit_module, "launch", recorder.launch)
    monkeypatch.setattr(jit_module, "_selected_backend", None)
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    return recorder


@pytest.fixture(autouse=True)
def default_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts from the default backend choice, without a GPU."""
    monkeypatch.setattr(jit_module, "_selected_backend", None)
    monkeypatch.delenv("MINITRITON_BACKEND", raising=False)
    monkeypatch.delenv("MINITRITON_DUMP_DIR", raising=False)
    monkeypatch.delenv("MINITRITON_PRINT_AFTER", raising=False)
    for kernel in (add_kernel, scale_kernel):  # no compiled kernel leaks between tests
        kernel.cache.clear()
        kernel.compile_count = 0


def _arrays(n: int = 100) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32), np.zeros(n, np.float32)


# ---------------------------------------------------------------------------
# The public surface
# ---------------------------------------------------------------------------


def test_public_names():
    for name in ("jit", "autotune", "Config", "heuristics", "cdiv", "next_power_of_2"):
        assert callable(getattr(triton, name))
    assert triton.language is tl
    assert triton.__version__ == "0.1.0"
    assert issubclass(triton.CompileError, Exception)


def test_cdiv_and_next_power_of_2():
    assert triton.cdiv(98432, 1024) == 97
    assert triton.cdiv(1024, 1024) == 1
    assert [triton.next_power_of_2(n) for n in (0, 1, 2, 3, 1000, 1024)] == [0, 1, 2, 4, 1024, 1024]


def test_jit_keeps_the_function_identity():
    assert add_kernel.__name__ == "add_kernel"
    assert add_kernel.arg_names == ["x_ptr", "y_ptr", "output_ptr", "n_elements", "BLOCK_SIZE"]
    first_line = Path(__file__).read_text().splitlines()[add_kernel.source.first_line - 1]
    assert first_line == "@triton.jit"
    assert "tl.program_id" in add_kernel.src


def test_calling_a_kernel_directly_is_an_error():
    with pytest.raises(RuntimeError, match=r"launch it with add_kernel\[grid\]"):
        add_kernel(1, 2, 3, 4, 5)


# ---------------------------------------------------------------------------
# Grids, arguments and options
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grid", "expected"),
    [((4,), (4, 1, 1)), ([2, 3], (2, 3, 1)), ((2, 3, 4), (2, 3, 4)), (5, (5, 1, 1))],
)
def test_grid_tuples(fake: Fake, grid: Any, expected: tuple[int, int, int]):
    x, y, out = _arrays()
    add_kernel[grid](x, y, out, 100, BLOCK_SIZE=64)
    assert fake.launches[-1]["grid"] == expected


def test_grid_callable_sees_every_argument_by_name(fake: Fake):
    seen: list[dict[str, Any]] = []

    def grid(meta: dict[str, Any]) -> tuple[int]:
        seen.append(meta)
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    x = np.zeros(1000, np.float32)
    scale_kernel[grid](x, 1000, BLOCK=tl.constexpr(128))
    assert fake.launches[-1]["grid"] == (8, 1, 1)
    assert seen[0]["x_ptr"] is x
    assert {k: v for k, v in seen[0].items() if k != "x_ptr"} == {
        "n": 1000,
        "alpha": 2.0,
        "ACT": None,
        "BLOCK": 128,
    }


@pytest.mark.parametrize("grid", [(), (1, 2, 3, 4), (1.5,), (-1,)])
def test_bad_grids(fake: Fake, grid: tuple):
    x, y, out = _arrays()
    with pytest.raises(ValueError, match="grid"):
        add_kernel[grid](x, y, out, 100, BLOCK_SIZE=64)


def test_launch_options_are_not_kernel_arguments(fake: Fake):
    x, y, out = _arrays()
    add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=64, num_warps=8, num_stages=2, num_ctas=1,
                     maxnreg=128, stream=None)  # fmt: skip
    specs, options = fake.compiles[-1]
    assert [s.name for s in specs] == add_kernel.arg_names
    assert (options.num_warps, options.num_stages, options.maxnreg) == (8, 2, 128)
    assert fake.launches[-1]["args"] == [x, y, out, 100]


def test_a_parameter_may_share_a_launch_options_name(fake: Fake):
    @triton.jit
    def kernel(x_ptr, BLOCK: tl.constexpr, num_stages: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    kernel[(1,)](np.zeros(16, np.float32), BLOCK=16, num_stages=2)  # as in the softmax tutorial
    specs, options = fake.compiles[-1]
    assert specs[-1] == ArgSpec("num_stages", "constexpr", value=2)
    assert options.num_stages == 2


def test_argument_errors(fake: Fake):
    x, y, out = _arrays()
    with pytest.raises(TypeError, match="missing argument.*BLOCK_SIZE"):
        add_kernel[(1,)](x, y, out, 100)
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOCK'"):
        add_kernel[(1,)](x, y, out, 100, BLOCK=64)
    with pytest.raises(TypeError, match="multiple values for argument 'n_elements'"):
        add_kernel[(1,)](x, y, out, 100, n_elements=3, BLOCK_SIZE=64)


def test_specs_follow_triton_rules(fake: Fake):
    x = np.zeros(64, np.float16)
    scale_kernel[(1,)](x, 32, np.float64(0.5), ACT="relu")
    specs, options = fake.compiles[-1]
    assert specs == [
        ArgSpec("x_ptr", "pointer", t.PointerType(t.F16), divisible_by_16=True),
        ArgSpec("n", "scalar", t.I32),  # do_not_specialize: no divisible_by_16
        ArgSpec("alpha", "scalar", t.F64),
        ArgSpec("ACT", "constexpr", value="relu"),
        ArgSpec("BLOCK", "constexpr", value=64),
    ]
    assert options.debug  # from @jit(debug=True)
    assert fake.launches[-1]["args"] == [x, 32, np.float64(0.5)]


def test_one_compile_per_specialization(fake: Fake):
    x, y, out = _arrays(256)
    for n in (256, 512, 48):  # all i32 and divisible by 16: one specialization
        add_kernel[(1,)](x, y, out, n, BLOCK_SIZE=64)
    assert len(fake.compiles) == 1
    add_kernel[(1,)](x, y, out, 1, BLOCK_SIZE=64)  # equal_to_1
    add_kernel[(1,)](x, y, out, 17, BLOCK_SIZE=64)  # neither
    add_kernel[(1,)](x, y, out, 19, BLOCK_SIZE=64)  # same as 17
    add_kernel[(1,)](x[1:], y, out, 256, BLOCK_SIZE=64)  # misaligned pointer
    add_kernel[(1,)](x, y, out, 256, BLOCK_SIZE=128)  # another constexpr
    add_kernel[(1,)](x, y, out, 2**40, BLOCK_SIZE=128)  # i64
    add_kernel[(1,)](x, y, out, 256, BLOCK_SIZE=64, num_warps=8)  # another option
    assert len(fake.compiles) == 7
    assert len(fake.launches) == 10


def test_warmup_compiles_without_launching(fake: Fake):
    x, y, out = _arrays()
    compiled = add_kernel.warmup(x, y, out, 100, BLOCK_SIZE=64, grid=(1,))
    assert isinstance(compiled, CompiledKernel)
    assert fake.launches == []
    assert len(fake.compiles) == 1


def test_empty_grid_launches_nothing():
    calls: list[Any] = []
    compiled = SimpleNamespace(binary=SimpleNamespace(launch=lambda *a: calls.append(a)))
    jit_module.launch(compiled, (0, 1, 1), [], "gpu")  # type: ignore[arg-type]
    assert calls == []


# ---------------------------------------------------------------------------
# Backend selection
# ---------------------------------------------------------------------------


def test_default_backend_depends_on_the_gpu(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(jit_module, "gpu_available", lambda: False)
    assert triton.get_backend() == "emulator"
    monkeypatch.setattr(jit_module, "gpu_available", lambda: True)
    assert triton.get_backend() == "gpu"


def test_backend_env_var_and_set_backend(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(jit_module, "gpu_available", lambda: True)
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    assert triton.get_backend() == "emulator"
    triton.set_backend("gpu")
    assert triton.get_backend() == "gpu"  # set_backend wins over the environment
    triton.set_backend(None)
    assert triton.get_backend() == "emulator"
    monkeypatch.setenv("MINITRITON_BACKEND", "cuda")
    with pytest.raises(ValueError, match="MINITRITON_BACKEND: unknown backend 'cuda'"):
        triton.get_backend()
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        triton.set_backend("tpu")


def pretend_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the launcher believe an sm_90 GPU is present."""
    monkeypatch.setattr(jit_module, "gpu_available", lambda: True)
    monkeypatch.setattr(jit_module, "_device_arch", lambda: "sm_90")


def test_per_launch_backend_override(fake: Fake, monkeypatch: pytest.MonkeyPatch):
    pretend_gpu(monkeypatch)
    x, y, out = _arrays()
    add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=64)
    add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=64, backend="gpu")
    assert [launch["backend"] for launch in fake.launches] == ["emulator", "gpu"]
    assert [c.asm["stop_after"] for c in (la["compiled"] for la in fake.launches)] == [
        "ir-opt",
        "gpu",
    ]


def test_gpu_backend_without_a_gpu_is_a_clear_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(jit_module, "gpu_available", lambda: False)
    x, y, out = _arrays()
    with pytest.raises(RuntimeError, match="no GPU is available"):
        add_kernel[(1,)](x, y, out, 100, BLOCK_SIZE=64, backend="gpu")


# ---------------------------------------------------------------------------
# Autotune and heuristics
# ---------------------------------------------------------------------------


def _tuned(fn: Any) -> Any:
    configs = [
        triton.Config({"BLOCK": 32}, num_warps=2),
        triton.Config({"BLOCK": 128}, num_warps=8),
    ]
    return triton.autotune(configs=configs, key=["n"])(fn)


def test_config_signature_and_text():
    config = triton.Config({"BLOCK": 32}, num_warps=2, num_stages=4, maxnreg=64)
    assert config.all_kwargs() == {
        "BLOCK": 32,
        "num_warps": 2,
        "num_stages": 4,
        "num_ctas": 1,
        "maxnreg": 64,
    }
    assert str(config) == "BLOCK: 32, num_warps: 2, num_ctas: 1, num_stages: 4, maxnreg: 64"


def test_autotune_on_the_emulator_uses_the_first_config_and_says_so_once(
    fake: Fake, capsys: pytest.CaptureFixture[str]
):
    tuned = _tuned(scale_kernel)
    x = np.zeros(100, np.float32)
    for n in (100, 64, 100):
        tuned[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, n)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "autotune of kernel 'scale_kernel' on the emulator: using the first config" in err
    assert {s.value for specs, _ in fake.compiles for s in specs if s.name == "BLOCK"} == {32}
    assert [c[1].num_warps for c in fake.compiles] == [2]  # n is not specialized
    assert len(fake.launches) == 3
    assert fake.launches[0]["grid"] == (4, 1, 1)
    assert tuned.best_config is tuned.configs[0]


def test_autotune_on_the_gpu_times_each_config_once_per_key(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("MINITRITON_BACKEND", "gpu")
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path))  # winners are stored there
    pretend_gpu(monkeypatch)
    monkeypatch.setattr(autotune_module, "_synchronize", lambda: None)
    monkeypatch.setattr(autotune_module, "_device", lambda: ("Fake GPU", "sm_90"))
    timings = {32: 2.0, 128: 1.0}
    benched: list[int] = []

    def do_bench(call: Any, quantiles: Any) -> float:  # Triton calls it with quantiles=
        call()
        block = fake.launches[-1]["compiled"].arg_specs[-1].value  # BLOCK: the last parameter
        benched.append(block)
        return timings[block]

    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128})]
    tuned = triton.autotune(configs=configs, key=["n"], do_bench=do_bench)(scale_kernel)
    x = np.zeros(256, np.float32)
    tuned[(1,)](x, 256)
    tuned[(1,)](x, 256)
    assert benched == [32, 128]  # timed once for this key
    assert tuned.best_config is configs[1]
    assert fake.launches[-1]["compiled"].arg_specs[-1].value == 128
    tuned[(1,)](x, 512)
    assert benched == [32, 128, 32, 128]


def test_autotune_rejects_redefined_tuned_symbols(fake: Fake):
    x = np.zeros(100, np.float32)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        _tuned(scale_kernel)[(1,)](x, 100, BLOCK=16)


def test_autotune_rejects_launch_options_its_configs_set(fake: Fake):
    # Every Config sets num_warps (4 unless it says otherwise): a launch keyword too would
    # give the launch two values (Triton's TypeError); this says which and where to put it.
    x = np.zeros(100, np.float32)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: num_warps.*configs"):
        _tuned(scale_kernel)[(1,)](x, 100, num_warps=8)
    assert not fake.launches


def test_heuristics_compute_meta_parameters(fake: Fake):
    @triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    kernel[(1,)](np.zeros(128, np.float32), 100)
    assert fake.compiles[-1][0][-1] == ArgSpec("BLOCK", "constexpr", value=128)


def test_autotune_stacks_on_heuristics(fake: Fake):
    tuned = _tuned(triton.heuristics({"ACT": lambda args: "relu"})(scale_kernel))
    tuned[(1,)](np.zeros(128, np.float32), 100)
    values = {s.name: s.value for s in fake.compiles[-1][0] if s.kind == "constexpr"}
    assert values == {"ACT": "relu", "BLOCK": 32}


# ---------------------------------------------------------------------------
# End to end on the emulator
# ---------------------------------------------------------------------------


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")


def test_vector_add_runs_and_compiles_once(emulator: None):
    @triton.jit
    def local_add(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(output_ptr + offsets, x + y, mask=mask)

    x, y, out = _arrays(1000)
    grid = lambda meta: (triton.cdiv(1000, meta["BLOCK_SIZE"]),)  # noqa: E731
    local_add[grid](x, y, out, 1000, BLOCK_SIZE=256)
    np.testing.assert_array_equal(out, x + y)
    x2, y2, out2 = _arrays(1000)
    local_add[grid](x2 * 2, y2, out2, 968, BLOCK_SIZE=256)  # 968 % 16 == 1000 % 16 == 8
    assert local_add.compile_count == 1
    np.testing.assert_array_equal(out2[:968], (x2 * 2 + y2)[:968])
    assert not out2[968:].any()


def test_strided_views_pass_a_pointer_to_their_first_element(emulator: None):
    x = np.arange(256, dtype=np.float32).reshape(8, 32)
    view = x[1:, ::2]  # not contiguous; like Triton, the kernel gets its first element's address
    with pytest.warns(RuntimeWarning, match="between the elements of the strided view"):
        scale_kernel[(1,)](view, 4, 3.0)
    expected = np.arange(256, dtype=np.float32)
    expected[32:36] *= 3  # flat memory from view[0, 0] on, whatever the view's strides
    np.testing.assert_array_equal(x.reshape(-1), expected)


def test_warmup_asm_holds_each_stage(emulator: None):
    x, y, out = _arrays()
    compiled = add_kernel.warmup(x, y, out, 100, BLOCK_SIZE=64, grid=(2,))
    assert {"ast", "ir", "ir-opt"} <= set(compiled.asm)
    assert compiled.asm["ast"].startswith("FunctionDef name='add_kernel'")
    assert "tt.func @add_kernel(" in compiled.asm["ir"]
    assert "tt.func @add_kernel(" in compiled.asm["ir-opt"]
    assert "ttir" in compiled.asm  # Triton's name for the same text
    assert compiled.asm["ttir"] == compiled.asm["ir-opt"]
    assert "ttgir" not in compiled.asm  # an emulator compile stops before the GPU stages
    assert not out.any()  # warmup does not run the kernel


def test_compile_errors_are_diagnostics(emulator: None, tmp_path: Path):
    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)  # noqa: F821

    with pytest.raises(triton.CompileError) as info:
        broken[(1,)](np.zeros(16, np.float32), BLOCK=16)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"{__file__}:")
    assert ": error: " in first and "undefined_name" in first


def test_dump_dir_writes_every_stage(emulator: None, monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.setenv("MINITRITON_DUMP_DIR", str(tmp_path))

    @triton.jit
    def dumped(x_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1.0)

    x = np.zeros(16, np.float32)
    dumped[(1,)](x, BLOCK=16)
    np.testing.assert_array_equal(x, np.ones(16, np.float32))
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith("dumped-")
    names = sorted(p.name for p in folder.iterdir())
    expected = ["00-ast.txt", "01-ir.txt"]
    expected += [f"{i + 2:02d}-after-{n}.txt" for i, n in enumerate(DEFAULT_PIPELINE)]
    expected.append(f"{len(expected):02d}-ir-opt.txt")
    # One file after each GPU pass, then the code generator's stages.
    ran = [n for n in GPU_PIPELINE if n != "tma-stores"]  # that one needs MINITRITON_TMA_STORES=1
    expected += [f"{len(expected) + i:02d}-after-{n}.txt" for i, n in enumerate(ran)]
    k = len(expected)
    expected += [f"{k + i:02d}-{stage}.txt" for i, stage in enumerate(["ttgir", "llir", "ptx"])]
    assert names == expected
    assert ".entry dumped" in (folder / expected[-1]).read_text()
    assert "tt.func @dumped(" in (folder / "01-ir.txt").read_text()


def test_autotuned_kernel_runs_on_the_emulator(emulator: None, capsys: pytest.CaptureFixture):
    x = np.arange(100, dtype=np.float32)
    tuned = _tuned(scale_kernel)
    tuned[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, 100, 0.5)
    np.testing.assert_array_equal(x, np.arange(100, dtype=np.float32) * 0.5)
    assert "using the first config" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.skipif(not jit_module.gpu_available(), reason="needs a GPU and cuda-python")
def test_vector_add_on_the_gpu():
    x, y, out = _arrays(98432)
    add_kernel[lambda meta: (triton.cdiv(98432, meta["BLOCK_SIZE"]),)](
        x, y, out, 98432, BLOCK_SIZE=1024, backend="gpu"
    )
    np.testing.assert_array_equal(out, x + y)
    compiled = add_kernel.warmup(x, y, out, 98432, BLOCK_SIZE=1024, backend="gpu")
    assert {"llir", "ptx"} <= set(compiled.asm)


def test_module_is_importable_as_triton():
    assert sys.modules["minitriton.language"] is tl


def test_clearing_device_caches_compiles_again(emulator: None):
    # Triton's tests clear ``kernel.device_caches[device][0]`` to force a recompile.
    x, y, out = _arrays()
    add_kernel[(2,)](x, y, out, 100, BLOCK_SIZE=64)
    add_kernel[(2,)](x, y, out, 100, BLOCK_SIZE=64)
    assert add_kernel.compile_count == 1
    kernels = add_kernel.device_caches["cpu"][0]
    assert len(kernels) == 1 and list(add_kernel.device_caches) == [0]
    assert all(k.name == "add_kernel" for k in kernels.values())
    kernels.clear()
    assert len(kernels) == 0 and len(add_kernel.device_caches) == 0
    add_kernel[(2,)](x, y, out, 100, BLOCK_SIZE=64)
    assert add_kernel.compile_count == 2
    add_kernel.device_caches.clear()
    add_kernel[(2,)](x, y, out, 100, BLOCK_SIZE=64)
    assert add_kernel.compile_count == 3
    np.testing.assert_array_equal(out, x + y)


def test_repr_names_each_compiled_kernel(emulator: None):
    # Triton's @jit(repr=fn): fn gets the specialization's signature and constants by name.
    def name(spec: Any) -> str:
        ones = "_".join(k for k, v in spec.constants.items() if v == 1)
        return f"scaled_{spec.signature['n']}_{ones}_{spec.constants['BLOCK']}"

    @triton.jit(repr=name)
    def scaled(x_ptr, n, one, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * one, mask=offs < n)

    x = np.ones(16, np.float32)
    seen: list[str] = []
    with triton.knobs.runtime.scope():
        triton.knobs.runtime.launch_enter_hook.add(lambda meta: seen.append(meta.get()["name"]))
        scaled[(1,)](x, 3, 1, BLOCK=16)
    assert seen == ["scaled_i32_one_16"]  # launch hooks see the kernel's name
    assert scaled.warmup(x, 3, 1, BLOCK=16, grid=(1,)).name == "scaled_i32_one_16"
    assert scaled.warmup(x, 2**40, 1, BLOCK=8, grid=(1,)).name == "scaled_i64_one_8"
    assert add_kernel.warmup(x, x, x, 16, BLOCK_SIZE=16, grid=(1,)).name == "add_kernel"
    assert add_kernel.repr(add_kernel) == "add_kernel"  # what Inductor reads
