"""Block IR -> LLVM IR -> PTX, with llvmlite only (no GPU, no CUDA needed).

:func:`compile_ir` runs the whole chain and returns a :class:`PTXModule`
holding every stage's text (``ttgir``: the IR with layouts; ``llir``; ``ptx``)
and what the launcher needs (parameter kinds, shared-memory bytes).
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

from minitriton.backend.accelerate_matmul import target_arch
from minitriton.backend.lower import LoweringContext
from minitriton.backend.lower.debug import CheckTable
from minitriton.backend.lower.math import find_libdevice
from minitriton.backend.passes.software_pipeline import defer_mode
from minitriton.backend.prepare import prepare_kernel
from minitriton.backend.target_rules import reject_unsupported
from minitriton.backend.tma import mark_grid_constants, tma_enabled, tma_stores_enabled
from minitriton.cachefile import source_stamps
from minitriton.diagnostics import CompileError, internal_error
from minitriton.ir.ops import Module
from minitriton.ir.printer import print_module
from minitriton.ir.types import PointerType
from minitriton.ir.verifier import verify_module

#: Bump when the generated code changes: it is part of every cache key.
COMPILER_VERSION = "minitriton-ptx-6"
TRIPLE = "nvptx64-nvidia-cuda"
#: Targets that ``python -m minitriton.tools.ptxas_check`` assembles every kernel for; any
#: ``sm_XY`` with XY >= 75 is accepted. sm_75 has no tensor-core path (FMA dots) and converts
#: to bf16 in software.
SUPPORTED_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_120")
_LOCK = threading.Lock()


@dataclass
class PTXModule:
    """Everything compiled for one kernel (no CUDA objects)."""

    name: str
    ttgir: str
    llir: str
    ptx: str
    shared: int
    #: The warps it is launched with: the ``num_warps`` option, plus the producer
    #: warpgroup of a warp-specialized kernel.
    num_warps: int
    arch: str
    #: One entry per kernel argument: ``"ptr"`` or a scalar type name (``"i32"``).
    params: list[str] = field(default_factory=list)
    #: The recipes of the TMA tensor maps passed after the arguments
    #: (:class:`~minitriton.backend.tma.TmaMap` as JSON).
    tma: list[dict] = field(default_factory=list)
    #: Where ``ptx`` leaves a loop's last dot in flight across the back edge, the
    #: same kernel without (its PTX and shared bytes): the launcher keeps the one
    #: that fits more programs per multiprocessor, ``ptx`` on a tie. Empty where
    #: shared memory or threads already allow one program per multiprocessor.
    alt_ptx: str = ""
    alt_shared: int = 0

    @property
    def asm(self) -> dict[str, str]:
        """The stages by name, as Triton's ``kernel.asm``."""
        return {"ttgir": self.ttgir, "llir": self.llir, "ptx": self.ptx}


@lru_cache(maxsize=1)
def _init_llvm() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@lru_cache(maxsize=8)
def _target_machine(arch: str) -> llvm.TargetMachine:
    _init_llvm()
    target = llvm.Target.from_triple(TRIPLE)
    # The oldest PTX ISA that knows the arch (sm_100 needs PTX 8.6, sm_120 PTX 8.7) and,
    # on sm_89 and sm_90, its fp8 mma.sync (PTX 8.4).
    number = int(arch[3:].rstrip("a"))
    ptx = "+ptx87" if number >= 120 else "+ptx86" if number >= 100 else "+ptx80"
    if number in (89, 90):
        ptx = "+ptx84"
    return target.create_target_machine(cpu=arch, features=ptx, opt=3)


@lru_cache(maxsize=1)
def _libdevice_bitcode() -> bytes | None:
    path = find_libdevice()
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def compile_ir(
    module: Module,
    arch: str = "sm_90",
    num_warps: int = 4,
    num_stages: int = 3,
    maxnreg: int | None = None,
) -> PTXModule:
    """Compile ``module``'s kernel to PTX for ``arch`` with ``num_warps`` warps per program.

    ``num_stages`` is the software-pipelining depth of loops feeding ``wgmma``;
    ``maxnreg``, if given, the most registers a thread may use (``.maxnreg``).
    """
    return _compile_checked(module, arch, num_warps, num_stages, False, maxnreg)[0]


