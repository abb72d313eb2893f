"""The kernel cache: keys, atomic disk entries, corrupt entries rebuilt (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import minitriton.backend as backend
from minitriton.backend import cache
from minitriton.ir.parser import parse_module

KERNEL = Path(__file__).resolve().parent / "kernels" / "vector_add.ir"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MINITRITON_CACHE", raising=False)
    backend.clear_memory_cache()
    yield tmp_path
    backend.clear_memory_cache()


def module():
    return parse_module(KERNEL.read_text(), str(KERNEL))


def test_key_depends_on_ir_arch_warps_stages_and_register_cap():
    text = KERNEL.read_text()
    key = cache.cache_key(text, "sm_90", 4)
    assert key == cache.cache_key(text, "sm_90", 4)
    assert key != cache.cache_key(text, "sm_80", 4)
    assert key != cache.cache_key(text, "sm_90", 8)
    assert key != cache.cache_key(text, "sm_90", 4, num_stages=4)
    assert key != cache.cache_key(text, "sm_90", 4, maxnreg=128)
    assert key != cache.cache_key(text.replace("1024", "2048"), "sm_90", 4)


def test_memory_and_disk_cache(cache_dir):
    k1 = backend.compile_module(module())
    assert backend.compile_module(module()) is k1  # memory hit
    files = list(cache_dir.glob("*.json"))
    assert len(files) == 1 and not list(cache_dir.glob(".tmp-*"))
    backend.clear_memory_cache()
    k2 = backend.compile_module(module())  # disk hit
    assert k2 is not k1 and k2.ptx == k1.ptx and k2.asm["ttgir"] == k1.asm["ttgir"]


def test_corrupt_entry_is_rebuilt(cache_dir, monkeypatch):
    backend.compile_module(module())
    (entry,) = cache_dir.glob("*.json")
    entry.write_text(entry.read_text().replace("add_kernel", "bad_kernel", 1))
    assert cache.load(entry.stem) is None  # checksum mismatch
    backend.clear_memory_cache()
    calls = []
    real = backend.compile_ir
    monkeypatch.setattr(backend, "compile_ir", lambda *a: calls.append(1) or real(*a))
    k = backend.compile_module(module())
    assert calls and k.name == "add_kernel"
    assert cache.load(entry.stem) is not None  # rewritten


def test_disk_cache_can_be_disabled(cache_dir, monkeypatch):
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    backend.compile_module(module())
    assert not list(cache_dir.glob("*.json"))


def test_gpu_available_never_raises():
    assert backend.gpu_available() in (True, False)


def _entry_with(body: dict) -> str:
    import hashlib
    import json

    text = json.dumps(body)
    return f"{cache.HEADER} {hashlib.sha256(text.encode()).hexdigest()}\n{text}"


@pytest.mark.parametrize(
    "change",
    [{"ptx": 5}, {"num_warps": "4"}, {"params": "ptr"}, {"params": [1]}, {"shared": True},
     {"extra": 1}],
)  # fmt: skip
def test_an_entry_with_the_right_checksum_but_wrong_fields_is_rebuilt(cache_dir, change):
    import json

    backend.compile_module(module())
    (entry,) = cache_dir.glob("*.json")
    body = json.loads(entry.read_text().split("\n", 1)[1])
    entry.write_text(_entry_with({**body, **change}))
    assert cache.load(entry.stem) is None
    backend.clear_memory_cache()
    k = backend.compile_module(module())
    assert isinstance(k.ptx, str) and cache.load(entry.stem) is not None  # rewritten


def test_a_directory_where_an_entry_belongs_is_replaced(cache_dir):
    k = backend.compile_module(module())
    (entry,) = cache_dir.glob("*.json")
    entry.unlink()
    entry.mkdir()
    (entry / "junk").write_text("x")
    backend.clear_memory_cache()
    backend.compile_module(module())
    assert entry.is_file() and cache.load(entry.stem).ptx == k.ptx


def test_a_kernels_hash_is_the_ptx_digest_computed_once(monkeypatch):
    import hashlib

    from minitriton.backend.build import PTXModule

    kernel = backend.GPUKernel.of(PTXModule("k", "", "", ".entry k", 0, 4, "sm_90"))
    assert kernel.hash == hashlib.sha256(b".entry k").hexdigest()
    monkeypatch.setattr(hashlib, "sha256", None)  # a second digest would fail
    assert kernel.hash == hashlib.new("sha256", b".entry k").hexdigest()
