"""Resource limits: the check, its message, where the GPU backend makes it, and the warning
of ``minitriton check``. The driver is a fake here (no GPU); tests/gpu/test_torch_streams.py
launches a real oversized kernel."""

from __future__ import annotations

import pickle
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import resources
from minitriton.backend import driver
from minitriton.cli import main
from minitriton.resources import DeviceLimits, Usage, check_fits, over_limit
from minitriton.runtime.errors import OutOfResources

H200 = DeviceLimits("NVIDIA H200", 232448, 65536, 1024)


# ---------------------------------------------------------------- the check


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (Usage(232448, 1024, 64, 1024), None),  # every resource exactly at its limit
        (Usage(232449, 128), ("shared memory", 232449, 232448)),
        (Usage(0, 2048), ("threads", 2048, 1024)),
        (Usage(0, 1024, 65), ("registers", 65 * 1024, 65536)),
        (Usage(0, 512, 130, 256), ("registers", 130 * 512, 65536)),
        (Usage(0, 512, 96, 256), ("threads", 512, 256)),  # the function's own limit
        (Usage(0, 128, None, None), None),  # registers unknown before loading
    ],
)
def test_over_limit_finds_the_first_resource_over(usage: Usage, expected: Any) -> None:
    assert over_limit(usage, H200) == expected


def test_the_message_names_kernel_config_resource_need_and_limit() -> None:
    with pytest.raises(OutOfResources) as info:
        check_fits("matmul", Usage(270336, 256), H200, "num_warps=8, num_stages=6, BM=256")
    e = info.value
    assert (e.required, e.limit, e.name, e.kernel) == (270336, 232448, "shared memory", "matmul")
    assert str(e) == (
        "kernel 'matmul' (num_warps=8, num_stages=6, BM=256): out of resource: shared memory, "
        "Required: 270336, Hardware limit: 232448. Reducing block sizes or `num_stages` may help."
    )
    assert str(pickle.loads(pickle.dumps(e))) == str(e)


def test_a_kernel_within_the_limits_passes() -> None:
    check_fits("small", Usage(49152, 128, 40, 1024), H200)


def test_out_of_resources_has_tritons_import_paths() -> None:
    from minitriton.compat import alias_triton

    saved = {n: m for n, m in sys.modules.items() if n == "triton" or n.startswith("triton.")}
    try:
        alias_triton()
        import triton.runtime
        import triton.runtime.autotuner
        import triton.runtime.errors

        assert triton.runtime.errors.OutOfResources is OutOfResources
        assert triton.runtime.OutOfResources is OutOfResources
        assert triton.runtime.autotuner.OutOfResources is OutOfResources
        assert triton.runtime.autotuner.Config is triton.Config
    finally:
        for name in [n for n in sys.modules if n == "triton" or n.startswith("triton.")]:
            del sys.modules[name]
        sys.modules.update(saved)


# ---------------------------------------------------------------- the GPU backend's loader


class FakeDriver:
    """cuda-bindings' calls that ``load_kernel`` makes, recorded; the function uses ``regs``."""

    class CUfunction_attribute:  # noqa: N801  (cuda-bindings' name)
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = "static shared"
        CU_FUNC_ATTRIBUTE_NUM_REGS = "registers"
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = "max threads"
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = "max dynamic shared"

    class CUfunc_cache:  # noqa: N801  (cuda-bindings' name)
        CU_FUNC_CACHE_PREFER_SHARED = "prefer shared"

    def __init__(self, regs: int) -> None:
        self.calls: list[str] = []
        self.attributes = {"static shared": 0, "registers": regs, "max threads": 1024}

    def cuModuleLoadData(self, image: bytes) -> tuple[int, str]:  # noqa: N802
        self.calls.append("cuModuleLoadData")
        return 0, "module"

    def cuModuleGetFunction(self, module: str, name: bytes) -> tuple[int, str]:  # noqa: N802
        self.calls.append("cuModuleGetFunction")
        return 0, "function"

    def cuFuncGetAttribute(self, attr: str, func: str) -> tuple[int, int]:  # noqa: N802
        return 0, self.attributes[attr]

    def cuFuncSetAttribute(self, func: str, attr: str, value: int) -> tuple[int]:  # noqa: N802
        self.calls.append("cuFuncSetAttribute")
        return (0,)

    def cuFuncSetCacheConfig(self, func: str, config: str) -> tuple[int]:  # noqa: N802
        self.calls.append(f"cuFuncSetCacheConfig({config})")
        return (0,)

    def cuModuleUnload(self, module: str) -> tuple[int]:  # noqa: N802
        self.calls.append("cuModuleUnload")
        return (0,)


