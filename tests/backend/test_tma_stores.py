"""TMA stores on sm_90a: which stores ``tma-stores`` rewrites, their ttgir, PTX and recipes.

No GPU needed (llvmlite; ``ptxas`` where it is on PATH). The GPU runs are in
``tests/gpu/test_tma_stores_gpu.py``; the pass's goldens are with the other
GPU passes' (``goldens/gpu_passes/tma-stores``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from minitriton.backend.build import PTXModule
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.signature import parse_signature
from tests.kernels import tma_store_kernels as K
from tests.kernels.persistent_matmul import persistent_desc_matmul

TMA_STORE = re.compile(
    r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group "
    r"\[%rd\d+, \{%r\d+, %r\d+\}\], \[%r\d+\];"
)
TILE_SIG = "*{t}:16, *{t}:16, i32, i32, i32:16, 64, {bn}"


def _persistent_sig(dtype: str, subtile: bool, bn: int = 128) -> str:
    store_bn = bn // 2 if subtile else bn
    return (f"tensordesc<fp16[128, 64]>:16, tensordesc<fp16[{bn}, 64]>:16, "
            f"tensordesc<{dtype}[128, {store_bn}]>:16, i32:16, i32:16, i32:16, "
            f"128, {bn}, 64, 8, {subtile}, 132, False")  # fmt: skip


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    for name in ("MINITRITON_TMA", "MINITRITON_TMA_FORMS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MINITRITON_TMA_STORES", "1")  # off by default


def _compile(kernel: Any, sig: str, arch: str = "sm_90a", debug: bool = False) -> PTXModule:
    specs = parse_signature(sig, kernel.params)
    options = CompileOptions(num_warps=4, num_stages=3, arch=arch, debug=debug)
    return compile_kernel(kernel.source, specs, options, stop_after="ptx").binary


def _store_ops(k: PTXModule) -> list[str]:
    return re.findall(r"ttng\.(?:tma_store_buffers|async_tma_store_wait|"
                      r"async_tma_copy_local_to_global)\(.*", k.ttgir)  # fmt: skip


# ------------------------------------------------------------------ what is rewritten


def test_a_bounds_masked_tile_store_becomes_a_tma_store() -> None:
    k = _compile(K.tile_scale, TILE_SIG.format(t="fp32", bn=64))
    assert "tt.store" not in k.ttgir
    ops = [re.sub(r"%\w+", "%_", op.split(" : ")[0]) for op in _store_ops(k)]
    assert ops == [
        "ttng.tma_store_buffers() {bytes = 16384}",
        "ttng.async_tma_store_wait() {pendings = 0}",
        "ttng.async_tma_copy_local_to_global(%_, %_, %_) {map = 0, offset = 0}",
        "ttng.async_tma_store_wait() {pendings = 0}",  # before tt.return
    ]
    # y (argument 1), N then M (innermost first), the row stride; 64 x 64 fp32 is two boxes of
    # 32 columns (128 bytes, the widest swizzle).
    assert k.tma == [{"base": 1, "dtype": "f32", "dims": [["arg", 3], ["arg", 2]],
                      "strides": [["arg", 4]], "box": [32, 64], "swizzle": 128}]  # fmt: skip
    assert len(TMA_STORE.findall(k.ptx)) == 2
    assert k.ptx.count("cp.async.bulk.commit_group;") == 1
    assert k.ptx.count("cp.async.bulk.wait_group.read 0;") == 2
    assert "fence.proxy.async.shared::cta;" in k.ptx
    assert "st.global" not in k.ptx and k.shared == 16384


def test_narrow_rows_take_a_narrower_swizzle() -> None:
    k = _compile(K.tile_scale, TILE_SIG.format(t="fp16", bn=16))
    assert [(m["box"], m["swizzle"]) for m in k.tma] == [([16, 64], 32)]


@pytest.mark.parametrize("subtile", [False, True], ids=["whole", "subtiled"])
def test_persistent_epilogue_stores(subtile: bool) -> None:
    k = _compile(persistent_desc_matmul, _persistent_sig("fp16", subtile))
    ops = [re.sub(r"\(%.*\)", "(...)", op.split(" : ")[0]) for op in _store_ops(k)]
    copies = (["ttng.async_tma_copy_local_to_global(...) {map = 2, offset = 0}",
               "ttng.async_tma_copy_local_to_global(...) {map = 3, offset = 16384}"] if subtile
              else ["ttng.async_tma_copy_local_to_global(...) {map = 2, offset = 0}"])  # fmt: skip
    wait = "ttng.async_tma_store_wait() {pendings = 0}"
    # One wait per tile (the halves have their own tiles), one before tt.return.
    assert ops == ["ttng.tma_store_buffers() {bytes = 32768}", wait, *copies, wait]
    # The store maps follow the loads' (A and B), on c_desc = arguments 8..11.
    box = [64, 128]
    assert [m["base"] for m in k.tma] == [0, 4, 8] + ([8] if subtile else [])
    assert all(m["box"] == box and m["dims"] == [["arg", 10], ["arg", 9]] for m in k.tma[2:])
    assert len(TMA_STORE.findall(k.ptx)) == 2  # two 64-column boxes either way
    # The rings follow the stores' tiles: 32 KB of them, 3 x 32 KB of rings, the barriers.
    assert k.shared > 32768 + 3 * 32768


@pytest.mark.parametrize("subtile", [False, True], ids=["whole", "subtiled"])
def test_tutorial_09s_largest_tile_fits(subtile: bool) -> None:
    # 128 x 256 x 64 fp16, 3 stages: 64 KB of store tiles beside 144 KB of rings.
    k = _compile(persistent_desc_matmul, _persistent_sig("fp16", subtile, bn=256))
    assert _store_ops(k)[0] == "ttng.tma_store_buffers() {bytes = 65536}"
    assert len(TMA_STORE.findall(k.ptx)) == 4 and 65536 + 3 * 49152 < k.shared <= 227 << 10


# ------------------------------------------------------------------ what is not


DECLINED = {
    "values in the mask": (K.tile_scale_filtered, TILE_SIG.format(t="fp32", bn=64)),
    "no mask": (K.tile_scale_unmasked, "*fp32:16, *fp32:16, i32:16, 64, 64"),
    "strided columns": (K.tile_scale_strided, TILE_SIG.format(t="fp32", bn=64)),
    "unaligned row stride": (K.tile_scale, "*fp32:16, *fp32:16, i32, i32, i32, 64, 64"),
    "unaligned base": (K.tile_scale, "*fp32:16, *fp32, i32, i32, i32:16, 64, 64"),
    "16-byte rows": (K.tile_scale, TILE_SIG.format(t="fp16", bn=8)),
    "integers": (K.tile_scale, TILE_SIG.format(t="i32", bn=64)),
    # fp32 128 x 256: a 128 KB tile next to 3 x 48 KB of rings is past 227 KB.
    "too big": (persistent_desc_matmul, _persistent_sig("fp32", False, bn=256)),
}


@pytest.mark.parametrize("case", DECLINED)
def test_stores_that_stay_plain(case: str) -> None:
    kernel, sig = DECLINED[case]
    k = _compile(kernel, sig)
    assert _store_ops(k) == [] and "tt.store(" in k.ttgir
    assert "cp.async.bulk.wait_group" not in k.ptx and "st.global" in k.ptx


def test_the_default_switches_other_arches_and_debug_mode_keep_plain_stores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sig = TILE_SIG.format(t="fp32", bn=64)
    assert _store_ops(_compile(K.tile_scale, sig, arch="sm_80")) == []
    # Debug mode checks every tt.store's addresses, so the pass does not run there.
    debug = _compile(K.tile_scale, sig, debug=True)
    assert _store_ops(debug) == [] and "cp.async.bulk" not in debug.ptx
    monkeypatch.setenv("MINITRITON_TMA", "0")
    assert _store_ops(_compile(K.tile_scale, sig)) == []
    monkeypatch.delenv("MINITRITON_TMA")
    monkeypatch.setenv("MINITRITON_TMA_STORES", "0")
    assert _store_ops(_compile(K.tile_scale, sig)) == []
    monkeypatch.delenv("MINITRITON_TMA_STORES")  # the default
    assert _store_ops(_compile(K.tile_scale, sig)) == []


def test_switch_is_part_of_the_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from minitriton.backend.cache import cache_key

    on = cache_key("ir", "sm_90a", 4, 3)
    monkeypatch.delenv("MINITRITON_TMA_STORES")
    assert cache_key("ir", "sm_90a", 4, 3) != on


# ------------------------------------------------------------------ ptxas


CONFIGS = {
    "tile-f32": (K.tile_scale, TILE_SIG.format(t="fp32", bn=64)),
    "tile-bf16": (K.tile_scale, TILE_SIG.format(t="bf16", bn=64)),
    **{f"persistent-{d}-{'subtiled' if s else 'whole'}": (persistent_desc_matmul,
                                                          _persistent_sig(d, s))
       for d in ("fp16", "bf16", "fp32") for s in (False, True)},
}  # fmt: skip


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("case", CONFIGS)
def test_ptx_assembles(tmp_path: Path, case: str) -> None:
    kernel, sig = CONFIGS[case]
    k = _compile(kernel, sig)
    assert TMA_STORE.search(k.ptx)
    ptx = tmp_path / "k.ptx"
    ptx.write_text(k.ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(ptx), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
