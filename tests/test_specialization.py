"""Triton's ``specialization_data`` and ``kernel.preload``: a specialization as text.

A compile hook receives the text; ``preload`` reads it back and compiles the
same specialization (same ``hash``) without the launch's arguments. Text it
cannot trust (another kernel's, another version's, unknown options) is
refused, and a constexpr it cannot write (a function) gives no text.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import knobs
from minitriton.compiler import CompileOptions
from minitriton.frontend.source import ArgSpec
from minitriton.ir.types import F32, I32, I64, PointerType
from minitriton.runtime import specialization


@triton.jit
def scaled_add(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr, PAIR: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * alpha + PAIR[0] * PAIR[1], mask=mask)


@triton.jit
def apply(x_ptr, FN: tl.constexpr):
    tl.store(x_ptr, FN(tl.load(x_ptr)))


@triton.jit
def double(x):
    return x * 2


class Pair(NamedTuple):
    a: int
    b: int


def specs_cases() -> list[ArgSpec]:
    tup = ArgSpec("t", "tuple", None, (tuple, [ArgSpec("t_0", "scalar", I32, None, True, False)]))
    return [
        ArgSpec("x", "pointer", PointerType(F32), None, True, False),
        ArgSpec("n", "scalar", I64, None, False, False),
        ArgSpec("one", "constexpr", None, 1, False, True),
        ArgSpec("f", "constexpr", None, float("nan")),
        ArgSpec("z", "constexpr", None, -0.0),
        ArgSpec("s", "constexpr", None, "max"),
        ArgSpec("d", "constexpr", None, tl.bfloat16),
        ArgSpec("c", "constexpr", None, tl.constexpr((3, [4, None], True))),
        tup,
    ]


def test_specs_and_options_survive_the_text() -> None:
    specs = specs_cases()
    options = CompileOptions(num_warps=8, num_stages=2, maxnreg=128, passes=("cse", "dce"))
    text = specialization.dumps("k", specs, options, "gpu")
    assert text is not None
    read, opts, backend = specialization.loads(text, "k")
    assert backend == "gpu" and opts.key() == options.key() and opts.passes == ("cse", "dce")
    assert [s.key() for s in read] == [s.key() for s in specs]
    assert math.isnan(read[3].value) and math.copysign(1, read[4].value) == -1
    assert read[6].value == tl.bfloat16 and read[7].value == tl.constexpr((3, [4, None], True))


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("name", "other", "of kernel 'other', not of 'k'"),
        ("version", 99, "version 99"),
        ("options", {"num_warps": 4, "unheard_of": 1}, "unknown options ['unheard_of']"),
    ],
)
def test_text_for_another_kernel_version_or_options_is_refused(
    field: str, value: Any, words: str
) -> None:
    data = json.loads(specialization.dumps("k", specs_cases(), CompileOptions(), "emulator") or "")
    data[field] = value
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        specialization.loads(json.dumps(data), "k")


def test_values_that_need_code_to_read_back_give_no_text() -> None:
    fn = ArgSpec("FN", "constexpr", None, double)
    named = ArgSpec("p", "tuple", None, (Pair, [ArgSpec("p_0", "constexpr", None, 1)]))
    for spec in (fn, named):
        assert specialization.dumps("k", [spec], CompileOptions(), "emulator") is None


def test_a_hooks_text_preloads_the_same_kernel() -> None:
    seen: list[str | None] = []

    def hook(**info: Any) -> bool:
        seen.append(info["compile"]["specialization_data"])
        return False

    x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    scaled_add.device_caches.clear()
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = hook
        first = scaled_add.warmup(x, y, 6, 2.0, BLOCK=8, PAIR=(3, 4), grid=(1,))
        apply.warmup(x, FN=double, grid=(1,))
    text, no_text = seen
    assert text is not None and no_text is None  # a function constexpr has no text
    scaled_add.device_caches.clear()
    again = scaled_add.preload(text)
    assert scaled_add.compile_count == 2 and again is not first
    assert again.hash == first.hash
    again[(1,)](x, y, 6, 2.0, 8, (3, 4))  # constexprs included, as Triton
    np.testing.assert_array_equal(y[:6], 2 * x[:6] + 12)
    with pytest.raises(ValueError, match="not of 'apply'"):
        apply.preload(text)
