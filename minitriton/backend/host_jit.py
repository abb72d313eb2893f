"""Run LLVM that a lowering helper emits on the host, with llvmlite's MCJIT.

Helpers whose LLVM holds no PTX (bit packing, software rounding, the integer
ops of the course's exercise c6) are checked against their definition this
way, on every input that matters, without a GPU.
"""

from __future__ import annotations

from typing import Any

from llvmlite import binding as llvm
from llvmlite import ir

_ENGINES: list[object] = []  # keep the JIT engines (and their code) alive


def host_function(module: ir.Module, name: str, proto: Any) -> Any:
    """Compile ``module`` for this machine; its function ``name`` as a ``ctypes`` ``proto``."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    machine = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(parsed, machine)
    engine.finalize_object()
    _ENGINES.append(engine)
    return proto(engine.get_function_address(name))
