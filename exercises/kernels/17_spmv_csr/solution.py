"""Exercise 17, reference solution: sparse matrix times vector, CSR format."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def spmv_csr_kernel(row_ptr, col_idx, values, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    start = tl.load(row_ptr + row)
    end = tl.load(row_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(start, end, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        mask = offs < end
        cols = tl.load(col_idx + offs, mask=mask, other=0)
        vals = tl.load(values + offs, mask=mask, other=0.0)
        acc += vals * tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))