def compile_ir_debug(
    module: Module,
    arch: str = "sm_90",
    num_warps: int = 4,
    num_stages: int = 3,
    maxnreg: int | None = None,
) -> tuple[PTXModule, CheckTable]:
    """As :func:`compile_ir`, in debug mode (:mod:`~minitriton.backend.lower.debug`).

    Also returns the table the host reads the error record with.
    """
    kernel, table = _compile_checked(module, arch, num_warps, num_stages, True, maxnreg)
    assert table is not None
    return kernel, table


def _compile_checked(
    module: Module, arch: str, num_warps: int, num_stages: int, debug: bool, maxnreg: int | None
) -> tuple[PTXModule, CheckTable | None]:
    if not re.fullmatch(r"sm_\d+a?", arch) or int(arch[3:].rstrip("a")) < 75:
        raise ValueError(f"unsupported arch {arch!r}: the GPU backend needs sm_75 or newer")
    if num_warps not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"num_warps must be a power of two in 1..32, got {num_warps}")
    verify_module(module)
    reject_unsupported(module, arch)
    with _LOCK:
        try:
            return _compile(module, arch, num_warps, num_stages, debug, maxnreg)
        except CompileError:
            raise
        except Exception as e:  # internal failure: report it located at the kernel
            raise internal_error(module.kernel.loc, "the GPU backend", e) from e


def _compile(
    module: Module, arch: str, num_warps: int, num_stages: int, debug: bool,
    maxnreg: int | None = None, defer: bool | None = None,
) -> tuple[PTXModule, CheckTable | None]:  # fmt: skip
    """Compile once; with ``defer`` None, as ``MINITRITON_DEFER_LAST_DOT`` says.

    Its ``auto`` setting (the default) compiles a kernel whose loop left a dot
    in flight a second time without, as :attr:`PTXModule.alt_ptx`. Debug
    mode keeps to one schedule: the deferred one only when asked for.
    """
    mode = defer_mode()
    choose = defer is None and mode == "auto" and not debug
    if defer is None:
        defer = mode == "on" or choose
    use_tma = tma_enabled() and not debug  # debug mode checks the cp.async path and every store
    stores = use_tma and tma_stores_enabled()
    copy, kernel, plan, inlined_at = prepare_kernel(
        module, num_warps, arch, num_stages, use_tma, stores, defer
    )
    maps = getattr(kernel, "tma_maps", [])
    gen = LoweringContext(
        kernel, plan, inlined_at, arch=arch, num_warps=num_warps, debug=debug, max_regs=maxnreg
    )
    ll_module = gen.generate()
    target = target_arch(arch, gen.uses_wgmma)
    tm = _target_machine(target)
    ll_module.data_layout = str(tm.target_data)
    text = str(ll_module)
    if maps:
        text = mark_grid_constants(text, kernel.sym_name)
    if gen.uses_libdevice:
        text = outline_libdevice_calls(text)
    mod = llvm.parse_assembly(text)
    if gen.uses_libdevice:
        _link_libdevice(mod, kernel.sym_name)
    mod.verify()
    _optimize(mod, tm)
    ptx = tm.emit_assembly(mod)
    params = ["ptr" if isinstance(a.type, PointerType) else str(a.type) for a in kernel.body.args]
    compiled = PTXModule(
        name=kernel.sym_name,
        ttgir=print_module(copy),
        llir=str(mod),
        ptx=ptx,
        shared=gen.smem_bytes,
        num_warps=gen.launch_warps,  # with a warp-specialized kernel's producer warps
        arch=target,
        params=params,
        tma=[m.to_json() for m in maps],
    )
    if choose and getattr(kernel, "deferred_dots", False) and _registers_may_matter(compiled):
        alt = _compile(module, arch, num_warps, num_stages, debug, maxnreg, defer=False)[0]
        compiled.alt_ptx, compiled.alt_shared = alt.ptx, alt.shared
    return compiled, gen.checks.table if gen.checks is not None else None


#: Shared memory per multiprocessor on sm_90 (where loops leave dots in flight), and
#: what the driver keeps of it per block (bytes).
SM90_SHARED, BLOCK_RESERVE = 228 << 10, 1 << 10


