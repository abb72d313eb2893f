"""NumPy block emulator for MiniTriton IR (installed as ``minitriton.emulator``).

The emulator *executes the IR*, not Python source: each op's meaning is one
small function in a registry keyed by op class (``@semantics(AddOp)``), and listeners
(``will_execute_op`` / ``did_execute_op``) see every op, for tracing and
stepping. Entry point::

    from minitriton.emulator import launch
    launch(module, grid=(n_blocks, 1, 1), args=[x, y, out, n])

Building blocks for tools such as a debugger: :class:`Interpreter` (one
launch; :meth:`Interpreter.run_program` runs one program op by op),
:class:`ProgramState` (the values of one scope), :class:`Listener`.

Speed: programs whose control flow agrees run together as one batch of
NumPy operations over a leading program axis (see :mod:`.schedule`); kernels
whose programs communicate through memory run one program at a time. The
commonest offsets, masks and loads are kept in a lazy form and made into
arrays only when an op needs them (:mod:`.lanes`). Such machinery lives in
fast paths apart from the ops' plain semantics (:mod:`.speed`);
``MINITRITON_EMULATOR_PLAIN=1`` switches it off. On glibc, freed buffers
stay in the process for the next launch (:mod:`.malloc`).

Where the emulator differs from Triton on a GPU (the GPU is the reference):

* fp32 ``/`` is IEEE-exact (the GPU's ``div.full.f32`` has ~2 ULP error);
  ``exp``, ``log``, ``sin``... use NumPy, not the GPU's fast approximations;
  a mul followed by an add is never fused into an FMA.
* ``tt.dot`` on fp32 inputs reads them as TF32 the way the tensor cores of
  the modelled arch do (``input_precision="tf32"``, the default: truncation
  on sm_80 and sm_90, see :mod:`.tf32`) and accumulates in fp32 in steps of
  8 values of K, as tensor cores do; the GPU's rounding inside a step may
  differ in the last bit. ``"ieee"``, fp16 and bf16 dots are exact (fp64,
  rounded once); Triton's interpreter computes every dot exactly.
* Reductions combine neighbours in a pairwise tree; the GPU's order differs
  again, so float sums agree only to rounding.
* Integer division or remainder by zero gives 0 (undefined in Triton).
* Float -> int casts of out-of-range values saturate, as PTX ``cvt.rzi``
  does (an 8-bit result is the low byte of the saturated 16-bit one, as the
  GPU computes it), and NaN gives what an H200 gives: 0 from f32 (or
  narrower) to 32 bits or fewer, else the integer with only the sign bit set
  (``INT_MIN``, ``2**63``); Triton calls both undefined.
* Shifts by the bit width or more give 0 (or the sign for ``>>`` of
  negative signed values), as PTX does; in LLVM they are poison.
* ``arith.max``/``arith.min`` on floats ignore NaN (IEEE maxNum/minNum).
* Conversions to bf16 round to nearest even from fp32; f64 and integer
  sources go through fp32 first (two roundings).
* ``math.fma`` on f64 is not fused (the product is rounded once first).
* ``tt.print`` prints once per program, the whole block; output of a batch
  appears in grid order. ``tt.assert`` is checked only with ``debug=True``.
* Batched execution runs op by op across programs: within one store the
  highest program id wins a shared address, but a program never sees
  another's stores of the same batch in sequential order. Kernels with
  spin locks (``atomic_cas``, ``atomic_xchg``) or atomics in while loops run
  serially, where each program runs to completion before the next starts,
  unless it spins: then it gives way to the next program (see
  :mod:`minitriton.emulator.cooperative`).
* Out-of-bounds accesses on enabled lanes are errors (the GPU reads garbage
  or faults); in a batch, the first failing program in grid order of the
  first failing op is reported.
"""

from typing import Any

from minitriton.emulator import ops  # registers every op's semantics
from minitriton.emulator.errors import EmulatorError
from minitriton.emulator.interpreter import Interpreter, Listener, ProgramState
from minitriton.emulator.malloc import tune_malloc
from minitriton.emulator.registry import SEMANTICS, semantics
from minitriton.emulator.schedule import launch, run_grid, serial_reason
from minitriton.emulator.values import RVal

tune_malloc()  # freed buffers stay for the next launch (see malloc.py)

__all__ = [
    "SEMANTICS",
    "EmulatorError",
    "Interpreter",
    "Listener",
    "ProgramState",
    "RVal",
    "launch",
    "ops",
    "run_grid",
    "semantics",
    "serial_reason",
]

# The tools beside the machine (debug/: the debugger, the checks, the tracer,
# the pass checker), imported on first use.
_TOOLS = {
    "Debugger": "debug.debugger",
    "DebugValue": "debug.debugger",
    "CheckError": "debug.checks",
    "checking": "debug.checks",
    "checked_launch": "debug.checks",
    "uninitialized": "debug.checks",
    "empty": "debug.checks",
    "empty_like": "debug.checks",
    "trace": "debug.tracer",
    "check_passes": "debug.passcheck",
}


def __getattr__(name: str) -> Any:
    if name not in _TOOLS:
        raise AttributeError(f"module 'minitriton.emulator' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"minitriton.emulator.{_TOOLS[name]}"), name)
