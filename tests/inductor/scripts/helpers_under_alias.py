"""torch's Inductor runtime helpers, imported unchanged under ``alias_triton()``, in a kernel.

Run as a script (the alias changes the whole process); prints one JSON line
with what it checked. The real Triton that torch installs may already be
imported: the alias must replace it everywhere.
"""

from __future__ import annotations

import json

import triton as real_triton  # noqa: F401 - imported first on purpose

from minitriton.compat import alias_triton

alias_triton()

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from torch._inductor.runtime import triton_compat, triton_helpers  # noqa: E402


@triton.jit
def row_stats(x_ptr, max_ptr, mean_ptr, m2_ptr, min_ptr, R: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * R + tl.arange(0, R)[None, :])
    tl.store(max_ptr + row + tl.arange(0, 1), triton_helpers.max2(x, 1))
    mean, m2, _ = triton_helpers.welford(x, tl.zeros_like(x), tl.full(x.shape, 1.0, tl.float32), 1)
    tl.store(mean_ptr + row + tl.arange(0, 1), mean)
    tl.store(m2_ptr + row + tl.arange(0, 1), m2)
    lowest = triton_helpers.min2(triton_helpers.minimum(x, x + 1.0), 1)
    tl.store(min_ptr + row + tl.arange(0, 1), lowest)


x = torch.randn(4, 32)
out = {k: torch.empty(4) for k in ("max", "mean", "m2")}
arg = torch.empty(4)
row_stats[(4,)](x, out["max"], out["mean"], out["m2"], arg, R=32)
var = x.var(1, unbiased=False)
print(
    json.dumps(
        {
            "triton_is_minitriton": triton.__name__ == "minitriton",
            "helpers_jit": isinstance(triton_helpers.max2, triton_compat.JITFunction),
            "out_of_resources": triton_compat.OutOfResources.__module__,
            "key": triton_compat.triton_key().startswith("minitriton-"),
            "target": str(triton_helpers.get_backend_options()["arch"]),
            "max": torch.allclose(out["max"], x.amax(1)),
            "mean": torch.allclose(out["mean"], x.mean(1), atol=1e-6),
            "m2": torch.allclose(out["m2"], var * 32, rtol=1e-5),
            "min": torch.equal(arg, x.amin(1)),
        }
    )
)
