"""Cache hints of loads and stores: ``cache_modifier``, ``eviction_policy``, ``volatile``.

They change no value. The frontend checks them with Triton's words and keeps
them as op attributes (the IR text shows them); the GPU backend writes them
into the PTX access (``ld.global.cg``, ``st.global.L1::evict_first``,
``ld.volatile.global``) as Triton does; the emulator reads and writes as
without them.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.ir.parser import parse_module
from minitriton.ir.printer import print_module


@triton.jit
def hinted_copy(dst, src, n, LOAD: tl.constexpr, STORE: tl.constexpr, EVICT: tl.constexpr):
    offs = tl.program_id(0) * 128 + tl.arange(0, 128)
    x = tl.load(src + offs, mask=offs < n, cache_modifier=LOAD)
    y = tl.load(src + offs, mask=offs < n, eviction_policy=EVICT)
    first = tl.load(src, volatile=True)  # a scalar: one address for every thread
    tl.store(dst + offs, x + y + first, mask=offs < n, cache_modifier=STORE)


def ptx(load: str, store: str, evict: str) -> str:
    src = triton.compiler.ASTSource(
        fn=hinted_copy, signature={"dst": "*fp32", "src": "*fp32", "n": "i32"},
        constexprs={"LOAD": load, "STORE": store, "EVICT": evict},
        attrs={(i,): [["tt.divisibility", 16]] for i in range(3)},
    )  # fmt: skip
    return triton.compile(src).asm["ptx"]


@pytest.mark.parametrize("load", [".ca", ".cg", ".cs", ".cv"])
def test_a_loads_cache_modifier_is_in_its_ptx_and_no_other(load):
    text = ptx(load, ".wt", "evict_last")
    for other in (".ca", ".cg", ".cs", ".cv"):
        assert (f"ld.global{other}." in text) == (other == load)
    assert re.search(r"st\.global\.wt\.v4\.b32", text)
    assert re.search(r"ld\.global\.L1::evict_last\.v4\.b32", text)
    assert re.search(r"ld\.volatile\.global\.b32", text)


def test_without_hints_the_accesses_are_plain():
    text = ptx("", "", "").replace("ld.volatile.global.b32", "")  # the scalar's stays
    assert "volatile" not in text
    assert not re.search(r"\.(ca|cg|cs|cv|wt|wb)\.", text)
    assert "evict" not in text


def test_the_ir_text_keeps_the_hints_and_parses_back():
    compiled = triton.compile(triton.compiler.ASTSource(
        fn=hinted_copy, signature={"dst": "*fp32", "src": "*fp32", "n": "i32"},
        constexprs={"LOAD": ".cg", "STORE": ".cs", "EVICT": "evict_first"}))  # fmt: skip
    text = compiled.asm["ttir"] if "ttir" in compiled.asm else print_module(compiled.module)
    assert '{cache = ".cg"}' in text and '{cache = ".cs"}' in text
    assert '{evict = "evict_first"}' in text and "{volatile = true}" in text
    assert print_module(parse_module(text, "<hints>")) == text


@pytest.mark.parametrize(
    ("load", "store", "evict", "message"),
    [
        (".wt", "", "", "Cache modifier .wt not supported"),  # a store's modifier on a load
        ("", ".cv", "", "Cache modifier .cv not supported"),  # and a load's on a store
        ("", "", "evict_sometimes", "Eviction policy evict_sometimes not supported"),
    ],
)
def test_unknown_hints_are_refused_with_tritons_words(load, store, evict, message):
    x, out = np.zeros(128, np.float32), np.zeros(128, np.float32)
    with pytest.raises(CompileError, match=message):
        hinted_copy[(1,)](out, x, 128, load, store, evict, backend="emulator")


def test_hints_change_no_value(backend):
    x = np.random.default_rng(5).standard_normal(300).astype(np.float32)
    out = np.zeros(300, np.float32)
    hinted_copy[(3,)](out, x, 300, ".cg", ".cs", "evict_first", backend=backend)
    np.testing.assert_array_equal(out, 2 * x + x[0])