def _registers_may_matter(kernel: PTXModule) -> bool:
    """Whether fewer registers could fit more programs of ``kernel`` per multiprocessor.

    Not where its shared memory (the same in both schedules) or its threads
    already allow only one: then both schedules fit one, and the tie keeps
    the deferred one, so the second compile is skipped.
    """
    by_shared = SM90_SHARED // (kernel.shared + BLOCK_RESERVE)
    by_threads = 2048 // (32 * kernel.num_warps)
    return min(by_shared, by_threads) >= 2


#: Instructions that inlining libdevice may add to a kernel, per function. Past it,
#: the calls go through one out-of-line copy: a chain of 400 ``**`` on a
#: 1024-element block would otherwise inline ``__nv_powf`` 3,200 times, and LLVM
#: would spend minutes on the result. Ordinary kernels stay fully inlined.
INLINE_BUDGET = 40_000
_DECLARE = re.compile(r'^declare (\S+) @"(__nv_\w+)"\(([^)]*)\)', re.M)


def outline_libdevice_calls(text: str) -> str:
    """``text`` (a kernel's LLVM IR) with calls past :data:`INLINE_BUDGET` made out of line.

    libdevice marks its functions ``alwaysinline``, so each such function is
    called through a ``noinline`` wrapper that inlines it once.
    """
    for ret, name, params in _DECLARE.findall(text):
        call = re.compile(rf'(call [^@\n]*)@"{name}"\(')
        calls = len(call.findall(text))
        if calls < 2 or calls * libdevice_size(name) <= INLINE_BUDGET:
            continue
        types = [p.split()[0] for p in params.split(",")] if params.strip() else []
        formals = ", ".join(f"{t} %a{i}" for i, t in enumerate(types))
        actuals = ", ".join(f"{t} %a{i}" for i, t in enumerate(types))
        text = call.sub(rf'\1@"{name}_outlined"(', text)
        text += (
            f'\ndefine internal {ret} @"{name}_outlined"({formals}) noinline {{\n'
            f'  %r = call {ret} @"{name}"({actuals})\n  ret {ret} %r\n}}\n'
        )
    return text


@lru_cache(maxsize=64)
def libdevice_size(name: str) -> int:
    """Instructions in libdevice's ``name`` once its own callees are inlined (an estimate)."""
    bitcode = _libdevice_bitcode()
    if bitcode is None:
        return 0
    mod = llvm.parse_bitcode(bitcode)
    fn = mod.get_function(name)
    return sum(1 for block in fn.blocks for _ in block.instructions)


def _link_libdevice(mod: llvm.ModuleRef, kernel_name: str) -> None:
    bitcode = _libdevice_bitcode()
    if bitcode is None:
        return
    mod.link_in(llvm.parse_bitcode(bitcode))
    # Internal linkage lets the optimizer drop the hundreds of unused functions.
    for fn in mod.functions:
        if fn.name != kernel_name and not fn.is_declaration:
            fn.linkage = llvm.Linkage.internal


def _optimize(mod: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def compile_to_ptx(module: Module, arch: str = "sm_90", num_warps: int = 4) -> tuple[str, str]:
    """``(llir, ptx)`` of ``module``'s kernel; needs llvmlite only (no GPU, no CUDA)."""
    k = compile_ir(module, arch, num_warps)
    return k.llir, k.ptx


@lru_cache(maxsize=1)
def version_tag() -> str:
    """Compiler and LLVM versions, for cache keys, and the backend's own sources (the size
    and mtime of each file, as the IR cache stamps the frontend's), so that PTX cached by
    an older backend is never reused."""
    sources = sources_digest(Path(__file__).resolve().parent)
    versions = f"{COMPILER_VERSION}/llvmlite-{llvmlite.__version__}/llvm-{llvm.llvm_version_info}"
    return f"{versions}/backend-{sources[:16]}"


def sources_digest(root: Path) -> str:
    """The sha256 of the name, size and mtime of every ``.py`` file under ``root``."""
    h = hashlib.sha256()
    for stamp in source_stamps(root, (".py",), relative_to=root):
        h.update(f"{stamp}\n".encode())
    return h.hexdigest()