@pytest.fixture
def fake_driver(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    fake = FakeDriver(regs=32)
    monkeypatch.setattr(driver, "_cu", lambda: fake)
    monkeypatch.setattr(driver, "ensure_context", lambda: None)
    monkeypatch.setattr(driver, "device_limits", lambda: H200)
    monkeypatch.setitem(driver._state, "modules", [])
    return fake


def test_too_much_shared_memory_is_refused_before_loading(fake_driver: FakeDriver) -> None:
    with pytest.raises(OutOfResources, match="shared memory, Required: 262144, Hardware limit"):
        driver.load_kernel("// ptx", "matmul", 262144, num_warps=8)
    assert fake_driver.calls == []  # no module loaded, no cuFuncSetAttribute


def test_too_many_registers_unload_the_module_before_any_set_attribute(
    fake_driver: FakeDriver,
) -> None:
    fake_driver.attributes["registers"] = 255
    with pytest.raises(OutOfResources, match=r"registers, Required: 261120, Hardware limit: 65536"):
        driver.load_kernel("// ptx", "wide", 65536, num_warps=32)
    assert fake_driver.calls == ["cuModuleLoadData", "cuModuleGetFunction", "cuModuleUnload"]


def test_a_fitting_kernel_loads_and_opts_in_to_its_shared_memory(fake_driver: FakeDriver) -> None:
    assert driver.load_kernel("// ptx", "matmul", 196608, num_warps=8) == "function"
    # as Triton's launcher: past 48 KiB, the dynamic size and the largest carveout
    assert fake_driver.calls == ["cuModuleLoadData", "cuModuleGetFunction", "cuFuncSetAttribute",
                                 "cuFuncSetCacheConfig(prefer shared)"]  # fmt: skip
    fake_driver.calls.clear()
    assert driver.load_kernel("// ptx", "small", 16384, num_warps=4) == "function"
    assert fake_driver.calls == ["cuModuleLoadData", "cuModuleGetFunction"]


# ---------------------------------------------------------------- on the emulator


@triton.jit
def staged_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _compiled(bm: int, bn: int, bk: int, stages: int) -> Any:
    staged_matmul.cache.clear()  # a fresh CompiledKernel: the warning is worked out once per one
    a, b = np.zeros((bm, 2 * bk), np.float32), np.zeros((2 * bk, bn), np.float32)
    c = np.zeros((bm, bn), np.float32)
    return staged_matmul.warmup(
        a, b, c, 2 * bk, BM=bm, BN=bn, BK=bk, num_warps=8, num_stages=stages, grid=(1,),
        backend="emulator",
    )  # fmt: skip


def test_the_emulated_gpu_warns_about_a_config_too_big_for_it() -> None:
    pytest.importorskip("llvmlite")
    text = resources.emulated_warning(_compiled(128, 128, 64, 3))
    assert text is not None
    assert text.startswith(
        "kernel 'staged_matmul' (num_warps=8, num_stages=3, BM=128, BN=128, BK=64): out of"
        " resource: shared memory, Required: "
    )
    assert "Hardware limit: 232448." in text and text.endswith(
        "on an NVIDIA H200 it would not launch."
    )
    assert resources.emulated_warning(_compiled(32, 32, 32, 2)) is None


def test_no_warning_when_the_kernel_cannot_be_compiled_for_the_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fails(compiled: Any) -> int:
        raise NotImplementedError("no GPU lowering for this")

    monkeypatch.setattr(resources, "_emulated_shared", fails)
    assert resources.emulated_warning(_compiled(128, 128, 64, 3)) is None


SCRIPT = """
import numpy as np
import minitriton as triton
import minitriton.language as tl


@triton.jit
def staged_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


BM = {bm}
a, b = np.ones((BM, 128), np.float32), np.ones((128, BM), np.float32)
c = np.zeros((BM, BM), np.float32)
staged_matmul[(1,)](a, b, c, 128, BM=BM, BN=BM, BK=64, num_warps=8, num_stages=3)
assert (c == 128).all()
"""


@pytest.mark.parametrize("bm", [128, 32])
def test_minitriton_check_warns_but_runs_the_kernel(
    bm: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("llvmlite")
    script = tmp_path / "big.py"
    script.write_text(textwrap.dedent(SCRIPT.format(bm=bm)), encoding="utf-8")
    assert main(["check", str(script)]) == 0
    out, err = capsys.readouterr()
    if bm == 32:
        assert out.strip() == "no problems found" and "warning" not in err
        return
    assert out.strip() == "no errors found; 1 warning (above)"
    assert err.startswith("minitriton: warning: kernel 'staged_matmul' (num_warps=8, num_stages=3,")
    assert "out of resource: shared memory" in err and "NVIDIA H200" in err
