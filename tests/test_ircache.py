"""Compile once per function; stage texts on demand; the on-disk IR cache.

The cache tests start fresh Python processes (``CHILD``) that share one cache
folder, as two scripts run one after the other would.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitriton.frontend.parser as parser_module
import minitriton.language as tl
from minitriton import compiler, ircache
from minitriton.compiler import CompileOptions
from minitriton.signature import kernel_params, parse_signature
from tests.kernels import cache_kernels
from tests.kernels.cache_kernels import scale_kernel
from tests.kernels.fused_softmax import softmax_kernel
from tests.kernels.vector_add import add_kernel

ROOT = Path(__file__).resolve().parents[1]


def reference(x: np.ndarray, block: int) -> np.ndarray:
    """What scale_kernel writes."""
    y = (x * cache_kernels.SCALE.value).astype(x.dtype)
    out = y.copy()
    for start in range(0, len(x), block):
        part = y[start : start + block]
        out[start] += max(part.max(), 0) if len(part) < block else part.max()  # masked lanes: 0
    return out


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the name of every function the frontend parses."""
    calls: list[str] = []
    real = parser_module.parse_function

    def counting(source: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        fdef = real(source, *args, **kwargs)
        calls.append(fdef.name)
        return fdef

    monkeypatch.setattr(parser_module, "parse_function", counting)
    return calls


# ---------------------------------------------------------------- compile once


def test_one_parse_per_function_however_many_specializations(monkeypatch):
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    for fn in (scale_kernel, cache_kernels.scaled, cache_kernels.add_max):
        monkeypatch.setattr(fn.source, "_ast", None)  # as if just defined
    calls = count_parses(monkeypatch)
    rng = np.random.default_rng(0)
    for dtype, block in [(np.float32, 64), (np.float32, 128), (np.int32, 64), (np.float16, 32)]:
        x = (rng.standard_normal(300) * 10).astype(dtype)
        out = np.zeros_like(x)
        scale_kernel[(-(-300 // block),)](x, out, 300, BLOCK=block, backend="emulator")
        np.testing.assert_allclose(out, reference(x, block), rtol=1e-3)
    assert len(scale_kernel.cache) == 4
    assert sorted(calls) == ["add_max", "scale_kernel", "scaled"]


def test_asm_of_lazy_stages_matches_the_eager_texts():
    cases = [
        (add_kernel, "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"),
        (scale_kernel, "*fp32:16, *fp32:16, i32, 64"),
        (softmax_kernel, "*fp32:16, *fp32:16, i32, i32, i32, i32, 1024, 2"),
    ]
    for kernel, signature in cases:
        specs = parse_signature(signature, kernel_params(kernel.fn))
        seen: dict[str, str] = {}
        eager = compiler.compile_kernel(kernel.source, specs, on_stage=seen.__setitem__)
        lazy = compiler.compile_kernel(kernel.source, specs)
        assert list(lazy.asm) == ["ast", "ir", "ir-opt"] == list(eager.asm)
        for stage in ("ast", "ir", "ir-opt"):
            assert lazy.asm[stage] == eager.asm[stage] == seen[stage], (kernel, stage)
        if kernel is softmax_kernel:  # "ir" is printed before the passes ran
            assert lazy.asm["ir"] != lazy.asm["ir-opt"]


def test_a_stage_is_made_once_and_only_when_read():
    made: list[str] = []
    stages = compiler.Stages({"ast": "a\n"})
    stages.lazy("ir", lambda: made.append("ir") or "ir text\n")
    assert "ir" in stages and len(stages) == 2 and made == []
    assert stages["ir"] == "ir text\n" and stages["ir"] == "ir text\n"
    assert made == ["ir"] and dict(stages) == {"ast": "a\n", "ir": "ir text\n"}


# ---------------------------------------------------------------- the key


def key_of(kernel=scale_kernel, signature="*fp32:16, *fp32:16, i32, 64", **options):  # noqa: ANN001, ANN003, ANN201
    specs = parse_signature(signature, kernel_params(kernel.fn))
    return ircache.kernel_key(kernel.source, specs, CompileOptions(**options))


def test_key_covers_specialization_options_helpers_globals_and_version(monkeypatch):
    key = key_of()
    assert key == key_of()
    assert key != key_of(signature="*fp32:16, *fp32:16, i32, 128")
    assert key != key_of(signature="*fp16:16, *fp16:16, i32, 64")
    assert key != key_of(num_stages=2)  # every option takes part, even unused ones
    assert key != key_of(passes=("cse",))
    assert key == key_of(print_after=("all",))  # printing changes nothing compiled
    monkeypatch.setattr(cache_kernels, "SCALE", tl.constexpr(4))  # a global the kernel reads
    assert key_of() != key
    monkeypatch.undo()
    helper = cache_kernels.scaled.source
    monkeypatch.setattr(helper, "source", helper.source.replace("x * factor", "factor * x"))
    assert key_of() != key
    monkeypatch.undo()
    monkeypatch.setattr(ircache, "COMPILER_VERSION", "minitriton-ir-0")
    assert key_of() != key


def test_key_covers_user_functions_but_not_library_ones(monkeypatch):
    src = scale_kernel.source
    plain = ircache.source_closure(src)
    monkeypatch.setitem(src.globals, "SCALE", cache_kernels.block_of)  # now a user function
    with_user = ircache.source_closure(src)
    assert any("return n * 2" in part for part in with_user) and with_user != plain
    monkeypatch.setitem(src.globals, "SCALE", math.hypot)  # library code: by name
    (part,) = [p for p in ircache.source_closure(src) if p.startswith("SCALE=")]
    assert part == "SCALE=builtin_function_or_method math.hypot"


def forget_the_fingerprint() -> None:
    ircache.compiler_fingerprint.cache_clear()
    ircache.compiler_digest.cache_clear()


def test_key_covers_the_compiler_sources(monkeypatch):
    key = key_of()
    forget_the_fingerprint()
    real = ircache.cachefile.source_stamps
    monkeypatch.setattr(
        ircache.cachefile, "source_stamps", lambda *a, **k: [s + "x" for s in real(*a, **k)]
    )
    try:
        assert key_of() != key
    finally:
        monkeypatch.undo()
        forget_the_fingerprint()
    assert key_of() == key


def test_watched_compiles_skip_the_cache(monkeypatch, tmp_path):
    assert ircache.usable(CompileOptions())
    assert not ircache.usable(CompileOptions(print_after=("cse",)))
    monkeypatch.setenv("MINITRITON_DUMP_DIR", str(tmp_path))
    assert not ircache.usable(CompileOptions())
    monkeypatch.delenv("MINITRITON_DUMP_DIR")
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    assert not ircache.usable(CompileOptions())


# ---------------------------------------------------------------- other processes

CHILD = textwrap.dedent(
    """
    import importlib, json, sys
    import numpy as np
    import minitriton.frontend.parser as parser_module
    jit_module = importlib.import_module("minitriton.jit")
    counts = {"parse": 0, "compile": 0}
    real_parse, real_compile = parser_module.parse_function, jit_module.compile_kernel
    def parse(*a, **k):
        counts["parse"] += 1
        return real_parse(*a, **k)
    def compile_kernel(*a, **k):
        counts["compile"] += 1
        return real_compile(*a, **k)
    parser_module.parse_function, jit_module.compile_kernel = parse, compile_kernel
    from tests.kernels.cache_kernels import scale_kernel
    from tests.test_ircache import reference
    x = np.arange(300, dtype=np.float32) % 17
    out = np.zeros_like(x)
    compiled = scale_kernel[(5,)](x, out, 300, BLOCK=64, backend="emulator")
    np.testing.assert_array_equal(out, reference(x, 64))
    print(json.dumps({**counts, "from_disk": compiled.from_disk}))
    """
)


def run_child(cache: Path) -> dict:
    """Launch scale_kernel in a fresh process using ``cache``; its counts."""
    env = dict(os.environ, MINITRITON_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop("MINITRITON_CACHE", None)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def entries(cache: Path) -> list[Path]:
    return sorted((cache / ircache.SUBDIR).glob("*/*.json"))


def test_a_second_process_neither_parses_nor_compiles(tmp_path):
    first = run_child(tmp_path)
    assert first == {"parse": 3, "compile": 1, "from_disk": False}
    (entry,) = entries(tmp_path)
    assert not list(tmp_path.rglob(".tmp-*"))
    second = run_child(tmp_path)
    assert second == {"parse": 0, "compile": 0, "from_disk": True}
    assert entries(tmp_path) == [entry]


def test_a_corrupted_entry_is_rebuilt(tmp_path):
    run_child(tmp_path)
    (entry,) = entries(tmp_path)
    good = entry.read_text()
    entry.write_text(good.replace("arith.mul", "arith.add", 1))  # the checksum no longer matches
    assert run_child(tmp_path)["compile"] == 1
    assert entry.read_text() == good  # rewritten
    entry.write_text(good[: len(good) // 2])  # cut short
    assert run_child(tmp_path)["compile"] == 1
    assert run_child(tmp_path) == {"parse": 0, "compile": 0, "from_disk": True}


def test_an_entry_that_does_not_parse_is_rebuilt(tmp_path):
    run_child(tmp_path)
    (entry,) = entries(tmp_path)
    for ir in ("tt.func @scale_kernel( {", "", "tt.func @other() {\n  tt.return()\n}\n"):
        body = json.dumps({"name": "scale_kernel", "ir": ir})
        ircache.cachefile.write_entry(entry, body)  # a valid checksum over bad IR
        assert ircache.read_module(entry) is None
    assert run_child(tmp_path)["compile"] == 1
    assert run_child(tmp_path)["from_disk"] is True


WRITER = textwrap.dedent(
    """
    import sys, time
    from minitriton import ircache
    from minitriton.compiler import compile_kernel
    from minitriton.signature import kernel_params, parse_signature
    from tests.kernels.cache_kernels import scale_kernel
    specs = parse_signature("*fp32:16, *fp32:16, i32, 64", kernel_params(scale_kernel.fn))
    compiled = compile_kernel(scale_kernel.source, specs)
    path = ircache.entry_path(scale_kernel.source, ircache.kernel_key(
        scale_kernel.source, specs, compiled.options))
    while time.time() < float(sys.argv[1]):
        time.sleep(0.001)
    for _ in range(100):
        ircache.store_kernel(compiled)
        module = ircache.read_module(path)
        assert module is not None and module.kernel.sym_name == "scale_kernel"
    print("ok")
    """
)


def test_two_processes_writing_the_same_entry_both_succeed(tmp_path):
    import time

    env = dict(os.environ, MINITRITON_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("MINITRITON_CACHE", None)
    start = str(time.time() + 3)  # both writers begin together, once imported
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, start],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )  # fmt: skip
        for _ in range(2)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in results]
    assert [out.strip() for out, _ in results] == ["ok", "ok"]
    assert len(entries(tmp_path)) == 1 and not list(tmp_path.rglob(".tmp-*"))
    assert run_child(tmp_path) == {"parse": 0, "compile": 0, "from_disk": True}


def test_a_cached_kernel_compiles_on_to_ptx():
    pytest.importorskip("llvmlite")
    specs = parse_signature("*fp32:16, *fp32:16, i32, 64", kernel_params(scale_kernel.fn))
    options = CompileOptions()
    compiled = compiler.compile_kernel(scale_kernel.source, specs, options, stop_after="ptx")
    ircache.store_kernel(compiled)
    loaded = ircache.load_kernel(scale_kernel.source, specs, options, "ptx")
    assert loaded is not None and loaded.from_disk
    assert loaded.asm["ptx"] == compiled.asm["ptx"]  # same IR, locations included
    assert loaded.asm["ir-opt"] == compiled.asm["ir-opt"]
    assert loaded.asm["ast"] == compiled.asm["ast"] and loaded.asm["ir"] == compiled.asm["ir"]


# ---------------------------------------------------------------- the pickled module


def stored_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel=scale_kernel,
                 signature: str = "*fp32:16, *fp32:16, i32, 64") -> tuple[Path, str]:  # fmt: skip
    """Compile ``kernel``, store it in ``tmp_path``; the entry's path and its IR text."""
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path))
    specs = parse_signature(signature, kernel_params(kernel.fn))
    compiled = compiler.compile_kernel(kernel.source, specs)
    ircache.store_kernel(compiled)
    path = ircache.entry_path(kernel.source, ircache.kernel_key(kernel.source, specs,
                                                                compiled.options))  # fmt: skip
    return path, ircache.ir_text_with_locs(compiled.module)


def test_an_entry_is_read_without_parsing_its_text(tmp_path, monkeypatch):
    path, text = stored_entry(tmp_path, monkeypatch)
    entry = json.loads(ircache.cachefile.read_entry(path))
    assert entry["ir"] == text and isinstance(entry["module"], str)
    import minitriton.ir.parser as ir_parser

    def no_parse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the IR text was parsed")

    monkeypatch.setattr(ir_parser, "parse_module", no_parse)
    module = ircache.read_module(path)
    assert ircache.ir_text_with_locs(module) == text  # the same module, locations included


def test_factory_made_ops_pickle_by_name(tmp_path, monkeypatch):
    """``arith.add`` and ``math.exp`` classes are made by a factory: no module attribute."""
    signature = "*fp32:16, *fp32:16, i32, i32, i32, i32, 128, 2"
    path, text = stored_entry(tmp_path, monkeypatch, softmax_kernel, signature)
    entry = json.loads(ircache.cachefile.read_entry(path))
    module = ircache.thaw_module(entry["module"])
    assert module is not None and "math.exp" in text
    assert ircache.ir_text_with_locs(module) == text


@pytest.mark.parametrize("bad", ["not base64!", "", "AAAA", None, 3])
def test_an_unusable_pickle_falls_back_to_the_text(tmp_path, monkeypatch, bad):
    path, text = stored_entry(tmp_path, monkeypatch)
    entry = json.loads(ircache.cachefile.read_entry(path))
    entry["module"] = bad
    ircache.cachefile.write_entry(path, json.dumps(entry))
    assert ircache.thaw_module(bad) is None
    assert ircache.ir_text_with_locs(ircache.read_module(path)) == text


def test_the_ptx_cache_key_covers_the_backends_sources(tmp_path: Path) -> None:
    # A change to the GPU backend's code (not only to the IR) must not reuse cached PTX.
    from minitriton.backend import build

    root = Path(build.__file__).resolve().parent
    assert build.version_tag().endswith("/backend-" + build.sources_digest(root)[:16])
    (tmp_path / "lower.py").write_text("x = 1\n")
    before = build.sources_digest(tmp_path)
    (tmp_path / "lower.py").write_text("x = 12\n")  # another size: another digest
    assert build.sources_digest(tmp_path) != before


def test_source_stamps_name_size_and_mtime_of_each_source_file(tmp_path: Path) -> None:
    # Both caches stamp their compiler's sources with this one helper.
    from minitriton.cachefile import source_stamps

    for name, text in [("b.py", "x = 1\n"), ("a/c.lark", "start: x\n"), ("a/d.py", ""),
                       ("a.py", "y\n"), ("notes.txt", "z"), ("__pycache__/e.py", ""),
                       (".git/f.py", "")]:  # fmt: skip
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    os.utime(tmp_path / "b.py", ns=(5, 7_000))
    stamps = source_stamps(tmp_path, (".py", ".lark"), relative_to=tmp_path)
    assert [s.split()[0] for s in stamps] == ["a/c.lark", "a/d.py", "a.py", "b.py"]
    assert stamps[-1] == "b.py 6 7000"
    assert source_stamps(tmp_path, relative_to=tmp_path)[0] == "a/d.py 0 " + str(
        (tmp_path / "a/d.py").stat().st_mtime_ns
    )
    (only,) = source_stamps(tmp_path / "a")  # Python only; named by the path found
    assert only.startswith(str(tmp_path / "a" / "d.py") + " 0 ")
    assert source_stamps(tmp_path / "b.py") == ["b.py 6 7000"]  # a file alone: its name
    assert source_stamps(tmp_path / "missing") == []
