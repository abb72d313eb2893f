"""A script written for Triton (``import triton``), run unchanged by ``minitriton.compat``.

It uses what Triton's tutorials use around their kernels: the active
device, device properties, ``warmup`` with ``n_regs`` and ``metadata``, a
compiled kernel launched on a grid, libdevice, ``triton.testing``.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def scaled_tanh(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, libdevice.tanh(x) * scale, mask=offs < n)


props = driver.active.utils.get_device_properties(DEVICE.index)
x = torch.randn(3000, device=DEVICE)
y = torch.empty_like(x)
kernel = scaled_tanh.warmup(x, y, x.numel(), 2.0, BLOCK=256, grid=(1,))
kernel._init_handles()
programs = min(props["multiprocessor_count"], props["max_num_regs"] // (kernel.n_regs * 32 * 4))
assert programs > 0 and kernel.metadata.shared >= 0
kernel[(triton.cdiv(x.numel(), 256) + 3, 1, 1)](x, y, x.numel(), 2.0, 256)
triton.testing.assert_close(y, torch.tanh(x) * 2, atol=1e-6)


@triton.testing.perf_report(
    triton.testing.Benchmark(
        x_names=["size"],
        x_vals=[2**10, 2**12],
        line_arg="provider",
        line_vals=["triton"],
        line_names=["Triton"],
        plot_name="scaled-tanh",
        args={},
    )
)
def benchmark(size, provider):
    a = torch.randn(size, device=DEVICE)
    b = torch.empty_like(a)
    grid = (triton.cdiv(size, 256),)
    ms = triton.testing.do_bench(lambda: scaled_tanh[grid](a, b, size, 1.0, BLOCK=256), rep=1)
    return 8 * size / ms * 1e-6


benchmark.run(print_data=True)
print("✅ done")
