"""``minitriton.knobs``: Triton's knobs, read, assigned, reset and scoped; the ones MiniTriton
honours change what it does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import knobs
from minitriton._internal_testing import _fresh_knobs_impl
from minitriton.diagnostics import full_traceback
from minitriton.emulator import EmulatorError
from minitriton.jit import get_backend
from tests.kernels import debug_mode as debug_kernels
from tests.kernels.debug_mode import check_positive

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------
# Kernels (module level: @jit reads their source from this file)
# ---------------------------------------------------------------------------


@triton.jit
def load_past_end(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


def _grid_and_n(grid, metadata, args):  # noqa: ANN001, ANN202 - Triton's signature
    return {"grid": grid, "n": args["n"]}


@triton.jit(launch_metadata=_grid_and_n)
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def load_probe(x_ptr, n, BLOCK: tl.constexpr):  # launched by one test only: loaded there
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def dot16(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b))


@triton.jit
def copy_for_cache(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def gpu() -> bool:
    from minitriton.jit import gpu_available

    return gpu_available()


@pytest.fixture
def fresh() -> Iterator[ModuleType]:
    """Triton's ``fresh_knobs``: every group new, none of their variables set."""
    make, reset = _fresh_knobs_impl()
    try:
        yield make()
    finally:
        reset()


# ---------------------------------------------------------------------------
# Importing
# ---------------------------------------------------------------------------


