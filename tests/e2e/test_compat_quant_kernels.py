"""Constructs of quantized-matmul and int8-attention kernels, against NumPy references.

Quantization libraries ship one "default" autotune config beside a pruning
function written for their larger config lists; as in Triton, a single
config runs as written, without pruning.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minitriton as triton
import minitriton.language as tl

# ---------------------------------------------------------------- a single config is not pruned


def _keep_none(configs: list, nargs: dict, **kwargs: Any) -> list:
    """A pruner that keeps nothing for this launch (as a library's pruner may, for
    shapes its config lists do not cover)."""
    _keep_none.calls += 1  # type: ignore[attr-defined]
    return []


_keep_none.calls = 0  # type: ignore[attr-defined]


@triton.autotune(
    configs=[triton.Config({"BLOCK": 32, "SHIFT": 4}, num_warps=1)],
    key=["n"],
    prune_configs_by={"early_config_prune": _keep_none},
)
@triton.jit
def unpack_nibbles(packed_ptr, out_ptr, n, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    word = tl.load(packed_ptr + offs // 2, mask=offs < n, other=0)
    nibble = (word >> ((offs % 2) * SHIFT)) & 0xF
    tl.store(out_ptr + offs, nibble.to(tl.float32) - 8.0, mask=offs < n)


def test_a_single_config_runs_without_pruning(backend: str, rng: np.random.Generator) -> None:
    n = 50
    nibbles = rng.integers(0, 16, size=n, dtype=np.int32)
    packed = (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.int32)
    out = np.zeros(n, dtype=np.float32)
    unpack_nibbles[(triton.cdiv(n, 32),)](packed, out, n, backend=backend)
    np.testing.assert_array_equal(out, nibbles[:n].astype(np.float32) - 8.0)
    assert _keep_none.calls == 0  # type: ignore[attr-defined]
