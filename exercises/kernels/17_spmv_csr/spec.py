"""Exercise 17 spec: y = A @ x for sparse A in CSR form."""

import numpy as np

from minitriton.course import Case

TITLE = "CSR SpMV"
KERNELS = ("spmv_csr_kernel",)
MINUTES = 30
REQUIRES = ("06",)
OUTCOMES = ("data-dependent loop bounds", "gathers: loads through an index array")
BLOCK = 16

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "30 x 200": 1,
    "50 x 80": 1,
}


def to_csr(a: np.ndarray) -> tuple:
    """The CSR arrays (row_ptr, col_idx, values) of a dense matrix."""
    rows, cols = np.nonzero(a)
    row_ptr = np.zeros(a.shape[0] + 1, dtype=np.int32)
    np.add.at(row_ptr, rows + 1, 1)
    return np.cumsum(row_ptr).astype(np.int32), cols.astype(np.int32), a[rows, cols]


def reference(row_ptr: np.ndarray, col_idx: np.ndarray, values: np.ndarray, x: np.ndarray):
    """``A @ x``, from the CSR arrays, in float64."""
    y = np.zeros(len(row_ptr) - 1)
    for r in range(len(y)):
        lo, hi = row_ptr[r], row_ptr[r + 1]
        y[r] = values[lo:hi].astype(np.float64) @ x[col_idx[lo:hi]].astype(np.float64)
    return y.astype(np.float32)


def launch(
    kernels, row_ptr: np.ndarray, col_idx: np.ndarray, values: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """One program per row."""
    n_rows = len(row_ptr) - 1
    y = np.full(n_rows, np.nan, np.float32)
    kernels.spmv_csr_kernel[(n_rows,)](row_ptr, col_idx, values, x, y, BLOCK=BLOCK)
    return y


def cases() -> list[Case]:
    """Short rows, rows longer than BLOCK, and empty rows."""
    rng = np.random.default_rng(17)

    def sparse(m: int, n: int, density: float, empty_rows: tuple = ()) -> tuple:
        a = rng.standard_normal((m, n)).astype(np.float32)
        a *= rng.random((m, n)) < density
        a[list(empty_rows)] = 0
        return (*to_csr(a), rng.standard_normal(n, dtype=np.float32))

    return [
        Case("40 x 60, ~5 nonzeros per row", sparse(40, 60, 0.08), atol=1e-5, rtol=1e-4),
        Case(
            "30 x 200, ~60 nonzeros per row: longer than BLOCK = 16",
            sparse(30, 200, 0.3),
            atol=1e-4,
            rtol=1e-4,
        ),
        Case(
            "50 x 80 with empty rows 0, 7 and 49",
            sparse(50, 80, 0.1, (0, 7, 49)),
            atol=1e-5,
            rtol=1e-4,
        ),
    ]
