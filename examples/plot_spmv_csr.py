"""
Sparse matrix-vector product (CSR)
==================================

``y = A @ x`` for a sparse matrix ``A`` in compressed sparse row (CSR) form:
``values`` and ``col_idx`` hold the nonzeros row after row, and row ``r``'s
nonzeros are ``values[row_ptr[r]:row_ptr[r + 1]]``. Each program computes one
row: it walks the row's nonzeros in blocks, gathers ``x`` at their column
indices, and sums the products.
"""

import matplotlib.pyplot as plt
import numpy as np

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


def dense_to_csr(a):
    """The CSR arrays of a dense NumPy matrix."""
    rows, cols = np.nonzero(a)
    row_ptr = np.zeros(a.shape[0] + 1, dtype=np.int32)
    np.add.at(row_ptr, rows + 1, 1)
    return np.cumsum(row_ptr).astype(np.int32), cols.astype(np.int32), a[rows, cols]


# %%
# A random 200 x 300 matrix with about 5% nonzeros, and rows of very
# different lengths (one is empty).

rng = np.random.default_rng(0)
a = rng.standard_normal((200, 300)).astype(np.float32)
a *= rng.random((200, 300)) < rng.uniform(0.0, 0.1, size=(200, 1))
a[7] = 0
row_ptr, col_idx, values = dense_to_csr(a)
x = rng.standard_normal(300).astype(np.float32)
y = np.empty(200, dtype=np.float32)
spmv_csr_kernel[(200,)](row_ptr, col_idx, values, x, y, BLOCK=16)

expected = a @ x
np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
print(f"{values.size} nonzeros; max error:", np.abs(y - expected).max())

# %%
# The sparsity pattern.

fig, ax = plt.subplots(figsize=(6, 4))
ax.spy(a, markersize=1)
ax.set_title("nonzeros of A")
plt.show()
