"""Exercise 17: sparse matrix-vector product, CSR format (see README.md).

Run ``minitriton exercises check 17``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def spmv_csr_kernel(row_ptr, col_idx, values, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    start = tl.load(row_ptr + row)
    end = tl.load(row_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    # TODO: this row's nonzeros are values[start:end], in the columns
    #       col_idx[start:end]. Walk them BLOCK at a time (the row may be
    #       longer than BLOCK, or empty), gather x at those columns and
    #       accumulate values * x into acc.
    tl.store(y_ptr + row, tl.sum(acc, axis=0))
