"""The examples gallery in course order: from vector add to attention.

sphinx-gallery sorts the examples of a folder with a key class (its
``within_subsection_order`` option names this one); each step uses what the
ones before it showed: masks, then reductions and scans, atomics, 2-D tiles
and ``tl.dot``, then kernels that combine them.
"""

from __future__ import annotations

from pathlib import Path

#: File names in the order a student reads them; any other example comes last,
#: by name.
COURSE = (
    "vector_add.py",
    "plot_dropout.py",
    "plot_image_augmentation.py",
    "plot_moving_average.py",
    "plot_layer_norm.py",
    "plot_sgd_atomics.py",
    "plot_kmeans.py",
    "plot_spmv_csr.py",
    "plot_matmul.py",
    "plot_rnn.py",
    "plot_attention.py",
)


class CourseOrder:
    """Sort key: the position in :data:`COURSE`, then the file name."""

    def __init__(self, src_dir: str) -> None:
        self.src_dir = src_dir

    def __call__(self, filename: str) -> tuple[int, str]:
        name = Path(filename).name
        return (COURSE.index(name) if name in COURSE else len(COURSE), name)

    def __repr__(self) -> str:  # sphinx-gallery shows it, and caches by it
        return f"<{type(self).__name__}>"
