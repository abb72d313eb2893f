"""Small kernels for the debugger and checker tests (line numbers appear in transcripts)."""

# fmt: off
import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def _scale(x, factor):
    y = x * factor
    return y + 1


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = _scale(x, 2.0)
    tl.device_print("y", y)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        acc += tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def run_scale(n: int = 10, block: int = 4) -> np.ndarray:
    """Launch scale_kernel on 0, 1, 2, ... and return the output."""
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    scale_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, backend="emulator")
    return out


if __name__ == "__main__":
    print("result", run_scale())
