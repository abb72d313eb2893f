"""
Vector addition
===============

The first kernel of Triton's tutorials, unchanged except for its imports:
each program adds one ``BLOCK_SIZE`` chunk of two vectors, and a mask keeps
the last, partial chunk inside the arrays.

Run it with ``minitriton run examples/vector_add.py`` (or plain ``python``).
It runs on the GPU when one is present and on the NumPy emulator otherwise;
``--backend emulator`` or ``MINITRITON_BACKEND=emulator`` chooses explicitly.
"""

# sphinx_gallery_thumbnail_path = "_static/thumbs/vector_add.png"

import numpy as np

import minitriton as triton
import minitriton.language as tl

# %%
# The kernel
# ----------
# ``tl.program_id(axis=0)`` tells each program which chunk is its own;
# ``tl.arange`` makes the block of offsets inside the chunk.


@triton.jit
def add_kernel(
    x_ptr,  # *Pointer* to first input vector.
    y_ptr,  # *Pointer* to second input vector.
    output_ptr,  # *Pointer* to output vector.
    n_elements,  # Size of the vector.
    BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # Guard memory operations against out-of-bounds accesses.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


# %%
# Launching it
# ------------
# The grid is a callable of the launch's meta-parameters, so it follows
# ``BLOCK_SIZE``: ``cdiv(98432, 1024) = 97`` programs.


def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x + y`` computed by ``add_kernel``."""
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


# %%
# Checking the result against NumPy
# ---------------------------------


def main() -> None:
    """Add two random vectors and compare with NumPy."""
    rng = np.random.default_rng(0)
    size = 98432
    x = rng.random(size, dtype=np.float32)
    y = rng.random(size, dtype=np.float32)
    output = add(x, y)
    max_error = float(np.max(np.abs(output - (x + y))))
    print(f"backend: {triton.get_backend()}")
    print(f"max abs error vs NumPy: {max_error}")
    if max_error != 0.0:
        raise SystemExit("vector add does not match NumPy")


if __name__ == "__main__":
    main()
