"""The MiniTriton course grader: ``minitriton exercises list|start|check|hint|verify``.

The course lives in the repository's ``exercises/`` folder (see its
README for the course map). This package finds the exercises
(:mod:`.catalog`), keeps each student's copies and progress in a workspace
(:mod:`.workspace`), grades kernel exercises on the emulator or the GPU
(:mod:`.kernels`, the student's code in a child process: :mod:`.sandbox`;
stores seen by :mod:`.tracking`) and compiler exercises with the project's
own tests (:mod:`.compiler_grader`), generates compiler-exercise stubs from
``# BEGIN EXERCISE`` markers in the real source (:mod:`.stubs`), writes the
students' repository (:mod:`.export`) and runs the course in Jupyter
(:mod:`.notebook`).

Spec files of kernel exercises import :class:`Case` (and
:data:`~.spec.TF32_TOLERANCE`, for outputs of fp32 dots, and the helpers of the
long-K cases that catch an fp16 accumulator) from :mod:`.spec`.
"""

from minitriton.course.spec import (
    TF32_TOLERANCE,
    Case,
    accumulation_tolerance,
    fp16_exact,
    fp32_matmul,
)

__all__ = ["TF32_TOLERANCE", "Case", "accumulation_tolerance", "fp16_exact", "fp32_matmul"]
