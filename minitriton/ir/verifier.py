"""The IR verifier.

It checks, for every function of a module:

1. each op's own rules (``op.verify()``);
2. SSA dominance: every operand is defined earlier in the same block or in
   an enclosing block (regions see their parents' values, never the
   reverse);
3. terminators: only the last op of a block may be a terminator, and a
   function ends with ``tt.return`` of its declared result types;
4. calls name a function of the module, with matching argument and result
   types;
5. regions: an op has regions exactly when it declares the ``HasRegions``
   trait (:mod:`minitriton.ir.traits`).

Errors are :class:`~minitriton.diagnostics.CompileError` diagnostics located
at the offending op. In the tests the verifier runs after every pass.
"""

from __future__ import annotations

from minitriton.diagnostics import DiagnosticBag
from minitriton.ir.core import Block, Operation, VerifyError
from minitriton.ir.ops import CallOp, FuncOp, Module, ReturnOp
from minitriton.ir.traits import HasRegions, Terminator


def verify_module(module: Module) -> None:
    """Raise one :class:`CompileError` listing every problem found."""
    bag = DiagnosticBag()
    funcs = {f.sym_name: f for f in module.funcs}
    for func in module.funcs:
        _verify_func(func, funcs, bag)
    bag.raise_if_any()


def _verify_func(func: FuncOp, funcs: dict[str, FuncOp], bag: DiagnosticBag) -> None:
    try:
        func.verify()
        _check_return(func)
        _verify_block(func.body.block, set(), funcs)
    except VerifyError as e:
        bag.error(e.loc, f"invalid IR in @{func.sym_name}: {e}")


def _check_return(func: FuncOp) -> None:
    want = list(func.attrs.get("result_types") or [])
    for op in func.walk():
        if isinstance(op, ReturnOp) and [v.type for v in op.operands] != want:
            raise op.fail(f"returns {[str(v.type) for v in op.operands]}, expected {want}")


def _verify_block(block: Block, visible: set[int], funcs: dict[str, FuncOp]) -> None:
    visible = visible | {id(a) for a in block.args}
    for i, op in enumerate(block.ops):
        if op.has_trait(Terminator) and i != len(block.ops) - 1:
            raise op.fail("terminator in the middle of a block")
        for v in op.operands:
            if id(v) not in visible:
                raise op.fail("uses a value that is not defined before it")
        op.verify()
        if bool(op.regions) != op.has_trait(HasRegions):
            raise op.fail("has regions" if op.regions else "needs regions")
        if isinstance(op, CallOp):
            _check_call(op, funcs)
        for region in op.regions:
            _verify_block(region.block, visible, funcs)
        visible |= {id(r) for r in op.results}


def _check_call(op: Operation, funcs: dict[str, FuncOp]) -> None:
    callee = funcs.get(op.attrs["callee"])
    if callee is None:
        raise op.fail(f"calls unknown function @{op.attrs['callee']}")
    if [v.type for v in op.operands] != [a.type for a in callee.body.args]:
        raise op.fail(f"argument types do not match @{callee.sym_name}")
    if [r.type for r in op.results] != list(callee.attrs.get("result_types") or []):
        raise op.fail(f"result types do not match @{callee.sym_name}")