def test_knobs_is_imported_on_first_use_only() -> None:
    child = (
        "import json, sys, minitriton as triton\n"
        "before = 'minitriton.knobs' in sys.modules\n"
        "from minitriton import knobs\n"
        "print(json.dumps([before, triton.knobs is knobs, knobs.__name__]))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [False, True, "minitriton.knobs"]
    assert triton.knobs is knobs


# ---------------------------------------------------------------------------
# Override, environment, default
# ---------------------------------------------------------------------------


def test_override_wins_over_the_environment_which_wins_over_the_default(
    fresh: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    proton = fresh.proton
    assert proton.profile_buffer_size == 64 * 1024 * 1024
    monkeypatch.setenv("TRITON_PROFILE_BUFFER_SIZE", "1024")
    assert proton.profile_buffer_size == 1024
    proton.profile_buffer_size = 2048
    assert os.environ["TRITON_PROFILE_BUFFER_SIZE"] == "2048"  # written, as in Triton
    monkeypatch.setenv("TRITON_PROFILE_BUFFER_SIZE", "4096")  # the environment changes after
    assert proton.profile_buffer_size == 2048
    proton.profile_buffer_size = fresh.env
    assert proton.profile_buffer_size == 4096
    proton.profile_buffer_size = 8
    del proton.profile_buffer_size
    assert proton.profile_buffer_size == 8  # the variable keeps what was written

    assert fresh.amd.use_buffer_ops and fresh.amd.use_block_pingpong is None
    assert fresh.compilation.use_ir_loc is None and fresh.cache.manager_class is None
    assert fresh.cache.dump_dir == os.path.join(os.path.expanduser("~/"), ".triton", "dump")
    monkeypatch.setenv("TRITON_HOME", "/opt/triton-home")
    assert fresh.cache.dump_dir == "/opt/triton-home/.triton/dump"
    monkeypatch.setenv("TRITON_CUDART_PATH", "/opt/cudart")
    assert fresh.build.backend_dirs == {"/opt/cudart"}


@pytest.mark.parametrize(
    "truthy, falsey",
    [("1", "0"), ("true", "false"), ("True", "False"), ("y", "n"), ("YES", "NO"), ("ON", "OFF")],
)
def test_booleans_read_as_triton_reads_them(
    truthy: str, falsey: str, fresh: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AMDGCN_USE_BUFFER_OPS", falsey)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", truthy)
    monkeypatch.setenv("TRITON_HIP_USE_BLOCK_PINGPONG", truthy)
    assert not fresh.amd.use_buffer_ops
    assert fresh.compilation.always_compile
    assert fresh.amd.use_block_pingpong is True


def test_wrong_values_in_the_environment_are_rejected(
    fresh: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRITON_PROFILE_BUFFER_SIZE", "abc")
    with pytest.raises(RuntimeError, match="TRITON_PROFILE_BUFFER_SIZE=abc: expected int"):
        _ = fresh.proton.profile_buffer_size
    monkeypatch.setenv("TRITON_CACHE_MANAGER", "no_colon")
    with pytest.raises(RuntimeError, match="isn't of the form MODULE:CLASS"):
        _ = fresh.cache.manager_class
    monkeypatch.setenv("TRITON_CACHE_MANAGER", "pathlib:Path")
    with pytest.raises(RuntimeError, match="not of type 'CacheManager'"):
        _ = fresh.cache.manager_class

    class CacheManager:
        pass

    class Mine(CacheManager):
        pass

    fresh.cache.manager_class = Mine  # a class is only stored, never written to the environment
    assert fresh.cache.manager_class is Mine
    assert os.environ["TRITON_CACHE_MANAGER"] == "pathlib:Path"


def test_a_group_of_ones_own_copy_and_reset(fresh: ModuleType) -> None:
    fresh.propagate_env = False

    class mine(fresh.base_knobs):  # type: ignore[name-defined,misc]
        foo = fresh.env_str("MT_KNOB_FOO", "triton")
        bar = fresh.env_bool("MT_KNOB_BAR", True)
        baz = fresh.env_opt_str("MT_KNOB_BAZ")

    group = mine()
    assert group.knobs == {"foo": "triton", "bar": True, "baz": None}
    group.bar = False
    second = group.copy()
    second.foo = "tritium"
    assert second.knobs == {"foo": "tritium", "bar": False, "baz": None}
    assert group.knobs == {"foo": "triton", "bar": False, "baz": None}
    assert second.reset().knobs == {"foo": "triton", "bar": True, "baz": None}
    assert "MT_KNOB_FOO" not in os.environ and "MT_KNOB_BAR" not in os.environ


# ---------------------------------------------------------------------------
# scope() and reset() restore the values and the variables
# ---------------------------------------------------------------------------


def test_scope_restores_values_and_the_variables_minitriton_reads(
    fresh: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path / "before"))
    with fresh.cache.scope(), fresh.runtime.scope():
        fresh.cache.dir = str(tmp_path / "inside")
        fresh.runtime.debug = True
        assert fresh.cache.dir == str(tmp_path / "inside")
        assert os.environ["MINITRITON_CACHE_DIR"] == str(tmp_path / "inside")
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "inside")
        assert os.environ["MINITRITON_DEBUG"] == "1" and os.environ["TRITON_DEBUG"] == "1"
    assert fresh.cache.dir == str(tmp_path / "before")
    assert os.environ["MINITRITON_CACHE_DIR"] == str(tmp_path / "before")
    assert "TRITON_CACHE_DIR" not in os.environ
    assert not fresh.runtime.debug
    assert "MINITRITON_DEBUG" not in os.environ and "TRITON_DEBUG" not in os.environ


def test_scope_restores_a_variable_changed_inside_and_the_hook_chains(fresh: ModuleType) -> None:
    def hook(*args: object) -> None:
        pass

    with fresh.amd.scope(), fresh.runtime.scope():
        os.environ["AMDGCN_USE_BUFFER_OPS"] = "0"
        assert not fresh.amd.use_buffer_ops
        fresh.runtime.launch_enter_hook.add(hook)
        fresh.runtime.jit_post_compile_hook = hook
    assert fresh.amd.use_buffer_ops and "AMDGCN_USE_BUFFER_OPS" not in os.environ
    assert fresh.runtime.launch_enter_hook.calls == []
    assert fresh.runtime.jit_post_compile_hook is None


def test_reset_drops_the_overrides_and_puts_the_variables_back(
    fresh: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITRITON_DEBUG", "0")
    fresh.runtime.debug = True
    fresh.runtime.debug = False
    fresh.runtime.interpret = True
    assert os.environ["MINITRITON_BACKEND"] == "emulator"
    assert fresh.runtime.reset() is fresh.runtime
    assert os.environ["MINITRITON_DEBUG"] == "0"
    assert "MINITRITON_BACKEND" not in os.environ and "TRITON_INTERPRET" not in os.environ
    assert fresh.runtime.knobs == {"interpret": False, "debug": False, "override_arch": None}


def test_without_propagation_assignments_write_no_variable(fresh: ModuleType) -> None:
    fresh.propagate_env = False
    fresh.runtime.debug = True
    assert fresh.runtime.debug and "MINITRITON_DEBUG" not in os.environ


# ---------------------------------------------------------------------------
# The knobs MiniTriton honours
# ---------------------------------------------------------------------------


def test_runtime_debug_turns_debug_mode_on_for_launches() -> None:
    x = np.array([1.0, 2.0, -3.0, 4.0], np.float32)
    check_positive[(1,)](x, 4, BLOCK=4, backend="emulator")  # debug off: the assert is a no-op
    with knobs.runtime.scope():
        knobs.runtime.debug = True
        with pytest.raises(EmulatorError) as info:
            check_positive[(1,)](x, 4, BLOCK=4, backend="emulator")
        with pytest.raises(EmulatorError):  # as in Triton, the environment's debug is or-ed in
            check_positive[(1,)](x, 4, BLOCK=4, backend="emulator", debug=False)
    text = str(info.value)
    assert text.startswith(f"{debug_kernels.__file__}:")
    assert "device assertion failed: x must be positive" in text
    assert "false at lanes 2 (1 lane of 4)" in text
    assert not knobs.runtime.debug
    check_positive[(1,)](x, 4, BLOCK=4, backend="emulator")  # off again after the scope


@pytest.mark.gpu
@pytest.mark.skipif(not gpu(), reason="needs an NVIDIA GPU and cuda-python")
def test_runtime_debug_bounds_checks_gpu_loads() -> None:
    from minitriton.emulator.errors import DeviceCheckError

    x, out = np.ones(60, np.float32), np.zeros(64, np.float32)
    with knobs.runtime.scope():
        knobs.runtime.debug = True
        with pytest.raises(DeviceCheckError, match="out-of-bounds tt.load from 'x_ptr'"):
            load_past_end[(1,)](x, out, BLOCK=64, backend="gpu")
    bad = np.array([1.0, -1.0, 1.0, 1.0], np.float32)
    check_positive[(1,)](bad, 4, BLOCK=4, backend="gpu")  # debug off: nothing checked


def test_runtime_interpret_chooses_the_emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINITRITON_BACKEND", raising=False)
    with knobs.runtime.scope():
        knobs.runtime.interpret = True
        assert get_backend() == "emulator" and knobs.runtime.interpret
        assert os.environ["TRITON_INTERPRET"] == "1"
        knobs.runtime.interpret = False
        assert "MINITRITON_BACKEND" not in os.environ  # the default choice
    assert "TRITON_INTERPRET" not in os.environ
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    assert knobs.runtime.interpret  # the knob reads what launches read
    monkeypatch.setenv("MINITRITON_BACKEND", "gpu")
    assert not knobs.runtime.interpret


def test_cache_dir_puts_the_disk_cache_there(tmp_path: Path) -> None:
    before = os.environ["MINITRITON_CACHE_DIR"]  # each test has its own (conftest)
    x = np.arange(8, dtype=np.float32)
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "kernels")
        copy_for_cache[(1,)](x, np.zeros_like(x), BLOCK=8, backend="emulator")
    assert list((tmp_path / "kernels").rglob("*")), "nothing was cached in knobs.cache.dir"
    assert os.environ["MINITRITON_CACHE_DIR"] == before == knobs.cache.dir


def test_cache_dir_defaults_to_minitritons_folder(fresh: ModuleType) -> None:
    assert fresh.cache.dir == str(Path.home() / ".cache" / "minitriton")


def test_language_fp32_default_chooses_the_precision_of_fp32_dots() -> None:
    a = np.full((16, 16), 1 + 2.0**-20, np.float32)  # not a TF32 number: TF32 rounds it to 1
    b = np.eye(16, dtype=np.float32)
    c = np.zeros((16, 16), np.float32)
    with knobs.language.scope():
        knobs.language.fp32_default = "ieee"
        assert os.environ["TRITON_F32_DEFAULT"] == "ieee"
        dot16[(1,)](a, b, c, backend="emulator")
        np.testing.assert_array_equal(c, a)
        knobs.language.fp32_default = "tf64"
        with pytest.raises(ValueError, match="TRITON_F32_DEFAULT must be one of"):
            dot16[(1,)](a, b, c, backend="emulator")
    assert knobs.language.fp32_default is None and "TRITON_F32_DEFAULT" not in os.environ
    dot16[(1,)](a, b, c, backend="emulator")
    np.testing.assert_array_equal(c, np.ones_like(a))


def test_the_other_honoured_knobs_write_what_minitriton_reads(
    fresh: ModuleType, tmp_path: Path
) -> None:
    assert fresh.autotuning.cache  # MiniTriton keeps the winners on disk unless told not to
    fresh.autotuning.cache = False
    assert os.environ["MINITRITON_AUTOTUNE_CACHE"] == "0"
    assert not full_traceback()
    fresh.compilation.front_end_debugging = True
    assert full_traceback()
    fresh.cache.dump_dir = str(tmp_path / "dump")
    fresh.compilation.dump_ir = True
    assert os.environ["MINITRITON_DUMP_DIR"] == str(tmp_path / "dump")
    fresh.compilation.reset()
    assert not fresh.compilation.dump_ir and "MINITRITON_DUMP_DIR" not in os.environ
    assert not full_traceback()
    fresh.nvidia.libdevice_path = "/opt/libdevice.10.bc"
    assert os.environ["MINITRITON_LIBDEVICE"] == "/opt/libdevice.10.bc"
    assert os.environ["TRITON_LIBDEVICE_PATH"] == "/opt/libdevice.10.bc"


# ---------------------------------------------------------------------------
# NVIDIA's tools
# ---------------------------------------------------------------------------


def fake_tool(folder: Path, name: str, release: str) -> Path:
    """A program that prints ``release`` as NVIDIA's tools do and counts its runs."""
    path = folder / name
    runs = folder / f"{name}.runs"
    path.write_text(
        f"#!/bin/sh\necho run >> {runs}\n"
        f"echo 'Cuda compilation tools, release {release}, V{release}.1'\n"
    )
    path.chmod(0o755)
    return path


def test_nvidia_tools_have_a_path_and_a_lazy_version(
    fresh: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert triton.knobs.nvidia.nvdisasm.path == shutil.which("nvdisasm")
    assert fresh.nvidia.ptxas.path == shutil.which("ptxas")
    ptxas = fake_tool(tmp_path, "ptxas", "12.4")
    monkeypatch.setenv("PTXAS", str(ptxas))  # what minitriton.tools.ptxas_check runs
    tool = fresh.nvidia.ptxas
    assert tool.path == str(ptxas)
    assert not (tmp_path / "ptxas.runs").exists()  # nothing ran yet
    assert tool.version == "12.4" and fresh.nvidia.ptxas.version == "12.4"
    assert (tmp_path / "ptxas.runs").read_text() == "run\n"  # once

    nvdisasm = fake_tool(tmp_path, "nvdisasm", "13.0")
    with fresh.nvidia.scope():
        fresh.nvidia.nvdisasm = str(nvdisasm)
        assert os.environ["TRITON_NVDISASM_PATH"] == str(nvdisasm)
        assert fresh.nvidia.nvdisasm.version == "13.0"
    assert "TRITON_NVDISASM_PATH" not in os.environ
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fresh.nvidia.nvdisasm.path == str(nvdisasm)  # found on PATH
    assert fresh.nvidia.cuobjdump.path is None and fresh.nvidia.cuobjdump.version is None


# ---------------------------------------------------------------------------
# _fresh_knobs_impl
# ---------------------------------------------------------------------------


def test_fresh_knobs_impl_gives_new_groups_and_puts_everything_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRITON_PROFILE_BUFFER_SIZE", "5")
    monkeypatch.setenv("AMDGCN_USE_BUFFER_OPS", "0")
    monkeypatch.delenv("MINITRITON_DEBUG", raising=False)
    originals = {name: getattr(knobs, name) for name in ("proton", "runtime", "amd")}
    knobs.propagate_env = False
    try:
        make, reset = _fresh_knobs_impl(skipped_attr={"amd"})
        fresh = make()
        assert fresh is knobs and knobs.propagate_env
        assert knobs.proton is not originals["proton"] and knobs.amd is originals["amd"]
        assert "TRITON_PROFILE_BUFFER_SIZE" not in os.environ
        assert knobs.proton.profile_buffer_size == 64 * 1024 * 1024
        assert os.environ["AMDGCN_USE_BUFFER_OPS"] == "0"  # a skipped group keeps its variables
        assert knobs.runtime.launch_enter_hook is not originals["runtime"].launch_enter_hook
        knobs.runtime.launch_enter_hook.add(print)
        knobs.runtime.debug = True
        assert os.environ["MINITRITON_DEBUG"] == "1"
        reset()
        assert {name: getattr(knobs, name) for name in originals} == originals
        assert os.environ["TRITON_PROFILE_BUFFER_SIZE"] == "5"
        assert "MINITRITON_DEBUG" not in os.environ and "TRITON_DEBUG" not in os.environ
        assert print not in knobs.runtime.launch_enter_hook.calls
        assert not knobs.propagate_env
    finally:
        knobs.propagate_env = True


# ---------------------------------------------------------------------------
# Triton's runtime hooks
# ---------------------------------------------------------------------------


def test_launch_hooks_see_every_launch_and_its_metadata() -> None:
    seen: list[tuple[str, dict]] = []

    def enter(metadata) -> None:  # noqa: ANN001
        seen.append(("enter", dict(metadata.get())))

    def leave(metadata) -> None:  # noqa: ANN001
        seen.append(("exit", dict(metadata.get())))

    x = np.zeros(8, np.float32)
    with knobs.runtime.scope():
        knobs.runtime.launch_enter_hook.add(enter)
        knobs.runtime.launch_exit_hook.add(leave)
        add_one[(1, 3, 2)](x, 5, BLOCK=8)
        add_one[(1,)](x, 5, BLOCK=8)
        knobs.runtime.launch_enter_hook.remove(enter)
        knobs.runtime.launch_exit_hook.remove(leave)
    add_one[(1,)](x, 5, BLOCK=8)  # no hook any more
    assert [kind for kind, _ in seen] == ["enter", "exit", "enter", "exit"]
    assert seen[0][1]["grid"] == (1, 3, 2) and seen[0][1]["n"] == 5
    assert seen[0][1]["name"] == "add_one" and seen[2][1]["grid"] == (1, 1, 1)
    # every launch ran (the six programs of the first all read the same zeros)
    np.testing.assert_array_equal(x, [3, 3, 3, 3, 3, 0, 0, 0])


def test_compile_hooks_see_each_compile_and_may_take_it_over() -> None:
    calls: list[tuple[str, dict]] = []

    def cache_hook(**info) -> bool:  # noqa: ANN003
        calls.append(("cache", info))
        return info["compile"]["num_warps"] == 2  # take over the num_warps=2 compile

    def post_hook(**info) -> None:  # noqa: ANN003
        calls.append(("post", info))

    x = np.zeros(8, np.float32)
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = cache_hook
        knobs.runtime.jit_post_compile_hook = post_hook
        add_one[(1,)](x, 3, BLOCK=8, num_warps=1)  # compiled: both hooks
        add_one[(1,)](x, 3, BLOCK=8, num_warps=1)  # cached: no hook
        assert add_one[(1,)](x, 3, BLOCK=8, num_warps=2) is None  # the hook took it over
    assert [kind for kind, _ in calls] == ["cache", "post", "cache"]
    info = calls[0][1]
    assert info["compile"]["num_warps"] == 1 and info["compile"]["constants"] == {"BLOCK": 8}
    assert info["repr"].startswith("add_one[num_warps=1") and info["fn"].jit_function is add_one
    assert not info["is_manual_warmup"] and info["compile"]["enable_fp_fusion"] is True
    np.testing.assert_array_equal(x, [2, 2, 2, 0, 0, 0, 0, 0])  # the taken-over launch did not run


def test_load_hooks_wrap_loading_a_gpu_kernel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The load itself is replaced (no GPU here): what is tested is when the hooks run.
    from minitriton import backend
    from minitriton.backend.build import PTXModule

    calls: list[tuple] = []
    kernel = backend.GPUKernel.of(PTXModule("k", "", "", ".entry k", 0, 4, "sm_90"))
    loaded = object()
    monkeypatch.setattr(backend.GPUKernel, "_loaded_launcher", lambda self: loaded)
    with knobs.runtime.scope():
        knobs.runtime.kernel_load_start_hook.add(lambda *a: calls.append(("start", *a)))
        knobs.runtime.kernel_load_end_hook.add(lambda *a: calls.append(("end", *a)))
        assert kernel.load() is loaded and kernel.load() is loaded  # loaded once
    assert [c[0] for c in calls] == ["start", "end"]
    assert calls[0][1:4] == (None, None, "k") and calls[0][4] == {}
    assert calls[0][5] == calls[1][5] == kernel.hash and len(kernel.hash) == 64


@pytest.mark.gpu
@pytest.mark.skipif(not gpu(), reason="needs an NVIDIA GPU and cuda-python")
def test_load_hooks_see_the_loaded_function_on_the_gpu() -> None:
    names: list[tuple[str, str, bool]] = []
    x = np.zeros(8, np.float32)
    with knobs.runtime.scope():
        start, end = knobs.runtime.kernel_load_start_hook, knobs.runtime.kernel_load_end_hook
        start.add(lambda m, f, n, g, h: names.append(("s", n, f is None)))
        end.add(lambda m, f, n, g, h: names.append(("e", n, f is None)))
        load_probe[(1,)](x, 4, BLOCK=8, backend="gpu")
        load_probe[(1,)](x, 4, BLOCK=8, backend="gpu")  # loaded already
    assert names == [("s", "load_probe", True), ("e", "load_probe", False)]
    np.testing.assert_array_equal(x, [2, 2, 2, 2, 0, 0, 0, 0])
