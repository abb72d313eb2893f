"""Exercise 11 spec: one SGD step; the gradient and the updated weights."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "Atomics: SGD update"
KERNELS = ("grad_kernel", "sgd_update_kernel")
MINUTES = 30
REQUIRES = ("04", "10")
OUTCOMES = ("combining partial results across programs with atomics", "two-kernel pipelines")
BLOCK = 64
LR = 0.1

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "500 samples": 3,
    "300 samples": 3,
}


def reference(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict:
    """The gradient of mean((x @ w - y)**2) and ``w - LR * grad``."""
    x64, y64, w64 = (a.astype(np.float64) for a in (x, y, w))
    grad = 2.0 / len(y) * x64.T @ (x64 @ w64 - y64)
    return {"grad": grad.astype(np.float32), "w": (w64 - LR * grad).astype(np.float32)}


def launch(kernels, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict:
    """The gradient kernel over blocks of samples, then the update in one program."""
    n, D = x.shape
    grad = np.zeros(D, np.float32)
    kernels.grad_kernel[(triton.cdiv(n, BLOCK),)](x, y, w, grad, n, D=D, BLOCK=BLOCK)
    kernels.sgd_update_kernel[(1,)](w, grad, LR, D=D)
    return {"grad": grad, "w": w}


def cases() -> list[Case]:
    """One program, many programs with a partial last block, a wider model."""
    rng = np.random.default_rng(11)

    def problem(n: int, d: int) -> tuple:
        x = rng.standard_normal((n, d), dtype=np.float32)
        w_true = rng.standard_normal(d, dtype=np.float32)
        y = (x @ w_true + 0.1 * rng.standard_normal(n)).astype(np.float32)
        return x, y, rng.standard_normal(d, dtype=np.float32)

    return [
        Case("64 samples, D = 8: one program", problem(64, 8), atol=1e-4, rtol=1e-4),
        Case(
            "500 samples, D = 8: 8 programs, the last partial",
            problem(500, 8),
            atol=1e-4,
            rtol=1e-4,
        ),
        Case("300 samples, D = 16", problem(300, 16), atol=1e-4, rtol=1e-4),
    ]
