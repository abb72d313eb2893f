"""Block IR -> LLVM IR: one module per op family, each op's lowering registered by its class.

Where op ``Y`` is lowered: ``LOWERINGS.lookup(YOp)`` in
:mod:`~minitriton.backend.registry` names the function, and the
function sits in the family's module:

======================  ==============================================================
module                  ops
======================  ==============================================================
:mod:`.arith`           ``arith.*`` (constants, arithmetic, compares, selects, casts),
                        ``tt.addptr``, ``tt.hint``
:mod:`.math`            ``math.*`` (``exp``, ``pow``, ``abs``, ``fma``, libdevice ...)
:mod:`.memory`          ``tt.load``, ``tt.store``, ``tt.atomic_rmw``, ``tt.atomic_cas``
:mod:`.shape`           ``tt.make_range``, ``tt.splat``, ``tt.broadcast``,
                        ``tt.expand_dims``, ``tt.reshape``, ``tt.trans``,
                        ``ttg.convert_layout``
:mod:`.reduce`          ``tt.reduce``, ``tt.scan``, ``tt.sort``
:mod:`.matrix`          ``tt.dot`` (its FMA path, and the choice of path),
                        ``ttg.local_alloc``; tensor cores in :mod:`.mma`
                        (``mma.sync``, ``ttg.local_load``) and :mod:`.wgmma`
                        (``wgmma`` and the pipelined loop's ``ttg``/``ttng`` ops),
                        TMA copies and their ``mbarrier`` waits in :mod:`.tma`
:mod:`.control`         ``scf.for``, ``scf.if``, ``scf.while``, ``tt.return``,
                        ``tt.barrier``, ``tt.get_program_id``, ``tt.get_num_programs``
:mod:`.debug`           ``tt.print``, ``tt.assert``, and debug mode's bounds checks
======================  ==============================================================

Beside them: :mod:`.context` (the typed
:class:`~minitriton.backend.lower.context.LoweringContext` every lowering
takes) and :mod:`.smem` (moving blocks between threads
through shared memory). Importing this package registers every lowering.
"""

from minitriton.backend.lower import (  # noqa: F401 - each module registers its lowerings
    arith,
    control,
    debug,
    math,
    matrix,
    memory,
    mma,
    reduce,
    shape,
    tma,
    wgmma,
)
from minitriton.backend.lower.context import LoweringContext

__all__ = ["LoweringContext"]
